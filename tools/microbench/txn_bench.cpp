// A transaction's write buffer (core/src/txn) through the public API, on the in-memory platform:
// what set(), del(), get() of buffered keys, scans of the buffer, savepoints and commits cost
// before the tree is involved. Keys are the 26-byte bench keys in random order, values 100
// random bytes. Only the public API is used, so the same file builds against older versions of
// the engine for side-by-side runs.

#include <benchmark/benchmark.h>

#include <cstdint>
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

constexpr size_t kValueBytes = 100;

Tree open_memory_tree() {
  return value_or_die(TreeBuilder()
                          .with_path("microbench-txn")
                          .with_platform(std::make_shared<MemoryPlatform>())
                          .with_memtable_size(size_t{1} << 30)
                          .build(),
                      "open tree");
}

// A tree, and a transaction on it holding `n` distinct writes of the same value: the starting
// point of the benchmarks that work on a full buffer.
struct FilledTransaction {
  explicit FilledTransaction(size_t n)
      : tree(open_memory_tree()),
        keys(make_keys(0, n)),
        value(bench_value()),
        tx(value_or_die(tree.begin(), "begin")) {
    for (const std::string& k : keys) check_ok(tx.set(k, value), "set");
  }
  static std::string bench_value() {
    std::mt19937_64 rng(kSeed);
    return make_value(rng, kValueBytes);
  }
  Tree tree;
  std::vector<std::string> keys;
  std::string value;
  Transaction tx;
};

// A transaction of `n` distinct writes, rolled back: the buffer's insert path. items_per_second
// is writes/s.
void BM_TxnSet(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Tree tree = open_memory_tree();
  const std::vector<std::string> keys = make_keys(0, n);
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, kValueBytes);
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin(), "begin");
    for (const std::string& k : keys) check_ok(tx.set(k, value), "set");
    check_ok(tx.rollback(), "rollback");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_TxnSet)->ArgName("writes")->Arg(1)->Arg(100)->Arg(10000);

// Rewrites of 1,000 buffered keys with values of the same size (a counter-like workload).
void BM_TxnOverwrite(benchmark::State& state) {
  FilledTransaction f(1000);
  Transaction& tx = f.tx;
  const std::vector<std::string>& keys = f.keys;
  const std::string& value = f.value;
  size_t i = 0;
  for (auto _ : state) {
    check_ok(tx.set(keys[i], value), "set");
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TxnOverwrite);

// get() of keys the transaction wrote (read your own writes), 10,000 buffered.
void BM_TxnGetOwnWrite(benchmark::State& state) {
  FilledTransaction f(10000);
  Transaction& tx = f.tx;
  const std::vector<std::string>& keys = f.keys;
  const std::vector<uint32_t> order = shuffled_indices(keys.size(), kSeed);
  size_t i = 0;
  for (auto _ : state) {
    auto got = tx.get(keys[order[i]]);
    benchmark::DoNotOptimize(got);
    if (++i == order.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TxnGetOwnWrite);

// A full forward scan of a transaction's 10,000 buffered writes (over an empty tree).
void BM_TxnScanOwnWrites(benchmark::State& state) {
  FilledTransaction f(10000);
  Transaction& tx = f.tx;
  const std::vector<std::string>& keys = f.keys;
  for (auto _ : state) {
    Iterator it = value_or_die(tx.range("", ""), "range");
    size_t n = 0;
    for (it.seek_first(); it.valid(); it.next()) ++n;
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * keys.size()));
}
BENCHMARK(BM_TxnScanOwnWrites);

// Opens an iterator, then writes once, with 10,000 writes buffered: a scan-then-update loop.
// items_per_second is rounds/s.
void BM_TxnWriteAfterIterator(benchmark::State& state) {
  FilledTransaction f(10000);
  Transaction& tx = f.tx;
  const std::vector<std::string>& keys = f.keys;
  const std::string& value = f.value;
  size_t i = 0;
  for (auto _ : state) {
    Iterator it = value_or_die(tx.range("", ""), "range");
    check_ok(tx.set(keys[i], value), "set");
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TxnWriteAfterIterator);

// A savepoint, ten writes, a rollback to it, on a transaction holding 1,000 writes.
void BM_TxnSavepointRollback(benchmark::State& state) {
  FilledTransaction f(1000);
  Transaction& tx = f.tx;
  const std::vector<std::string>& keys = f.keys;
  const std::string& value = f.value;
  size_t i = 0;
  for (auto _ : state) {
    check_ok(tx.set_savepoint(), "savepoint");
    for (int w = 0; w < 10; ++w) {
      check_ok(tx.set(keys[i], value), "set");
      if (++i == keys.size()) i = 0;
    }
    check_ok(tx.rollback_to_savepoint(), "rollback");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_TxnSavepointRollback);

// Transactions of `n` writes committed with Durability::Eventual: the buffer, the batch built
// from it at commit and the pipeline. items_per_second is writes/s.
void BM_TxnCommit(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  Tree tree = open_memory_tree();
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, kValueBytes);
  uint64_t next = 0;
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin(), "begin");
    for (size_t i = 0; i < n; ++i) check_ok(tx.set(make_key(next++ % 1000000), value), "set");
    check_ok(tx.commit().wait(), "commit");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_TxnCommit)->ArgName("writes")->Arg(1)->Arg(100);

// Shared by the threads of BM_ReadOnlyGetConcurrent; made and torn down outside the threads.
std::optional<Tree> g_read_tree;
constexpr uint64_t kReadKeys = 10000;

void read_setup(const benchmark::State&) {
  g_read_tree.emplace(open_memory_tree());
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, kValueBytes);
  for (uint64_t i = 0; i < kReadKeys; ++i) check_ok(g_read_tree->set(make_key(i), value), "set");
}

void read_teardown(const benchmark::State&) {
  check_ok(g_read_tree->close(), "close tree");
  g_read_tree.reset();
}

// One read-only transaction per point read, from `threads` client threads at once, of keys held
// in the memtable: what begin(), the read's view of the tree and the end of the transaction cost
// when every thread does them together. items_per_second is the total read rate.
void BM_ReadOnlyGetConcurrent(benchmark::State& state) {
  const Tree& tree = *g_read_tree;
  uint64_t next = static_cast<uint64_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin_with_mode(Mode::ReadOnly), "begin");
    std::optional<std::string> v = value_or_die(tx.get(make_key(next++ % kReadKeys)), "get");
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_ReadOnlyGetConcurrent)
    ->Setup(read_setup)
    ->Teardown(read_teardown)
    ->Threads(1)
    ->Threads(2)
    ->Threads(64)
    ->UseRealTime();

}  // namespace
}  // namespace skv::microbench
