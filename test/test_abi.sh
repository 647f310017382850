#!/bin/sh
# The ABI surface: the shared object exports exactly the functions listed in
# lib/libshexec.sym (each declared in include/shexec.h or include/shexec_tool.h),
# all at version SHEXEC_1.0, nothing else; each header compiles alone as C99,
# C11 and C++ with -pedantic -Werror.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
so="$top/build/libshexec.so.1.0.0"
tmp=$(mktemp -d)
fail() { echo "test_abi: $*"; echo "[  FAILED  ] 1 test(s)"; rm -rf "$tmp"; exit 1; }

[ -f "$so" ] || fail "no $so (run make)"
nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^SHEXEC_1\.0$' > "$tmp/versioned"
grep -v '@@SHEXEC_1\.0$' "$tmp/versioned" > "$tmp/bad" && fail "symbols not at SHEXEC_1.0: $(cat "$tmp/bad")"
sed 's/@@SHEXEC_1\.0$//' "$tmp/versioned" | sort > "$tmp/exported"
sort "$top/lib/libshexec.sym" > "$tmp/listed"
diff -u "$tmp/listed" "$tmp/exported" > "$tmp/diff" || fail "exports differ from lib/libshexec.sym: $(cat "$tmp/diff")"
cat "$top/include/shexec.h" "$top/include/shexec_tool.h" | grep -o 'shexec_[a-z0-9_]*(' | tr -d '(' \
    | sort -u > "$tmp/declared"
diff -u "$tmp/declared" "$tmp/listed" > "$tmp/diff" || fail "header and lib/libshexec.sym differ: $(cat "$tmp/diff")"
readelf -d "$so" | grep -q 'SONAME.*\[libshexec\.so\.1\]' || fail "SONAME is not libshexec.so.1"

printf '#include <shexec.h>\nint main(void) { return shexec_version() == 0; }\n' > "$tmp/h.c"
printf '#include <shexec_tool.h>\nint main(void) { shexec_free(0); return 0; }\n' > "$tmp/t.c"
for std in c99 c11; do
    cc -std=$std -pedantic -Wall -Wextra -Werror -I"$top/include" -c "$tmp/h.c" -o "$tmp/h.o" \
        || fail "header does not compile as $std"
    cc -std=$std -pedantic -Wall -Wextra -Werror -I"$top/include" -c "$tmp/t.c" -o "$tmp/t.o" \
        || fail "shexec_tool.h does not compile alone as $std"
done
if command -v c++ >/dev/null; then
    c++ -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$top/include" -c "$tmp/h.c" -o "$tmp/h.o" \
        || fail "header does not compile as C++"
    c++ -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$top/include" -c "$tmp/t.c" -o "$tmp/t.o" \
        || fail "shexec_tool.h does not compile as C++"
fi
rm -rf "$tmp"
echo "test_abi: $(wc -l < "$top/lib/libshexec.sym") symbols at SHEXEC_1.0, header C99/C11/C++: ok"
echo "[  PASSED  ] 1 test(s)."
