#!/usr/bin/env bash
# Checks that skv can be used from another project, every supported way:
#   1. `cmake --install <build>` into a scratch prefix; every installed file must be in the
#      package's folders (headers only under include/skv/)
#   2. tests/consumer with find_package(skv) against that prefix
#   3. tests/consumer with add_subdirectory(<this checkout>)
#   4. tests/consumer compiled by hand with `pkg-config --cflags --libs skv` (the installed skv.pc)
#   5. examples/cpp (the README's hello program) with find_package(skv), built and run
# Each consumer opens a tree in a temp directory (default platform), commits and reads back.
#
#   usage: tools/check-consumer.sh [build dir]      (default: build; it must be built already)
# Environment: JOBS (default 2), CXX (default: the build's C++ compiler) for the pkg-config build.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(realpath -m "${1:-$ROOT/build}")
JOBS=${JOBS:-2}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
[[ -f "$BUILD/CMakeCache.txt" ]] || { echo "check-consumer: $BUILD is not a configured build" >&2; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
LIBDIR=$(cache CMAKE_INSTALL_LIBDIR)
LIBDIR=${LIBDIR:-lib}
CXX=${CXX:-$(cache CMAKE_CXX_COMPILER)}
CXX=${CXX:-c++}

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
         include/skv/fake_clock.h \
         "$LIBDIR/libskv_core.a" "$LIBDIR/libskv_native.a" "$LIBDIR/libskv_memory.a" \
         "$LIBDIR/cmake/skv/skvConfig.cmake" "$LIBDIR/cmake/skv/skvConfigVersion.cmake" \
         "$LIBDIR/cmake/skv/skvTargets.cmake" "$LIBDIR/pkgconfig/skv.pc" share/doc/skv/LICENSE; do
  if [[ ! -f "$PREFIX/$f" ]]; then echo "check-consumer: not installed: $f" >&2; missing=1; fi
done
# Nothing outside the package's folders: headers under include/skv/, the libraries directly in
# the library folder, the CMake package, skv.pc, programs, and share/ (the license).
while IFS= read -r f; do
  case "$f" in
    include/skv/*.h | "$LIBDIR"/libskv_*.a | "$LIBDIR"/cmake/skv/* | "$LIBDIR"/pkgconfig/skv.pc | bin/* | share/*) ;;
    *) echo "check-consumer: installed outside the package's folders: $f" >&2; missing=1 ;;
  esac
done < <(cd "$PREFIX" && find . -type f -o -type l | sed 's|^\./||' | sort)
[[ $missing -eq 0 ]] || exit 1

cmake_consumer() { # <name> <source dir> <program and arguments> -- <cmake args...>
  local name=$1 src=$2
  shift 2
  local run=()
  while [[ $1 != -- ]]; do run+=("$1"); shift; done
  shift
  echo "== $name"
  cmake -S "$src" -B "$OUT/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "${LAUNCHER[@]}" "$@" >"$OUT/$name.configure.log" ||
    { cat "$OUT/$name.configure.log"; return 1; }
  cmake --build "$OUT/$name" -j"$JOBS" >"$OUT/$name.build.log" ||
    { tail -50 "$OUT/$name.build.log"; return 1; }
  "$OUT/$name/${run[0]}" "${run[@]:1}"
}

cmake_consumer find_package "$ROOT/tests/consumer" skv_consumer -- \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
cmake_consumer add_subdirectory "$ROOT/tests/consumer" skv_consumer -- -DSKV_SOURCE_DIR="$ROOT"

echo "== pkg-config"
# Only the scratch prefix's skv.pc (zstd's and libsodium's come from the system's own path).
export PKG_CONFIG_PATH="$PREFIX/$LIBDIR/pkgconfig"
read -ra PC_FLAGS < <(pkg-config --cflags --libs skv)
echo "pkg-config --cflags --libs skv: ${PC_FLAGS[*]}"
"$CXX" -std=c++20 -O1 -o "$OUT/pkg_config_consumer" \
  "$ROOT/tests/consumer/main.cpp" "$ROOT/tests/consumer/memory_header.cpp" "${PC_FLAGS[@]}" \
  >"$OUT/pkg_config.build.log" 2>&1 || { tail -50 "$OUT/pkg_config.build.log"; exit 1; }
"$OUT/pkg_config_consumer"

cmake_consumer example_hello "$ROOT/examples/cpp" hello "$OUT/hello-db" -- \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
echo "check-consumer: find_package, add_subdirectory, pkg-config and examples/cpp ok"
