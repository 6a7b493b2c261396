#!/usr/bin/env bash
# Runs every test suite skv has, the way CI does:
#   1. native: configure and build ./build (RelWithDebInfo), then ctest (unit, integration,
#      heavy, CLI and smoke suites) on both cores; then the same core and its unit and heavy
#      suites built with ASan and UBSan (./build-asan);
#   2. the installed CMake package, add_subdirectory and pkg-config, from a consumer project,
#      and examples/cpp built against the installed package and run; the skv tool
#      built without encryption (./build-nocrypto); then a short libFuzzer run of the decoders
#      (clang-14, ASan/UBSan, ./build-fuzz);
#   3. wasm32: configure and build ./build-wasm with Debian's Emscripten (zstd and libsodium
#      built from Debian's source packages, cached), then the unit tests and the smoke program
#      under node; then the npm package (npm ci, npm run build) and the browser end-to-end
#      suite (e2e/, Playwright driving Debian's Chromium headless).
#
#   tools/test.sh                  everything
#   tools/test.sh --native         steps 1 and 2 only
#   tools/test.sh --wasm           step 3 only (the e2e suite's native round trip then needs an
#                                  existing ./build/skv, and is skipped without one)
#   CTEST_ARGS="-L unit" tools/test.sh --native     pass extra arguments to ctest
#
# Missing Debian packages are installed first (tools/setup.sh). JOBS sets the parallelism
# (default 2).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
JOBS=${JOBS:-2}
MODE=${1:-all}
case "$MODE" in all | --native | --wasm) ;; *) echo "usage: $0 [--native|--wasm]" >&2; exit 2 ;; esac

SKV_SETUP_NO_BUILD=1 tools/setup.sh
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
export CCACHE_DIR=${CCACHE_DIR:-$ROOT/build/.ccache}
LAUNCH=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
T0=$SECONDS
stage() { echo "== [$((SECONDS - T0))s] $*"; }

stage "format and layering"
tools/check-format.sh
tools/check-layering.sh

if [[ $MODE != --wasm ]]; then
  stage "native build"
  cmake -S . -B build -G Ninja "${LAUNCH[@]}" >/dev/null
  cmake --build build -j"$JOBS"
  stage "native tests"
  # shellcheck disable=SC2086
  ctest --test-dir build -j"$JOBS" --output-on-failure --timeout 1200 ${CTEST_ARGS:-}
  stage "sanitizers: the core and its unit and heavy suites built with ASan and UBSan (./build-asan)"
  # Every use after free, overflow, leak or undefined behaviour aborts the test that hit it; the
  # lifetime tests (close() racing reads, iterators and compact_all) and the memory-bound tests
  # (transactions at their real limit) are among them.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" \
    -DSKV_SANITIZE=address,undefined -DSKV_WERROR=OFF -DSKV_BUILD_TOOLS=OFF -DSKV_INSTALL=OFF \
    "${LAUNCH[@]}" >/dev/null
  cmake --build build-asan -j"$JOBS"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j"$JOBS" -L 'unit|heavy' --output-on-failure --timeout 1200
  stage "consumers (find_package, add_subdirectory, pkg-config, examples/cpp)"
  JOBS=$JOBS tools/check-consumer.sh build
  stage "a build without encryption (SKV_ENCRYPTION=OFF, ./build-nocrypto): no libsodium, key files refused"
  cmake -S . -B build-nocrypto -G Ninja -DSKV_ENCRYPTION=OFF -DSKV_BUILD_TESTS=OFF \
    -DSKV_BUILD_TOOLS=ON -DSKV_INSTALL=OFF "${LAUNCH[@]}" >/dev/null
  cmake --build build-nocrypto -j"$JOBS" --target skv
  tests/cli/no_encryption_check.sh build-nocrypto
  stage "fuzzing (libFuzzer, short run; tools/fuzz.sh --seconds N for longer)"
  JOBS=$JOBS tools/fuzz.sh --seconds "${SKV_FUZZ_SECONDS:-15}"
  stage "benchmark harnesses, smoke size (the full runs: tools/bench.sh, tools/bench.sh --micro)"
  JOBS=$JOBS tools/bench.sh --smoke
  build-bench/skv_microbench --benchmark_min_time=0.01 >/dev/null
fi

if [[ $MODE != --native ]]; then
  stage "wasm32 build"
  emcmake cmake -S . -B build-wasm -G Ninja -DCMAKE_BUILD_TYPE=Release "${LAUNCH[@]}" >/dev/null
  cmake --build build-wasm -j"$JOBS"
  stage "wasm32 tests under node"
  # shellcheck disable=SC2086
  ctest --test-dir build-wasm -j"$JOBS" --output-on-failure --timeout 1200 ${CTEST_ARGS:-}
  stage "browser package (npm run build) and e2e in headless Chromium"
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent build
  node e2e/run.mjs
  stage "browser benchmark, smoke size (the full run: npm run bench:web)"
  node --test e2e/bench/xxh64.test.mjs e2e/bench/workload.test.mjs
  npm run --silent bench:web -- --smoke
fi
stage "all tests passed"
