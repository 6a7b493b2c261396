// What a full count costs a native tree (docs/benchmarks.md, "Sweeps read ahead"): a tree on the
// POSIX platform with the native defaults (64 MiB memtables, 16 KiB blocks, a 64 MiB block cache),
// holding 200,000 rows of 840-byte values, half random and half repeated (zstd halves them), in
// about 70 MB of tables after compact_all(). A count's blocks enter only the cache's scan pool (a
// quarter of it), so every count reads most of its blocks from the files.
//
//   skv_microbench --benchmark_filter=TreeCountPosix --benchmark_repetitions=6
//     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//
// BM_TreeCountPosix counts every key, on one thread or on two at once (two sweeps of the same
// range share the blocks one of them read through the cache's scan pool). It reports rows per
// second per thread, in real time.

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "skv/skv.h"

namespace skv::microbench {
namespace {

constexpr size_t kRows = 200000;
constexpr size_t kValueBytes = 840;
constexpr size_t kCommitRows = 100;

struct CountTree {
  std::unique_ptr<BenchDir> dir;
  std::optional<Tree> tree;
};

// Built once, on first use (about ten seconds; the static's initialisation keeps the threads of a
// two-thread run from building it twice), and kept for the whole run; the directory is removed at
// exit.
CountTree build_count_tree() {
  CountTree t;
  t.dir = std::make_unique<BenchDir>("count");
  TreeBuilder b;
  b.with_path(t.dir->path()).with_default_durability(Durability::Eventual);
  t.tree.emplace(value_or_die(b.build(), "open tree"));
  std::mt19937_64 rng(kSeed);
  const std::vector<uint32_t> order = shuffled_indices(kRows, kSeed + 1);
  for (size_t first = 0; first < kRows; first += kCommitRows) {
    Transaction tx = value_or_die(t.tree->begin(), "begin");
    for (size_t i = first; i < first + kCommitRows && i < kRows; ++i) {
      std::string v = make_value(rng, kValueBytes / 2);
      v.append(kValueBytes / 2, 'v');
      check_ok(tx.set(make_key(order[i]), v), "set");
    }
    check_ok(tx.commit().wait(), "commit");
  }
  check_ok(t.tree->compact_all(), "compact");
  return t;
}

CountTree& count_tree() {
  static CountTree t = build_count_tree();
  return t;
}

void BM_TreeCountPosix(benchmark::State& state) {
  count_every_row(state, *count_tree().tree, kRows);
}
BENCHMARK(BM_TreeCountPosix)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace skv::microbench
