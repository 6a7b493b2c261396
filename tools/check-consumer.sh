#!/usr/bin/env bash
# Checks that skv can be used from another CMake project, both ways:
#   1. `cmake --install <build>` into a scratch prefix, then tests/consumer with find_package(skv)
#   2. tests/consumer with add_subdirectory(<this checkout>)
# Each consumer opens a tree in a temp directory (default platform), commits and reads one key.
#
#   usage: tools/check-consumer.sh [build dir]      (default: build; it must be built already)
# Environment: JOBS (default 2).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(realpath -m "${1:-$ROOT/build}")
JOBS=${JOBS:-2}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
[[ -f "$BUILD/CMakeCache.txt" ]] || { echo "check-consumer: $BUILD is not a configured build" >&2; exit 1; }

OUT="$BUILD/_consumer"
PREFIX="$OUT/prefix"
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
rm -rf "$OUT"
mkdir -p "$OUT"

echo "== install into $PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" >"$OUT/install.log"
missing=0
for f in include/skv/skv.h include/skv/tree.h include/skv/status.h include/skv/memory_platform.h \
         lib/libskv_core.a lib/libskv_native.a lib/libskv_memory.a \
         lib/cmake/skv/skvConfig.cmake lib/cmake/skv/skvConfigVersion.cmake lib/cmake/skv/skvTargets.cmake; do
  if [[ ! -f "$PREFIX/$f" ]]; then echo "check-consumer: not installed: $f" >&2; missing=1; fi
done
[[ $missing -eq 0 ]] || exit 1

consumer() { # <name> <cmake args...>
  local name=$1
  shift
  echo "== consumer via $name"
  cmake -S "$ROOT/tests/consumer" -B "$OUT/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "${LAUNCHER[@]}" "$@" >"$OUT/$name.configure.log" ||
    { cat "$OUT/$name.configure.log"; return 1; }
  cmake --build "$OUT/$name" -j"$JOBS" >"$OUT/$name.build.log" ||
    { tail -50 "$OUT/$name.build.log"; return 1; }
  "$OUT/$name/skv_consumer"
}

consumer find_package -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
consumer add_subdirectory -DSKV_SOURCE_DIR="$ROOT"
echo "check-consumer: both ways ok"
