# test/fuzz/fuzz.mk - libFuzzer targets for the pure-logic modules; included
# by the top-level Makefile. What each target checks: test/fuzz/README.md.
#
#   make fuzz           build every target and fuzz each for FUZZ_SECONDS (60)
#   make fuzz-ci        the same for FUZZ_CI_SECONDS (10) each, for CI
#   make fuzz-build     build only (build/fuzz/fuzz_NAME)
#   make fuzz-regress   replay the committed corpus and crash reproducers once
#
# FUZZ_TARGETS="json env" picks targets, FUZZ_FLAGS passes
# extra libFuzzer flags (e.g. FUZZ_FLAGS=-jobs=2), FUZZ_CC another clang.
# Every name here starts with FUZZ_ or fuzz so none collides with the
# Makefile that includes this.

# Wherever this is included, it must not change the including Makefile's
# default goal: remember it here, restore it at the end.
FUZZ_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)

FUZZ_CC          ?= clang
FUZZ_SECONDS     ?= 60
FUZZ_CI_SECONDS  ?= 10
FUZZ_ALL         := json tool record sentinel capture ansi env shstate replay cgroupfs redact inert
FUZZ_TARGETS     ?= $(FUZZ_ALL)
FUZZ_OUT         := build/fuzz
FUZZ_DIR         := test/fuzz

# -O1 and frame pointers: readable sanitizer stacks at near full speed;
# -fno-sanitize-recover: a UBSan finding is a crash libFuzzer saves.
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
  -Wall -Wextra -Werror -Iinclude -iquote lib -iquote $(FUZZ_OUT) \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

# The library sources each target links: only what it tests, so coverage
# feedback is not diluted. The tool layer reaches sessions and runs, so all
# (but tool/none.c, which stands in for the tool layer in a TOOLS=0 build).
FUZZ_LIB_json     := lib/shx/json.c lib/shx/buf.c
FUZZ_LIB_tool     := $(sort $(filter-out lib/tool/none.c,$(wildcard lib/*.c lib/*/*.c)))
FUZZ_LIB_record   := lib/shell/record.c lib/shx/buf.c
FUZZ_LIB_sentinel := lib/stream/sentinel.c lib/shx/buf.c
FUZZ_LIB_capture  := lib/stream/capture.c lib/stream/notice.c lib/shx/buf.c
FUZZ_LIB_ansi     := lib/stream/ansi.c lib/shx/buf.c
FUZZ_LIB_env      := lib/shx/env.c lib/shx/glob.c
FUZZ_LIB_shstate  := lib/shell/shstate.c lib/shx/env.c lib/shx/glob.c lib/shx/buf.c
FUZZ_LIB_replay   := lib/persist/replay.c lib/shell/shstate.c lib/persist/shfuncs.c lib/shx/env.c lib/shx/glob.c lib/shx/buf.c
FUZZ_LIB_cgroupfs := lib/contain/cgroupfs.c
FUZZ_LIB_redact   := lib/output/acreplace.c lib/output/keyscan.c lib/output/pemscan.c lib/shx/buf.c
FUZZ_LIB_inert    := lib/shell/inert.c

# Bounds made small enough for the fuzzer to reach them (the library's own
# are megabytes): the record and the in-band directory at 4096 bytes.
FUZZ_DEFS_record   := -DSHX_RECORD_MAX=4096
FUZZ_DEFS_sentinel := -DSHX_SENTINEL_MAX_PATH=4096

# Longest input libFuzzer may make. The record and the sentinel need inputs
# past their 4096-byte bounds; fuzz_ansi reaches its kilobyte bounds by
# repeating a short input instead (see its header), which keeps it fast.
FUZZ_MAXLEN_json     := 8192
FUZZ_MAXLEN_tool     := 4096
FUZZ_MAXLEN_record   := 12288
FUZZ_MAXLEN_sentinel := 12288
FUZZ_MAXLEN_capture  := 4096
FUZZ_MAXLEN_ansi     := 4096
FUZZ_MAXLEN_env      := 4096
FUZZ_MAXLEN_shstate  := 4096
FUZZ_MAXLEN_replay   := 4096
FUZZ_MAXLEN_cgroupfs := 4096
FUZZ_MAXLEN_redact   := 4096
FUZZ_MAXLEN_inert    := 4096

FUZZ_BINS := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_TARGETS))
FUZZ_SPECS = $(foreach t,$(FUZZ_TARGETS),$(t):$(FUZZ_MAXLEN_$(t)))

.PHONY: fuzz fuzz-ci fuzz-build fuzz-regress fuzz-toolchain

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@sh $(FUZZ_DIR)/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_OUT) $(FUZZ_SPECS)

fuzz-ci: fuzz-build
	@sh $(FUZZ_DIR)/run.sh fuzz $(FUZZ_CI_SECONDS) $(FUZZ_OUT) $(FUZZ_SPECS)

fuzz-regress: fuzz-build
	@sh $(FUZZ_DIR)/run.sh regress $(FUZZ_OUT) $(FUZZ_TARGETS)

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev) must
# be there; say which is missing rather than fail in the middle of a link.
fuzz-toolchain:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
	  echo "fuzz: $(FUZZ_CC) not found. The fuzz targets need clang with libFuzzer:" >&2; \
	  echo "      apt-get install clang libclang-rt-14-dev   (or set FUZZ_CC)" >&2; exit 1; }
	@mkdir -p $(FUZZ_OUT)
	@printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	  > $(FUZZ_OUT)/probe.c
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $(FUZZ_OUT)/probe $(FUZZ_OUT)/probe.c \
	  >$(FUZZ_OUT)/probe.log 2>&1 || { \
	  echo "fuzz: $(FUZZ_CC) cannot link -fsanitize=fuzzer,address,undefined (see $(FUZZ_OUT)/probe.log)." >&2; \
	  echo "      On Debian bookworm: apt-get install libclang-rt-14-dev" >&2; exit 1; }

# the library's platform probe, for the fuzz compiler (lib/shx/platform.h)
$(FUZZ_OUT)/shx_config.h: lib/shx/probe.sh
	sh lib/shx/probe.sh $@ -- $(FUZZ_CC) -std=c11 -D_GNU_SOURCE

define FUZZ_RULE
$(FUZZ_OUT)/fuzz_$(1): $(FUZZ_DIR)/fuzz_$(1).c $(FUZZ_DIR)/fuzzutil.h $(FUZZ_LIB_$(1)) \
    $(wildcard lib/*.h lib/*/*.h) include/shexec.h include/shexec_tool.h $(FUZZ_OUT)/shx_config.h | fuzz-toolchain
	@mkdir -p $$(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_DEFS_$(1)) -o $$@ $(FUZZ_DIR)/fuzz_$(1).c $(FUZZ_LIB_$(1)) -lm
endef
$(foreach t,$(FUZZ_ALL),$(eval $(call FUZZ_RULE,$(t))))

.DEFAULT_GOAL := $(FUZZ_SAVED_DEFAULT_GOAL)
