#!/bin/sh
# cmocka-musl.sh DIR CC - cmocka for the musl test build: Debian packages
# cmocka for glibc only, so its source package is fetched with apt (the
# machine's own Debian sources, as deb-src, in a private apt state under
# DIR: the system's apt configuration is not touched) and src/cmocka.c is
# compiled with CC into DIR/libcmocka.a, with DIR/include/cmocka.h beside
# it. Nothing is done when DIR/libcmocka.a is there.
set -eu
dir=$1
cc=$2
[ -f "$dir/libcmocka.a" ] && [ -f "$dir/include/cmocka.h" ] && exit 0
command -v apt-get >/dev/null || { echo "cmocka-musl: needs apt-get (Debian) to fetch cmocka's source" >&2; exit 1; }
mkdir -p "$dir/apt/parts" "$dir/apt/lists/partial" "$dir/src"
dir=$(cd "$dir" && pwd)
found=0
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" >"$dir/apt/parts/$(basename "$f")"
    found=1
done
if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$dir/apt/parts/sources.list"
    found=1
fi
[ "$found" = 1 ] || { echo "cmocka-musl: no Debian apt sources found" >&2; exit 1; }
apt_opts="-o Dir::Etc::SourceParts=$dir/apt/parts -o Dir::Etc::SourceList=/dev/null \
  -o Dir::State::Lists=$dir/apt/lists -o Debug::NoLocking=1"
echo "cmocka-musl: fetching Debian's cmocka source"
# shellcheck disable=SC2086
apt-get -qq $apt_opts update >/dev/null
# shellcheck disable=SC2086
(cd "$dir/src" && apt-get -qq $apt_opts source --download-only cmocka >/dev/null 2>&1)
orig=$(ls "$dir"/src/cmocka_*.orig.tar.* | head -n 1)
tar -xf "$orig" -C "$dir/src"
top=$(ls -d "$dir"/src/cmocka-*/ | head -n 1)
mkdir -p "$dir/include"
cp "$top/include/cmocka.h" "$dir/include/"
# what cmocka's CMake checks find on Linux (config.h.cmake), given directly
$cc -std=gnu99 -O1 -D_GNU_SOURCE -DHAVE_SIGNAL_H -DHAVE_INTTYPES_H -DHAVE_STRINGS_H \
    -DHAVE_STRUCT_TIMESPEC -DHAVE_CLOCK_REALTIME -DHAVE_SIGLONGJMP -DHAVE_STRSIGNAL \
    -DHAVE_GCC_THREAD_LOCAL_STORAGE -I"$top/include" -c "$top/src/cmocka.c" -o "$dir/cmocka.o"
ar rcs "$dir/libcmocka.a" "$dir/cmocka.o"
echo "cmocka-musl: built $dir/libcmocka.a from $(basename "$orig")"
