#!/bin/sh
# make install into a staging DESTDIR, build a program outside the tree with
# pkg-config, run it against the installed library, then make uninstall and
# check nothing is left. Prints one cmocka-style summary line.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
app=$(mktemp -d)
fail() { echo "test_install: $*"; echo "[  FAILED  ] 1 test(s)"; rm -rf "$stage" "$app"; exit 1; }

make -s -C "$top" install DESTDIR="$stage" PREFIX=/usr/local >/dev/null || fail "make install failed"
for f in include/shexec.h include/shexec_tool.h lib/libshexec.so.1.0.0 lib/libshexec.so.1 lib/libshexec.so lib/libshexec.a lib/pkgconfig/shexec.pc; do
    [ -e "$stage/usr/local/$f" ] || fail "missing $f"
done
[ "$(readlink "$stage/usr/local/lib/libshexec.so.1")" = libshexec.so.1.0.0 ] || fail "bad .so.1 link"
soname=$(readelf -d "$stage/usr/local/lib/libshexec.so.1.0.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libshexec.so.1 ] || fail "SONAME is '$soname'"

cat > "$app/app.c" <<'C'
#include <shexec_tool.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    shexec_session *s; shexec_run *r;
    if (shexec_session_new(&s) || shexec_run_new(&r, s, "echo installed; exit 5")) return 1;
    if (shexec_tool_set_enabled(s, "bash", 1) || !shexec_tool_is_enabled(s, "bash")) return 4;
    if (shexec_run_exec(r)) return 2;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    int ok = strcmp(out, "installed\n") == 0 && shexec_run_exit_code(r) == 5;
    printf("%s %s", shexec_version(), out);
    shexec_run_free(r); shexec_session_free(s);
    return ok ? 0 : 3;
}
C
export PKG_CONFIG_PATH="$stage/usr/local/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$stage"
flags=$(pkg-config --cflags --libs shexec) || fail "pkg-config does not know shexec"
cc -o "$app/app" "$app/app.c" $flags || fail "cannot build against the installed library"
out=$(LD_LIBRARY_PATH="$stage/usr/local/lib" "$app/app") || fail "installed program failed: $out"
[ "$out" = "1.0.0 installed" ] || fail "unexpected output '$out'"
# the program really used the shared library
LD_LIBRARY_PATH="$stage/usr/local/lib" ldd "$app/app" | grep -q "$stage/usr/local/lib/libshexec.so.1" \
    || fail "not linked against the installed libshexec.so.1"

# a fully static program: the archive needs nothing libc.a lacks
sflags=$(pkg-config --static --cflags --libs shexec) || fail "pkg-config --static fails"
if ls /usr/lib/libc.a /usr/lib/*/libc.a >/dev/null 2>&1; then  # libc6-dev has it
    cc -static -o "$app/app-static" "$app/app.c" $sflags 2>"$app/static.log" \
        || fail "static link fails: $(cat "$app/static.log")"
    out=$("$app/app-static") || fail "static program failed: $out"
    [ "$out" = "1.0.0 installed" ] || fail "static program printed '$out'"
fi

make -s -C "$top" uninstall DESTDIR="$stage" PREFIX=/usr/local >/dev/null || fail "make uninstall failed"
left=$(find "$stage" -type f -o -type l)
[ -z "$left" ] || fail "uninstall left: $left"

# another prefix after the first install: the .pc names the new one, and a
# program linked with its libdir as rpath runs without LD_LIBRARY_PATH
make -s -C "$top" install DESTDIR="$stage" PREFIX=/opt/shexec >/dev/null || fail "make install PREFIX=/opt/shexec failed"
export PKG_CONFIG_PATH="$stage/opt/shexec/lib/pkgconfig"
grep -qx 'prefix=/opt/shexec' "$stage/opt/shexec/lib/pkgconfig/shexec.pc" \
    || fail "shexec.pc names another prefix: $(grep prefix= "$stage/opt/shexec/lib/pkgconfig/shexec.pc")"
libdir=$(pkg-config --variable=libdir shexec)
[ "$libdir" = "$stage/opt/shexec/lib" ] || fail "pkg-config libdir is '$libdir'"
cc -o "$app/app-rpath" "$app/app.c" $(pkg-config --cflags --libs shexec) -Wl,-rpath,"$libdir" \
    || fail "cannot build against the library in /opt/shexec"
out=$(env -u LD_LIBRARY_PATH "$app/app-rpath") || fail "rpath program failed: $out"
[ "$out" = "1.0.0 installed" ] || fail "rpath program printed '$out'"
make -s -C "$top" uninstall DESTDIR="$stage" PREFIX=/opt/shexec >/dev/null || fail "make uninstall PREFIX=/opt/shexec failed"
left=$(find "$stage" -type f -o -type l)
[ -z "$left" ] || fail "uninstall left: $left"
rm -rf "$stage" "$app"
echo "test_install: install, pkg-config build (shared, static, another prefix with rpath), run, uninstall: ok"
echo "[  PASSED  ] 1 test(s)."
