# libshexec - build, test, install, demo, bench. GNU make; no other build system.
#
#   make                 build/libshexec.so.1.0.0 (+ .so.1, .so links) and build/libshexec.a
#                        (every build product goes under build/; make check adds only what its
#                        binding suites install: test/mcp's node_modules, and under build/ the
#                        Python venv, the packed Node package, Rust's and Go's build caches;
#                        and its lock, /tmp/shexec-check.lock)
#   make check           the cmocka suite (SANITIZE=1: under ASan+UBSan; VALGRIND=1: under valgrind;
#                        PORTABLE=1: the library with every Linux-specific path compiled out;
#                        WATCHDOG=0, TOOLS=0, PERSIST=0, OUTPUT=0: the library without the watchdog,
#                        the tool layer, persisted shell state, the output filters (redaction,
#                        spill); CONTAIN=0: one that makes no cgroups;
#                        CC=clang, CC=musl-gcc: another compiler or libc, in its own build dir;
#                        one line per suite as it ends, VERBOSE=1: every suite's whole log;
#                        the suites run several at a time: CHECK_JOBS, by default make's -j N,
#                        else three times the processors; make check-build builds without running)
#   make check-musl      the cmocka suite against musl (builds cmocka for musl from Debian's source)
#   make demo            build and run examples/demo
#   make check-conformance  the MCP conformance suite against examples/shexec-mcp
#   make fuzz            libFuzzer targets, 60 s each (fuzz-ci: 10 s each; see test/fuzz/README.md)
#   make abi-check       compare the built libshexec.so.1 with the committed abi/ baseline
#   make lint            cppcheck and clang-tidy on lib/ and examples/ (fails on any finding)
#   make bench           benchmarks (they report; they never fail the build; the Rust and Go
#                        peers are built where cargo and go are installed)
#   make install         PREFIX=/usr/local DESTDIR= ; make uninstall reverses it

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR    ?=

# the version has one source, include/shexec.h; the soname follows its major
VERSION    := $(shell sed -n 's/^\#define SHEXEC_VERSION_STRING "\(.*\)"$$/\1/p' include/shexec.h)
SOMAJOR    := $(firstword $(subst ., ,$(VERSION)))
ifeq ($(VERSION),)
  $(error cannot read SHEXEC_VERSION_STRING from include/shexec.h)
endif
CC         ?= cc

WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g $(WARN)
OPT        ?= -O2
CFLAGS     ?=
LDFLAGS    ?=

ifeq ($(SANITIZE),1)
  VARIANT  := asan
  SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  OPT      := -O1
else ifeq ($(TSAN),1)
  VARIANT  := tsan
  SAN      := -fsanitize=thread
  OPT      := -O1
else
  VARIANT  := default
  SAN      :=
endif

# PORTABLE=1: the plain POSIX.1-2008 path (what a libc without Linux's and
# glibc's extensions gets): the library compiled without _GNU_SOURCE, and
# lib/shx/probe.sh told to find no pidfds, /proc or *_np. The tests stay Linux
# programs: they use /proc to check on the library from outside.
LIB_FEATURES := -D_GNU_SOURCE
PROBE_MODE :=
ifeq ($(PORTABLE),1)
  VARIANT  := $(if $(filter default,$(VARIANT)),portable,$(VARIANT)-portable)
  LIB_FEATURES := -D_POSIX_C_SOURCE=200809L
  PROBE_MODE := portable
endif
# WATCHDOG=0: the library without the host-death watchdog (lib/contain/watchdog*.c),
# to build and test the core without it; shexec_session_set_watchdog(s, 1)
# then fails with SHEXEC_ESYS and the watchdog's tests skip
ifeq ($(WATCHDOG),0)
  VARIANT  := $(if $(filter default,$(VARIANT)),nowatchdog,$(VARIANT)-nowatchdog)
  LIB_FEATURES += -DSHX_WITH_WATCHDOG=0
endif
# PERSIST=0: the library without persisted shell state (lib/persist/);
# shexec_session_set_persist_env(s, 1) then
# fails with SHEXEC_ESYS and the tests that need it skip
ifeq ($(PERSIST),0)
  VARIANT  := $(if $(filter default,$(VARIANT)),nopersist,$(VARIANT)-nopersist)
  LIB_FEATURES += -DSHX_WITH_PERSIST=0
endif
# CONTAIN=0: a library that never makes a cgroup (lib/contain/ without
# contain.c, cgroup.c, cgroupfs.c; cgtree.c stays while the watchdog does):
# every session holds its commands in process groups, as on a machine
# without cgroup v2 (the whole suite on that path; the cgroup tests skip,
# saying why, and test_cgroup, which calls the cgroup files, is left out)
ifeq ($(CONTAIN),0)
  VARIANT  := $(if $(filter default,$(VARIANT)),nocontain,$(VARIANT)-nocontain)
  LIB_FEATURES += -DSHX_WITH_CONTAIN=0
endif
# OUTPUT=0: the library without the output filters (lib/output/): no
# redaction and no spill; the setters that ask for them then fail with
# SHEXEC_ESYS, their tests skip, and test_redact, which calls the filters,
# is left out
ifeq ($(OUTPUT),0)
  VARIANT  := $(if $(filter default,$(VARIANT)),nooutput,$(VARIANT)-nooutput)
  LIB_FEATURES += -DSHX_WITH_OUTPUT=0
endif
# TOOLS=0: the library without the tool layer (lib/tool/ but none.c, in
# which shexec_tool.h's calls fail with SHEXEC_ESYS); the tool layer's
# tests are left out
ifeq ($(TOOLS),0)
  VARIANT  := $(if $(filter default,$(VARIANT)),notools,$(VARIANT)-notools)
endif
# another compiler or libc builds apart (CC=clang: build/clang, CC=musl-gcc:
# build/musl), so variants never mix objects
CC_NAME    := $(notdir $(firstword $(CC)))
CC_TAG     := $(if $(filter cc gcc,$(CC_NAME)),,$(patsubst musl-gcc,musl,$(CC_NAME)))
ifneq ($(CC_TAG),)
  VARIANT  := $(if $(filter default,$(VARIANT)),$(CC_TAG),$(VARIANT)-$(CC_TAG))
endif

B          := build/$(VARIANT)
# The sources, a folder at a time (docs/layout.md): lib/ and the core's
# folders, always; the attachments, less what a switch leaves out (the
# core reaches each through its hook header, whose stubs stand in).
# contain/: CONTAIN=0 leaves out the cgroups (cgtree.c stays while the
# watchdog does), WATCHDOG=0 the watchdog. persist/: PERSIST=0. output/:
# OUTPUT=0. tool/: TOOLS=0 builds none.c alone (shexec_tool.h's calls,
# each failing), which no other build has.
CORE_DIRS  := session run loop spawn stream shell shx
CONTAIN_OFF := $(if $(filter 0,$(CONTAIN)),lib/contain/contain.c lib/contain/cgroup%.c \
                 $(if $(filter 0,$(WATCHDOG)),lib/contain/cgtree.c)) \
               $(if $(filter 0,$(WATCHDOG)),lib/contain/watchdog%.c)
TOOL_SRCS  := $(if $(filter 0,$(TOOLS)),lib/tool/none.c,$(filter-out lib/tool/none.c,$(wildcard lib/tool/*.c)))
LIB_SRCS   := $(sort $(wildcard lib/*.c) $(foreach d,$(CORE_DIRS),$(wildcard lib/$(d)/*.c)) \
                $(filter-out $(CONTAIN_OFF),$(wildcard lib/contain/*.c)) \
                $(if $(filter 0,$(PERSIST)),,$(wildcard lib/persist/*.c)) \
                $(if $(filter 0,$(OUTPUT)),,$(wildcard lib/output/*.c)) $(TOOL_SRCS))
LIB_OBJS   := $(patsubst lib/%.c,$(B)/lib/%.o,$(LIB_SRCS))
# what lib/shx/probe.sh found for this compiler and variant (shx/platform.h includes it)
CONFIG_H   := $(B)/shx_config.h
LIB_CFLAGS := -std=c11 $(LIB_FEATURES) -g $(WARN) $(OPT) $(SAN) -fPIC -fvisibility=hidden \
  -DSHEXEC_BUILDING -Iinclude -iquote lib -iquote $(B) $(CFLAGS)

ifeq ($(VARIANT),default)
  OUT      := build
else
  OUT      := $(B)
endif
SO_REAL    := $(OUT)/libshexec.so.$(VERSION)
SO_MAJOR   := $(OUT)/libshexec.so.$(SOMAJOR)
SO_DEV     := $(OUT)/libshexec.so
STATIC     := $(OUT)/libshexec.a

# the example programs (defined before any rule names them as prerequisites)
DEMO       := build/examples/demo
POLL_HOST  := build/examples/poll_host
MCP_SERVER := build/examples/shexec-mcp

TEST_SRCS  := $(sort $(filter-out $(if $(filter 0,$(TOOLS)),test/test_tool.c) \
                $(if $(filter 0,$(CONTAIN)),test/test_cgroup.c) \
                $(if $(filter 0,$(OUTPUT)),test/test_redact.c),$(wildcard test/test_*.c)))
TEST_BINS  := $(patsubst test/%.c,$(B)/test/%,$(TEST_SRCS))
HELPER_SRCS := $(sort $(wildcard test/helpers/*.c))
HELPER_BINS := $(patsubst test/helpers/%.c,$(B)/test/helpers/%,$(HELPER_SRCS))
TEST_CFLAGS := $(BASE_CFLAGS) $(OPT) $(SAN) -Iinclude -iquote lib -iquote $(B) -iquote test \
  $(if $(filter 0,$(TOOLS)),-DSHX_TEST_NO_TOOLS) $(CFLAGS)
TEST_LIBS  := -lcmocka
# musl has no cmocka package: test/cmocka-musl.sh builds one from Debian's
# cmocka source into build/cmocka-musl (cmocka-present runs it)
CMOCKA_MUSL := build/cmocka-musl
ifeq ($(CC_TAG),musl)
  TEST_CFLAGS += -I$(CMOCKA_MUSL)/include
  TEST_LIBS  := $(CMOCKA_MUSL)/libcmocka.a
endif

.PHONY: FORCE all check check-build check-run check-musl check-conformance abi-check abi-baseline lint demo examples bench bench-peers install uninstall clean cmocka-present

all: $(SO_REAL) $(SO_MAJOR) $(SO_DEV) $(STATIC)

$(CONFIG_H): lib/shx/probe.sh
	sh lib/shx/probe.sh $@ $(PROBE_MODE) -- $(CC) -std=c11 $(LIB_FEATURES) $(SAN) $(CFLAGS) $(LDFLAGS)

$(B)/lib/%.o: lib/%.c $(CONFIG_H)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

# the libraries the probe asks for (a "/* link: ... */" line in shx_config.h)
PROBE_LIBS = $$(sed -n 's|^/\* link: \(.*\) \*/$$|\1|p' $(CONFIG_H))

$(SO_REAL): $(LIB_OBJS) lib/libshexec.map
	@mkdir -p $(@D)
	$(CC) $(SAN) -shared -Wl,-soname,libshexec.so.$(SOMAJOR) -Wl,--version-script=lib/libshexec.map \
	  -Wl,--no-undefined -o $@ $(LIB_OBJS) $(PROBE_LIBS) $(LDFLAGS)

$(SO_MAJOR): $(SO_REAL)
	ln -sf libshexec.so.$(VERSION) $@
$(SO_DEV): $(SO_MAJOR)
	ln -sf libshexec.so.$(SOMAJOR) $@

# the archive is linked with the libc it is built against (also -static,
# where libc.a has no versioned dlsym): libc_ext.c links the extensions
# directly there
ARCHIVE_OBJS := $(filter-out $(B)/lib/shx/libc_ext.o,$(LIB_OBJS)) $(B)/lib/shx/libc_ext-archive.o
$(B)/lib/shx/libc_ext-archive.o: lib/shx/libc_ext.c $(CONFIG_H)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -DSHX_ARCHIVE -MMD -MP -c $< -o $@

$(STATIC): $(ARCHIVE_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $(ARCHIVE_OBJS)

# --- tests -------------------------------------------------------------------

# everything compiled against cmocka.h waits for cmocka-present (order-only:
# it is a check, not a file), so a fresh machine gets cmocka first
$(B)/test/testutil.o: test/testutil.c test/testutil.h $(CONFIG_H) | cmocka-present
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -c $< -o $@

$(B)/test/test_%: test/test_%.c $(B)/test/testutil.o $(STATIC) | cmocka-present
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(B)/test/testutil.o $(STATIC) $(TEST_LIBS) $(LDFLAGS)

# the differential fidelity judge (test/diff/README.md), run by test_differential.sh
$(B)/test/diffrun: test/diff/diffrun.c include/shexec.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS)

# a host program on the library, which test_watchdog kills
$(B)/test/helpers/watch_host: test/helpers/watch_host.c $(STATIC) include/shexec.h lib/testhook.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS)

$(B)/test/helpers/%: test/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(OPT) -o $@ $<

# cmocka comes from Debian's libcmocka-dev: install it when we can, else say how.
# For musl, it is built from Debian's cmocka source (test/cmocka-musl.sh).
cmocka-present:
ifeq ($(CC_TAG),musl)
	@sh test/cmocka-musl.sh $(CMOCKA_MUSL) $(CC)
else
	@if [ ! -f /usr/include/cmocka.h ] && ! pkg-config --exists cmocka 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "cmocka is missing: installing libcmocka-dev"; \
	    apt-get update -qq && apt-get install -y -qq libcmocka-dev >/dev/null || exit 1; \
	  else \
	    echo "cmocka is missing. Install it with:  sudo apt-get install -y libcmocka-dev" >&2; exit 1; \
	  fi; \
	fi
endif

# the engine suites against musl (CC=musl-gcc builds in build/musl)
check-musl:
	$(MAKE) check CC=musl-gcc

# the shell-level tests (ABI surface, install, the docs' C snippets, the poll-host example) run
# in the plain variant
SCRIPT_TESTS := test/test_abi.sh test/test_layering.sh test/test_portability.sh test/test_makefile.sh test/test_install.sh \
  test/test_doc_snippets.sh test/test_poll_host.sh test/python/run.sh test/test_tool_schema.sh test/mcp/run.sh test/node/run.sh \
  test/rust/run.sh test/go/run.sh test/test_differential.sh

# what make check runs, built (without running it)
check-build: all $(TEST_BINS) $(HELPER_BINS) $(if $(filter default,$(VARIANT)),$(POLL_HOST) $(MCP_SERVER) $(B)/test/diffrun)

# The suites run CHECK_JOBS at a time (test/run-tests.sh): by default make's
# -j N, else three times the processors (most suites spend their time waiting on
# the commands they run). The longest start first, so none is left running
# by itself at the end; CHECK_ALONE runs after them, one at a time, with
# nothing else running (on the machine: test/run-tests.sh's lock). make
# check without -j builds with -j(the processors).
NPROC      := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
ifeq ($(VALGRIND),1)
  # under valgrind the cmocka suites that do the most take longest
  CHECK_FIRST := test_capture test_json test_env test_output test_hostile test_task mcp/run.sh rust/run.sh \
    node/run.sh test_tool python/run.sh test_sentinel test_run test_differential.sh go/run.sh \
    test_threads test_longrun test_wrappers test_soak test_ansi
else
  # (go and rust: their first build in a clean tree; test_capture: under the
  # sanitizers, ThreadSanitizer's most of all)
  CHECK_FIRST := test_capture mcp/run.sh go/run.sh test_soak python/run.sh rust/run.sh test_hostile node/run.sh \
    test_differential.sh test_longrun test_wrappers test_run test_trust test_task test_tool
endif
CHECK_ALONE := test_contain test_watchdog
# suites that mostly wait (on timeouts, graces and sleeping commands, or a
# soak's thousands of short commands) run as two shards at once, each half
# of the tests (test/run-tests.sh: PATH@K/N)
CHECK_SHARDED := test_soak test_hostile test_longrun
check_shards = $(foreach t,$(1),$(if $(filter $(addprefix %/,$(CHECK_SHARDED)),$(t)),$(t)@1/2 $(t)@2/2,$(t)))
# CHECK_SCRIPTS=0: the cmocka suites only, the script suites left out (CI's
# valgrind check: they run nothing under valgrind, and the plain check runs them)
CHECK_SUITES := $(TEST_BINS) $(if $(filter 0,$(CHECK_SCRIPTS)),,$(if $(filter default,$(VARIANT)),$(SCRIPT_TESTS)))
CHECK_ORDER := $(call check_shards,$(foreach n,$(CHECK_FIRST),$(filter %/$(n),$(CHECK_SUITES))) \
  $(filter-out $(foreach n,$(CHECK_FIRST) $(CHECK_ALONE),%/$(n)),$(CHECK_SUITES))) \
  --alone $(foreach n,$(CHECK_ALONE),$(filter %/$(n),$(CHECK_SUITES)))

# (make's -j N is seen in a recipe's MAKEFLAGS only)
check:
	+@jobs='$(CHECK_JOBS)'; j=; \
	  case " $$MAKEFLAGS" in *" -j"*) ;; *) j=-j$(NPROC) ;; esac; \
	  [ -n "$$jobs" ] || jobs=$$(printf '%s\n' " $$MAKEFLAGS" | sed -n 's/.* -j\([0-9][0-9]*\).*/\1/p'); \
	  $(MAKE) --no-print-directory $$j check-run CHECK_JOBS=$${jobs:-$$(($(NPROC) * 3))}

check-run: check-build
	@SHEXEC_TEST_HELPERS=$(CURDIR)/$(B)/test/helpers VALGRIND=$(VALGRIND) VERBOSE=$(VERBOSE) \
	  bash test/run-tests.sh -j $(or $(CHECK_JOBS),$(shell echo $$(($(NPROC) * 3)))) $(CHECK_ORDER)

# --- examples ----------------------------------------------------------------

EXAMPLE_CFLAGS := $(BASE_CFLAGS) $(OPT) -Iinclude

$(DEMO): examples/demo/demo.c include/shexec.h $(SO_REAL) $(SO_MAJOR) $(SO_DEV)
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< -Lbuild -lshexec -Wl,-rpath,'$$ORIGIN/..'

demo: $(DEMO)
	./$(DEMO)

$(POLL_HOST): examples/poll-host/poll_host.c include/shexec.h build/libshexec.a
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< build/libshexec.a

# the server parses and writes JSON with the library's own json.c and buf.c,
# compiled in (their symbols are not exported by libshexec.so)
MCP_SRCS := examples/shexec-mcp/shexec-mcp.c lib/shx/json.c lib/shx/buf.c
$(MCP_SERVER): $(MCP_SRCS) lib/shx/json.h lib/shx/buf.h lib/shx/utf8.h include/shexec.h include/shexec_tool.h \
  build/libshexec.a
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_CFLAGS) -iquote lib -o $@ $(MCP_SRCS) build/libshexec.a -lm

examples: $(DEMO) $(POLL_HOST) $(MCP_SERVER)

# the MCP conformance suite against shexec-mcp (Node 22 and the suite come from npm)
check-conformance: $(MCP_SERVER)
	sh test/mcp/conformance/run.sh

# --- benchmarks --------------------------------------------------------------

# one driver (bench/*.c) against the static library, plus the helper programs
# it runs (bench/helpers/*.c); BENCH_QUICK=1 in the environment: smoke run.
# The linker wraps poll and ppoll (bench/waiting.c counts the library's calls)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_HELPERS := $(patsubst bench/helpers/%.c,build/bench/%,$(sort $(wildcard bench/helpers/*.c)))

build/bench/shexec_bench: $(BENCH_SRCS) bench/bench.h include/shexec.h build/libshexec.a
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -O2 -Iinclude -o $@ $(BENCH_SRCS) build/libshexec.a -lm \
	  -Wl,--wrap=poll -Wl,--wrap=ppoll

build/bench/%: bench/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -O2 -o $@ $<

# the compiled peers (rows 1r, 1g, 2r, 2g): Rust's std::process::Command and
# the Rust binding, Go's os/exec and the Go binding; each built where its
# toolchain is installed (Debian's first: /usr/bin/cargo, /usr/bin/go), its
# rows skipped otherwise. A peer that fails to build with its toolchain there
# is an error. Their outputs stay under build/bench.
BENCH_CARGO = $(firstword $(wildcard /usr/bin/cargo) $(shell command -v cargo 2>/dev/null))
BENCH_RUSTC = $(firstword $(wildcard /usr/bin/rustc) $(shell command -v rustc 2>/dev/null))
BENCH_GOBIN = $(firstword $(wildcard /usr/bin/go) $(shell command -v go 2>/dev/null))
bench-peers: all
	@mkdir -p build/bench
	@if [ -n "$(BENCH_CARGO)" ]; then \
	  RUSTC=$(BENCH_RUSTC) CARGO_TARGET_DIR=$(CURDIR)/build/bench/rust $(BENCH_CARGO) build --quiet --offline --release \
	    --manifest-path bench/peers/rust/Cargo.toml && \
	  cp build/bench/rust/release/shexec-bench-peer-rust build/bench/peer-rust; \
	else echo "bench: no cargo: rows 1r and 2r are skipped"; rm -f build/bench/peer-rust; fi
	@if [ -n "$(BENCH_GOBIN)" ]; then \
	  cd bench/peers/go && GOPATH=$(CURDIR)/build/go/path GOCACHE=$(CURDIR)/build/go/cache \
	    GOTOOLCHAIN=local GOFLAGS=-buildvcs=false $(BENCH_GOBIN) build -o $(CURDIR)/build/bench/peer-go .; \
	else echo "bench: no go: rows 1g and 2g are skipped"; rm -f build/bench/peer-go; fi

bench: all build/bench/shexec_bench $(BENCH_HELPERS) bench-peers
	build/bench/shexec_bench

# --- ABI -------------------------------------------------------------------------

# abi/libshexec.abi is the committed ABI of libshexec.so.1 (abidw, public types
# only), taken at 1.0. abi-check allows additions only: abidiff's status 4
# (a compatible change: functions added) passes, anything incompatible (a
# function removed or changed, bit 8) or an abidiff failure fails. An added
# function is recorded by make abi-baseline in the commit that adds it.
ABIDW_FLAGS := --no-corpus-path --headers-dir include --drop-private-types

abi-check: $(SO_REAL)
	@command -v abidiff >/dev/null || { echo "abidiff not found: apt-get install abigail-tools" >&2; exit 1; }
	@abidiff --headers-dir2 include --drop-private-types abi/libshexec.abi $(SO_REAL); rc=$$?; \
	  if [ $$rc -eq 0 ]; then echo "abi-check: libshexec.so.1 matches abi/libshexec.abi"; \
	  elif [ $$rc -eq 4 ]; then echo "abi-check: libshexec.so.1 adds to abi/libshexec.abi (compatible)"; \
	  else echo "abi-check: incompatible with abi/libshexec.abi (abidiff status $$rc)" >&2; exit 1; fi

abi-baseline: $(SO_REAL)
	@mkdir -p abi
	abidw $(ABIDW_FLAGS) --out-file abi/libshexec.abi $(SO_REAL)

# --- lint --------------------------------------------------------------------

# cppcheck, then clang-tidy (its checks, and why some are left out: .clang-tidy)
# on the library's sources; any finding fails. A deliberate exception is marked in the code,
# NOLINT(check) or cppcheck-suppress, with its reason. clang-tidy's "N warnings
# generated." lines count what it hid in system headers, so they are dropped.
LINT_DEFS := -D_GNU_SOURCE -DSHEXEC_BUILDING -Iinclude -I$(B)
EXAMPLE_SRCS := $(sort $(wildcard examples/*/*.c))
CPPCHECK_FLAGS := --enable=warning,performance,portability,style --std=c11 --inline-suppr \
  --quiet --error-exitcode=1

lint: $(CONFIG_H)
	@command -v cppcheck >/dev/null && command -v clang-tidy >/dev/null || \
	  { echo "install cppcheck clang-tidy" >&2; exit 1; }
	cppcheck $(CPPCHECK_FLAGS) $(LINT_DEFS) -Ilib lib/
	cppcheck $(CPPCHECK_FLAGS) -D_GNU_SOURCE -Iinclude -Ilib $(EXAMPLE_SRCS)
	@echo "clang-tidy --quiet lib/**/*.c examples/*/*.c -- -std=c11 $(LINT_DEFS) -iquote lib"; \
	out=$$(clang-tidy --quiet --warnings-as-errors='*' $(LIB_SRCS) $(EXAMPLE_SRCS) -- -std=c11 \
	  $(LINT_DEFS) -iquote lib 2>&1); \
	rc=$$?; printf '%s\n' "$$out" | grep -v -e '^[0-9]* warnings\{0,1\} generated\.$$' -e '^$$'; \
	exit $$rc

# --- install -----------------------------------------------------------------

# written on every install (`make install PREFIX=/a` after an earlier build
# must not install the earlier prefix), replaced only when its text changes
build/shexec.pc: pkgconfig/shexec.pc.in Makefile FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	    -e 's|@VERSION@|$(VERSION)|g' $< > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:

install: all build/shexec.pc
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 include/shexec.h $(DESTDIR)$(INCLUDEDIR)/shexec.h
	install -m 644 include/shexec_tool.h $(DESTDIR)$(INCLUDEDIR)/shexec_tool.h
	install -m 755 build/libshexec.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libshexec.so.$(VERSION)
	ln -sf libshexec.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libshexec.so.$(SOMAJOR)
	ln -sf libshexec.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libshexec.so
	install -m 644 build/libshexec.a $(DESTDIR)$(LIBDIR)/libshexec.a
	install -m 644 build/shexec.pc $(DESTDIR)$(PKGCONFIGDIR)/shexec.pc
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/shexec.h $(DESTDIR)$(INCLUDEDIR)/shexec_tool.h \
	  $(DESTDIR)$(LIBDIR)/libshexec.so.$(VERSION) \
	  $(DESTDIR)$(LIBDIR)/libshexec.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libshexec.so \
	  $(DESTDIR)$(LIBDIR)/libshexec.a $(DESTDIR)$(PKGCONFIGDIR)/shexec.pc
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(B)/lib/shx/libc_ext-archive.d

# fuzz, fuzz-ci, fuzz-build, fuzz-regress (libFuzzer, clang)
include test/fuzz/fuzz.mk
