#!/usr/bin/env bash
# Builds and runs the native benchmarks (docs/benchmarks.md):
#
#   tools/bench.sh [skv_bench options]      the side-by-side run against RocksDB, LMDB, LevelDB
#                                           and SQLite (build-bench/skv_bench --help lists them)
#   tools/bench.sh --large [options]        the large-value workload: write and space
#                                           amplification of skv, skv with its value log, and
#                                           RocksDB with and without blob files (8 KiB values;
#                                           --value-size 65536 for 64 KiB)
#   tools/bench.sh --smoke                  tiny runs (N = 2,000, 4 clients; the large-value
#                                           workload at N = 200; a 4 MiB migration; a growth run
#                                           at N = 1,000 and 3,000) that check the harnesses
#                                           build and work, as CI does
#   tools/bench.sh --growth [options]       the same phases at N = 100k, 1M and 5M with an 8 MiB
#                                           block cache, skv and RocksDB: throughput and memory
#                                           per N (tools/bench-growth.mjs lists the options)
#   tools/bench.sh --migrate [options]      import throughput of skv migrate from a RocksDB
#                                           database (--mib 1024) against RocksDB's iterator
#                                           feeding skv (build-bench/skv_migrate_bench)
#   tools/bench.sh --micro [gbench options] the Google Benchmark micro-benchmarks
#                                           (build-bench/skv_microbench)
#
# Missing Debian packages are installed first (as root, or through sudo). The build is Release
# (-O2 -g) in ./build-bench (BENCH_BUILD_DIR overrides it), with Ninja and ccache. JOBS sets the
# build's parallelism (default 2).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
JOBS=${JOBS:-2}
BUILD=${BENCH_BUILD_DIR:-build-bench}

PACKAGES=(build-essential cmake ninja-build pkg-config ccache libzstd-dev libsodium-dev libssl-dev libcli11-dev
          libsnappy-dev zlib1g-dev libbz2-dev liblz4-dev
          librocksdb-dev liblmdb-dev libleveldb-dev libsqlite3-dev libxxhash-dev libbenchmark-dev)
"$ROOT/tools/install-packages.sh" bench "${PACKAGES[@]}"

export CCACHE_DIR=${CCACHE_DIR:-$ROOT/build/.ccache}
# Release at -O2, the level Debian builds the peer engines' libraries at, so that no engine gets
# a better compiler setting than another; -g so that perf can name functions.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKV_BUILD_BENCH=ON \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -g -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -g -DNDEBUG" \
  -DSKV_BUILD_TESTS=OFF -DSKV_INSTALL=OFF \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$BUILD" -j"$JOBS"

case "${1:-}" in
  --micro)
    shift
    if [[ ! -x "$BUILD/skv_microbench" ]]; then
      echo "[bench] $BUILD/skv_microbench was not built" >&2
      exit 1
    fi
    exec "$BUILD/skv_microbench" "$@"
    ;;
  --large)
    shift
    exec "$BUILD/skv_bench" --workload large "$@"
    ;;
  --migrate)
    shift
    exec "$BUILD/skv_migrate_bench" "$@"
    ;;
  --growth)
    shift
    command -v node >/dev/null || { echo "[bench] --growth needs node (tools/setup.sh)" >&2; exit 1; }
    exec node "$ROOT/tools/bench-growth.mjs" --bench "$BUILD/skv_bench" "$@"
    ;;
  --smoke)
    shift
    "$BUILD/skv_bench" --n 2000 --clients 4 --batch-rows 2000 --scan-repeats 10 \
      --count-repeats 1 --settle-seconds 0 --dir "${TMPDIR:-/tmp}/skv-bench-smoke.$$" "$@"
    "$BUILD/skv_bench" --workload large --n 200 --clients 4 --count-repeats 1 \
      --settle-seconds 0 --dir "${TMPDIR:-/tmp}/skv-bench-smoke.$$" "$@"
    "$BUILD/skv_migrate_bench" --mib 4 --rounds 1 --dir "${TMPDIR:-/tmp}/skv-bench-smoke.$$.m"
    if command -v node >/dev/null; then
      node "$ROOT/tools/bench-growth.mjs" --bench "$BUILD/skv_bench" --ns 1000,3000 --cache-mib 1 \
        -- --clients 4 --settle-seconds 0
    fi
    ;;
  *)
    exec "$BUILD/skv_bench" "$@"
    ;;
esac
