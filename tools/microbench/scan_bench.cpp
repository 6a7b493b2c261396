// What one step of a skip or a count costs (docs/benchmarks.md, "Skips and counts"): a tree shaped
// like the browser's at the benchmark's scan phases, on the in-memory platform, walked through the
// public API.
//
// The tree has the browser's defaults (4 MiB memtables and tables, 16 KiB blocks, a 16 MiB block
// cache, values of 512 bytes and more in the value log) and holds 50,000 rows of 840-byte values
// with 26-byte keys, written in a random order in 16-row transactions and then all overwritten
// once, with queued background work run after every commit (as the worker runs it between
// requests). The merge then combines the memtable, a few L0 tables and L1, and the keys
// rewritten since L1 was last compacted have an older version there to pass over.
//
//   skv_microbench --benchmark_filter=TreeScan --benchmark_repetitions=6
//     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//
// BM_TreeScanSkip moves a keys-only iterator over the first 5,100 keys (the browser benchmark's
// "skip 5,000, 100 keys"); BM_TreeScanCount counts every live key. Both report rows per second.
// The same workload runs in wasm through the browser benchmark.

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "platform/memory/memory_platform.h"
#include "skv/skv.h"

namespace skv::microbench {
namespace {

constexpr size_t kRows = 50000;
constexpr size_t kValueBytes = 840;
constexpr size_t kCommitRows = 16;

struct ScanTree {
  std::shared_ptr<MemoryPlatform> platform = std::make_shared<MemoryPlatform>();
  std::optional<Tree> tree;
};

ScanTree& scan_tree() {
  static ScanTree t;
  if (t.tree) return t;
  TreeBuilder b;
  b.with_path("scan")
      .with_platform(t.platform)
      .with_memtable_size(4 << 20)
      .with_target_file_size(4 << 20)
      .with_level_base_bytes(16 << 20)
      .with_block_size(16 << 10)
      .with_block_cache_capacity(16 << 20)
      .with_compaction_step_bytes(1 << 20)
      .with_enable_vlog(true)
      .with_vlog_value_threshold(512)
      .with_vlog_max_file_size(16 << 20)
      .with_default_durability(Durability::Eventual);
  t.tree.emplace(value_or_die(b.build(), "open tree"));
  const std::vector<std::string> keys = make_keys(0, kRows);
  std::mt19937_64 rng(kSeed);
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<uint32_t> order = shuffled_indices(kRows, kSeed + 1 + pass);
    for (size_t first = 0; first < kRows; first += kCommitRows) {
      Transaction tx = value_or_die(t.tree->begin(), "begin");
      for (size_t i = first; i < first + kCommitRows && i < kRows; ++i) {
        check_ok(tx.set(keys[order[i]], make_value(rng, kValueBytes)), "set");
      }
      check_ok(tx.commit().wait(), "commit");
      t.platform->queue_executor()->run_pending(64);
    }
  }
  return t;
}

void BM_TreeScanSkip(benchmark::State& state) {
  Tree& tree = *scan_tree().tree;
  constexpr uint64_t kSteps = 5100;
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin_with_mode(Mode::ReadOnly), "begin");
    Iterator it = value_or_die(tx.keys("", ""), "keys");
    uint64_t n = 0;
    for (it.seek_first(); it.valid() && n < kSteps; it.next()) ++n;
    if (n != kSteps) {
      state.SkipWithError("the tree holds fewer keys than a skip passes");
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kSteps));
}
BENCHMARK(BM_TreeScanSkip);

void BM_TreeScanCount(benchmark::State& state) { count_every_row(state, *scan_tree().tree, kRows); }
BENCHMARK(BM_TreeScanCount);

}  // namespace
}  // namespace skv::microbench
