#!/usr/bin/env bash
# Builds the browser package (`npm run build`): configures ./build-wasm with Debian's Emscripten
# (zstd and libsodium for wasm32 come from tools/build-wasm-deps.sh, cached in the build folder),
# builds the skv_web target and leaves skv-core.mjs + skv-core.wasm in web/dist/, next to the
# package's JavaScript (web/src). `npm pack` then makes the tarball.
#
#   tools/build-web.sh            build (BUILD_DIR overrides ./build-wasm, JOBS the parallelism)
#   SKV_WEB_PROFILING=1 tools/build-web.sh   the same, keeping wasm function names for profiles
#                                 (npm run bench:web -- --profile PHASE); build again without it
#                                 before packing
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build-wasm}
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}   # Debian emcc's optimizer needs it
command -v emcmake >/dev/null || { echo "build-web: emcmake not found (run tools/setup.sh)" >&2; exit 1; }
LAUNCH=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$ROOT/$BUILD_DIR/.ccache}
  LAUNCH=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
case "${SKV_WEB_PROFILING:-0}" in
  0|'') PROFILING=OFF ;;
  1) PROFILING=ON ;;
  *) echo "build-web: SKV_WEB_PROFILING must be 0 or 1" >&2; exit 2 ;;
esac
emcmake cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSKV_WEB_PROFILING="$PROFILING" "${LAUNCH[@]}" >/dev/null
cmake --build "$BUILD_DIR" --target skv_web -j"${JOBS:-2}"
# The build is now up to date with every source, even when the linked files came out the same
# and were not copied again: this stamp tells tools/pack-check.mjs so.
touch "$BUILD_DIR/skv-web.built"
ls -l web/dist/skv-core.mjs web/dist/skv-core.wasm
