#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine to build and test skv, then builds it.
#
#   tools/setup.sh            install packages (as root, or through sudo), configure and build
#                             into ./build (RelWithDebInfo, Ninja, ccache)
#   tools/setup.sh --native   the same for the C++ library and the skv tool alone: only the
#                             packages the native build and its tests need (no Emscripten, no
#                             Chromium, no Node.js), then the same ./build
#   SKV_SETUP_NO_BUILD=1      install packages only
#
# Packages: the native toolchain (cmake, ninja, ccache, pkg-config), zstd and libsodium, Catch2 v2,
# clang-format, Emscripten (em++ 3.1.6) with dpkg-dev, which tools/build-wasm-deps.sh uses to
# build zstd and libsodium for wasm32 from Debian's source packages, and Chromium, which the
# browser tests drive through playwright-core (npm ci installs that).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

MODE=${1:-all}
case "$MODE" in all | --native) ;; *) echo "usage: $0 [--native]" >&2; exit 2 ;; esac

NATIVE_PACKAGES=(build-essential cmake ninja-build pkg-config ccache git
                 libzstd-dev libsodium-dev libssl-dev catch2 libcli11-dev
                 libsnappy-dev zlib1g-dev libbz2-dev liblz4-dev libxxhash-dev
                 librocksdb-dev)
PACKAGES=("${NATIVE_PACKAGES[@]}" clang-format
          emscripten nodejs dpkg-dev xz-utils clang-14 libclang-rt-14-dev llvm-14
          chromium xxhash)
[[ $MODE == --native ]] && PACKAGES=("${NATIVE_PACKAGES[@]}")

"$ROOT/tools/install-packages.sh" setup "${PACKAGES[@]}"

[[ -n "${SKV_SETUP_NO_BUILD:-}" ]] && exit 0
cd "$ROOT"
export CCACHE_DIR=${CCACHE_DIR:-$ROOT/build/.ccache}
cmake -S . -B build -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build -j"${JOBS:-2}"
echo "[setup] built: build/skv (try: build/skv demo /tmp/skv-demo)"
if [[ $MODE == --native ]]; then
  echo "[setup] next: ctest --test-dir build -j${JOBS:-2} (the native tests), or" \
       "cmake --install build --prefix <dir> for the library, headers, CMake package and skv.pc"
fi
