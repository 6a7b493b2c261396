#!/usr/bin/env bash
# Builds the wasm32 static libraries skv needs (zstd, libsodium) from Debian bookworm source
# packages, with plain emcc + emar: no autotools, no configure step, no node while building.
#
#   usage: tools/build-wasm-deps.sh <prefix>        (cmake/SkvDeps.cmake passes <build>/_deps/wasm)
#
# Result: <prefix>/lib/{libzstd.a,libsodium.a}, <prefix>/include/{zstd.h,zstd_errors.h,zdict.h,
#         sodium.h,sodium/} and <prefix>/STAMP (hash of this script + versions).
#
# Environment:
#   WASM_DEPS_CACHE  folder shared by build folders (default ~/.cache/skv/wasm-deps; set it empty
#                    to disable). A finished prefix is published there under <script hash>-emcc<v>
#                    and restored from there in well under a second.
#   WASM_DEPS_SRC    folder holding libzstd_* / libsodium_* (.dsc, .orig.tar.*, .debian.tar.xz)
#                    to build offline instead of downloading.
#   JOBS             parallel emcc processes (default 2).
#
# Only 'bookworm main' is used as a source list: debian-security source files are not reachable
# through the mirror CI sees, so the wasm zstd is the -5 revision (see docs in the README).
# Changing this file changes its hash, which invalidates both the stamp and the cache key.
set -euo pipefail

PREFIX=$(realpath -m "${1:?usage: $0 <prefix>}")
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}   # Debian emcc's acorn optimizer needs it
JOBS=${JOBS:-2}
CACHE=${WASM_DEPS_CACHE-$HOME/.cache/skv/wasm-deps}
SELF_HASH=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)

have_prefix() {
  [[ -f "$1/STAMP" && -f "$1/lib/libzstd.a" && -f "$1/lib/libsodium.a" ]] &&
    grep -q "^script=$SELF_HASH\$" "$1/STAMP"
}

if have_prefix "$PREFIX"; then
  echo "[wasm-deps] up to date in $PREFIX"
  exit 0
fi
command -v emcc >/dev/null || { echo "[wasm-deps] emcc not found (tools/setup.sh installs emscripten)" >&2; exit 1; }
KEY="$SELF_HASH-emcc$(emcc -dumpversion)"
if [[ -n "$CACHE" ]] && have_prefix "$CACHE/$KEY"; then
  rm -rf "$PREFIX"
  mkdir -p "$(dirname "$PREFIX")"
  cp -a "$CACHE/$KEY" "$PREFIX"
  echo "[wasm-deps] restored from $CACHE/$KEY"
  exit 0
fi
command -v dpkg-source >/dev/null || { echo "[wasm-deps] dpkg-source not found (apt-get install dpkg-dev)" >&2; exit 1; }

# Build in a scratch folder beside the prefix; the prefix only appears once complete.
mkdir -p "$(dirname "$PREFIX")"
WORK=$(mktemp -d "$PREFIX.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT="$WORK/out"
mkdir -p "$OUT"/{lib,include} "$WORK"/{src,obj/zstd,obj/sodium,apt/lists/partial,apt/cache}
T0=$SECONDS
step() { echo "[wasm-deps] $1: $((SECONDS - T0))s"; T0=$SECONDS; }

# 1. Source packages, fetched with a private sources list (the system's apt setup is untouched).
cd "$WORK/src"
if [[ -n "${WASM_DEPS_SRC:-}" ]]; then
  cp "$WASM_DEPS_SRC"/libzstd_* "$WASM_DEPS_SRC"/libsodium_* .
else
  echo 'deb-src http://deb.debian.org/debian bookworm main' >"$WORK/apt/sources.list"
  APT=(-o Dir::Etc::SourceList="$WORK/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
       -o Dir::State::Lists="$WORK/apt/lists" -o Dir::Cache="$WORK/apt/cache"
       -o APT::Sandbox::User=root)
  apt-get "${APT[@]}" -qq update
  apt-get "${APT[@]}" -qq source --download-only libzstd libsodium
fi
# dpkg-source applies Debian's patches. Without a Debian keyring it warns that it cannot check
# the signature; apt already checked the files' hashes against the signed release file.
dpkg-source -q -x libzstd_*.dsc zstd >/dev/null 2>&1
dpkg-source -q -x libsodium_*.dsc sodium >/dev/null 2>&1
ZV=$(basename libzstd_*.dsc .dsc | cut -d_ -f2)
SV=$(basename libsodium_*.dsc .dsc | cut -d_ -f2)
step "sources (libzstd $ZV, libsodium $SV)"

# 2. zstd: the compress/decompress/common sources; no assembly, no threads, no legacy formats.
Z="$WORK/src/zstd/lib"
ZFLAGS="-O2 -DNDEBUG -DZSTD_DISABLE_ASM -DZSTD_MULTITHREAD=0 -DZSTD_LEGACY_SUPPORT=0 -I$Z -I$Z/common"
ls "$Z"/common/*.c "$Z"/compress/*.c "$Z"/decompress/*.c |
  xargs -P "$JOBS" -I{} sh -c 'emcc '"$ZFLAGS"' -c "$1" -o "'"$WORK"'/obj/zstd/$(basename "$1" .c).o"' _ {}
emar rcs "$OUT/lib/libzstd.a" "$WORK"/obj/zstd/*.o
cp "$Z"/zstd.h "$Z"/zstd_errors.h "$Z"/zdict.h "$OUT/include/"
step "zstd ($(ls "$WORK"/obj/zstd/*.o | wc -l) files)"

# 3. libsodium: every source but the OS random sources (emscripten gets randomness from JS),
#    with the defines its configure script produces for emscripten with --disable-asm.
S="$WORK/src/sodium"
L="$S/src/libsodium"
G="$WORK/obj/sodium/gen"
mkdir -p "$G/sodium"
ac_value() { sed -n "s/^$1=//p" "$S/configure.ac"; }
sed -e "s/@VERSION@/$(sed -n 's/^AC_INIT(\[libsodium\],\[\([^]]*\)\].*/\1/p' "$S/configure.ac")/" \
    -e "s/@SODIUM_LIBRARY_VERSION_MAJOR@/$(ac_value SODIUM_LIBRARY_VERSION_MAJOR)/" \
    -e "s/@SODIUM_LIBRARY_VERSION_MINOR@/$(ac_value SODIUM_LIBRARY_VERSION_MINOR)/" \
    -e "s/@SODIUM_LIBRARY_MINIMAL_DEF@//" "$L/include/sodium/version.h.in" >"$G/sodium/version.h"
SFLAGS="-O2 -DNDEBUG -fvisibility=hidden -fno-strict-aliasing -fno-strict-overflow \
 -DCONFIGURED=1 -DNATIVE_LITTLE_ENDIAN=1 -DCPU_UNALIGNED_ACCESS=1 -DHAVE_ATOMIC_OPS=1 -DHAVE_INLINE_ASM=1 \
 -DHAVE_ALLOCA_H=1 -DHAVE_ALLOCA=1 -DHAVE_POSIX_MEMALIGN=1 -DHAVE_GETPID=1 -DHAVE_NANOSLEEP=1 \
 -DHAVE_EXPLICIT_BZERO=1 -DHAVE_SYS_MMAN_H=1 -DHAVE_C_VARARRAYS=1 -DHAVE_STDINT_H=1 -DHAVE_INTTYPES_H=1 \
 -DHAVE_UNISTD_H=1 -D_GNU_SOURCE=1 -I$G/sodium -I$L/include/sodium -I$L/include"
# Objects are numbered: libsodium repeats some file names in different folders.
find "$L" -name '*.c' ! -path '*/randombytes/sysrandom/*' ! -path '*/randombytes/internal/*' | sort |
  awk '{n=$0; sub(/.*\//,"",n); sub(/\.c$/,"",n); print $0, NR "-" n ".o"}' |
  xargs -P "$JOBS" -n 2 sh -c 'emcc '"$SFLAGS"' -c "$0" -o "'"$WORK"'/obj/sodium/$1"'
emar rcs "$OUT/lib/libsodium.a" "$WORK"/obj/sodium/*.o
cp -r "$L/include/sodium.h" "$L/include/sodium" "$OUT/include/"
rm -f "$OUT/include/sodium/version.h.in"
cp "$G/sodium/version.h" "$OUT/include/sodium/"
step "libsodium ($(ls "$WORK"/obj/sodium/*.o | wc -l) files)"

printf 'script=%s\nzstd=%s\nlibsodium=%s\nemcc=%s\n' "$SELF_HASH" "$ZV" "$SV" \
  "$(emcc -dumpversion)" >"$OUT/STAMP"
cd /
rm -rf "$PREFIX"
mv -T "$OUT" "$PREFIX"
if [[ -n "$CACHE" ]]; then # publish atomically; a concurrent publisher of the same key wins
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.tmp.XXXXXX")
  cp -a "$PREFIX/." "$tmp/"
  mv -T "$tmp" "$CACHE/$KEY" 2>/dev/null || rm -rf "$tmp"
fi
echo "[wasm-deps] built into $PREFIX"
cat "$PREFIX/STAMP"
