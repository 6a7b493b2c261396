// Versioned reads through the public API, on the in-memory platform: get_at and history on keys
// with 1, 10 and 100 versions each, next to a plain get of the same keys. The versions are
// flushed and compacted into tables first (a key's versions then share one table), so the
// figures include block reads from the block cache, not only memtable lookups.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "platform/memory/memory_platform.h"
#include "skv/skv.h"

namespace skv::microbench {
namespace {

constexpr size_t kKeys = 1000;
constexpr size_t kValueBytes = 100;
constexpr uint64_t kStart = 1'800'000'000'000'000'000ull;
constexpr uint64_t kStep = 1000;  // nanoseconds between two versions of a key

// kKeys keys, each written `versions` times (one commit per version, timestamps kStep apart),
// then flushed and compacted.
struct VersionedTree {
  // other_tables: after the compaction, that many more flushed tables and a memtable, each with
  // kKeys other keys (one version each) spread over the same key range, as a tree that keeps
  // taking writes has; reads of the first keys find nothing in them.
  explicit VersionedTree(size_t versions_per_key, size_t other_tables = 0)
      : platform(std::make_shared<MemoryPlatform>()),
        tree(value_or_die(TreeBuilder()
                              .with_path("microbench-versions")
                              .with_platform(platform)
                              .with_versioning(true, 0)
                              .build(),
                          "open tree")),
        keys(make_keys(0, kKeys)),
        versions(versions_per_key) {
    std::mt19937_64 rng(kSeed);
    const std::string value = make_value(rng, kValueBytes);
    for (size_t v = 0; v < versions; ++v) {
      Transaction tx = value_or_die(tree.begin_with_mode(Mode::WriteOnly), "begin");
      for (const std::string& k : keys) check_ok(tx.set_at(k, value, kStart + v * kStep), "set_at");
      check_ok(tx.commit().wait(), "commit");
    }
    check_ok(tree.flush().wait(), "flush");
    check_ok(tree.compact_all(), "compact");
    for (size_t t = 0; t <= other_tables && other_tables > 0; ++t) {
      Transaction tx = value_or_die(tree.begin_with_mode(Mode::WriteOnly), "begin");
      for (const std::string& k : make_keys(kKeys * (t + 1), kKeys)) {
        check_ok(tx.set_at(k, value, kStart + versions * kStep), "set_at");
      }
      check_ok(tx.commit().wait(), "commit");
      if (t < other_tables) check_ok(tree.flush().wait(), "flush");  // the last stays in memory
    }
  }
  std::shared_ptr<MemoryPlatform> platform;
  Tree tree;
  std::vector<std::string> keys;
  size_t versions;
};

// get_at at a uniformly random time inside the key's history, on `t`. Every read must find a
// version. items_per_second is reads/s.
void read_at_random_times(benchmark::State& state, const VersionedTree& t, uint64_t seed) {
  Transaction tx = value_or_die(t.tree.begin_with_mode(Mode::ReadOnly), "begin");
  std::mt19937_64 rng(seed);
  for (auto _ : state) {
    const std::string& k = t.keys[rng() % kKeys];
    const uint64_t ts = kStart + (rng() % t.versions) * kStep + kStep / 2;
    auto v = value_or_die(tx.get_at(k, ts), "get_at");
    if (!v.has_value()) state.SkipWithError("a version was not found");
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_GetAt(benchmark::State& state) {
  read_at_random_times(state, VersionedTree(static_cast<size_t>(state.range(0))), kSeed + 1);
}
BENCHMARK(BM_GetAt)->ArgName("versions")->Arg(1)->Arg(10)->Arg(100);

// get_at as BM_GetAt with 10 versions a key, in a tree that also holds `other_tables` tables
// and a memtable of other keys: what the filters save a read by time.
void BM_GetAtAmongOthers(benchmark::State& state) {
  read_at_random_times(state, VersionedTree(10, static_cast<size_t>(state.range(0))), kSeed + 4);
}
BENCHMARK(BM_GetAtAmongOthers)->ArgName("other_tables")->Arg(0)->Arg(4);

// The whole history of a key. items_per_second is histories/s.
void BM_History(benchmark::State& state) {
  VersionedTree t(static_cast<size_t>(state.range(0)));
  Transaction tx = value_or_die(t.tree.begin_with_mode(Mode::ReadOnly), "begin");
  std::mt19937_64 rng(kSeed + 2);
  for (auto _ : state) {
    auto h = value_or_die(tx.history(t.keys[rng() % kKeys]), "history");
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_History)->ArgName("versions")->Arg(1)->Arg(10)->Arg(100);

// A plain get of the same keys (the newest version), for comparison.
void BM_GetNewest(benchmark::State& state) {
  VersionedTree t(static_cast<size_t>(state.range(0)));
  Transaction tx = value_or_die(t.tree.begin_with_mode(Mode::ReadOnly), "begin");
  std::mt19937_64 rng(kSeed + 3);
  for (auto _ : state) {
    auto v = value_or_die(tx.get(t.keys[rng() % kKeys]), "get");
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_GetNewest)->ArgName("versions")->Arg(1)->Arg(10)->Arg(100);

}  // namespace
}  // namespace skv::microbench
