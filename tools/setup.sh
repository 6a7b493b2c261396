#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine to build and test skv, then builds it.
#
#   tools/setup.sh            install packages (as root, or through sudo), configure and build
#                             into ./build (RelWithDebInfo, Ninja, ccache)
#   SKV_SETUP_NO_BUILD=1      install packages only
#
# Packages: the native toolchain (cmake, ninja, ccache, pkg-config), zstd and libsodium, Catch2 v2,
# clang-format, Emscripten (em++ 3.1.6) with dpkg-dev, which tools/build-wasm-deps.sh uses to
# build zstd and libsodium for wasm32 from Debian's source packages, and Chromium, which the
# browser tests drive through playwright-core (npm ci installs that).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PACKAGES=(build-essential cmake ninja-build pkg-config ccache git
          libzstd-dev libsodium-dev catch2 libcli11-dev clang-format
          emscripten nodejs dpkg-dev xz-utils clang-14 libclang-rt-14-dev llvm-14
          chromium)

"$ROOT/tools/install-packages.sh" setup "${PACKAGES[@]}"

[[ -n "${SKV_SETUP_NO_BUILD:-}" ]] && exit 0
cd "$ROOT"
export CCACHE_DIR=${CCACHE_DIR:-$ROOT/build/.ccache}
cmake -S . -B build -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build -j"${JOBS:-2}"
echo "[setup] built: build/skv (try: build/skv demo /tmp/skv-demo)"
