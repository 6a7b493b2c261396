// Group commit (core/src/commit, core/src/tree/tree_commit.cpp) through the public API: whole
// one-row transactions (begin, set, commit with Durability::Immediate) committing together, so
// one WAL write and one sync carry the group.
//
// A round is made deterministic the way tests/commit_pipeline_test.cpp does for the Deferred
// pipeline: with CommitPipeline::Deferred and a QueueExecutor, commit() only validates and
// queues, and the WAL write of everything queued runs when the executor runs, so each round is
// exactly one group. The concurrent benchmark instead lets the Inline pipeline form groups from
// real threads, the way a native server would.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "native/thread_pool_executor.h"
#include "platform/memory/memory_platform.h"
#include "platform/posix/posix_platform.h"
#include "skv/queue_executor.h"
#include "skv/skv.h"

namespace skv::microbench {
namespace {

constexpr size_t kKeySpace = 100000;
constexpr size_t kValueBytes = 840;  // about crud-bench's average record
// Large enough that no flush runs inside the timed rounds of a short run; the flushes counter
// says if one did (it then ran on the benchmark thread, inside a round).
constexpr size_t kRoundMemtableSize = size_t{1} << 30;

void commit_rounds(benchmark::State& state, const std::shared_ptr<Platform>& platform,
                   QueueExecutor& executor, const std::string& path) {
  const size_t group = static_cast<size_t>(state.range(0));
  Tree tree = value_or_die(TreeBuilder()
                               .with_path(path)
                               .with_platform(platform)
                               .with_commit_pipeline(CommitPipeline::Deferred)
                               .with_memtable_size(kRoundMemtableSize)
                               .build(),
                           "open tree");
  executor.run_all();
  const std::vector<std::string> keys = make_keys(0, kKeySpace);
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, kValueBytes);
  std::vector<CommitFuture> futures;
  futures.reserve(group);
  size_t next = 0;
  const TreeStats before = tree.stats();
  for (auto _ : state) {
    futures.clear();
    for (size_t g = 0; g < group; ++g) {
      Transaction tx = value_or_die(tree.begin(), "begin");
      check_ok(tx.set(keys[next], value), "set");
      if (++next == keys.size()) next = 0;
      tx.set_durability(Durability::Immediate);
      futures.push_back(tx.commit());
    }
    executor.run_all();
    for (const CommitFuture& f : futures) {
      if (!f.ready()) check_ok(Status::busy("commit still pending after the round"), "round");
      check_ok(f.wait(), "commit");
    }
  }
  const TreeStats after = tree.stats();
  const double rounds = static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * group));
  state.counters["groups_per_round"] =
      static_cast<double>(after.commit_groups - before.commit_groups) / rounds;
  state.counters["syncs_per_round"] =
      static_cast<double>(after.wal_syncs - before.wal_syncs) / rounds;
  state.counters["flushes"] = static_cast<double>(after.flushes - before.flushes);
  check_ok(tree.close(), "close tree");
}

// One group-commit round of `group` transactions on the in-memory platform: the CPU cost of the
// pipeline (transaction setup, conflict check, batch encoding, one WAL record per commit in one
// append, memtable inserts, publishing, completing the futures). items_per_second is commits/s.
void BM_GroupCommitRoundMemory(benchmark::State& state) {
  auto platform = std::make_shared<MemoryPlatform>();
  commit_rounds(state, platform, *platform->queue_executor(), "microbench-commit");
}
BENCHMARK(BM_GroupCommitRoundMemory)->ArgName("group")->Arg(1)->Arg(8)->Arg(64);

// The same round on the POSIX platform: one write() and one fdatasync() per round, so the time
// per round is mostly the storage's flush latency and items_per_second shows the gain of
// sharing it.
void BM_GroupCommitRoundPosix(benchmark::State& state) {
  auto executor = std::make_shared<QueueExecutor>();
  auto platform = std::make_shared<PosixPlatform>(executor);
  BenchDir dir("commit");
  commit_rounds(state, platform, *executor, dir.path());
}
BENCHMARK(BM_GroupCommitRoundPosix)->ArgName("group")->Arg(1)->Arg(8)->Arg(64)->UseRealTime();

// Shared by the threads of BM_CommitConcurrentPosix; made and torn down outside the threads.
std::unique_ptr<BenchDir> g_dir;
std::optional<Tree> g_tree;
TreeStats g_before;

void concurrent_setup(const benchmark::State&) {
  g_dir = std::make_unique<BenchDir>("concurrent");
  auto platform = std::make_shared<PosixPlatform>(std::make_shared<ThreadPoolExecutor>());
  g_tree.emplace(value_or_die(
      TreeBuilder().with_path(g_dir->path()).with_platform(platform).build(), "open tree"));
  g_before = g_tree->stats();
}

void concurrent_teardown(const benchmark::State&) {
  check_ok(g_tree->close(), "close tree");
  g_tree.reset();
  g_dir.reset();
}

// One-row Immediate commits from `threads` client threads at once on POSIX with the default
// Inline pipeline: whichever thread finds the pipeline idle leads and writes every commit queued
// behind it with one write() and one fdatasync(). Each thread writes its own keys (no conflicts).
// items_per_second is the total commit rate; commits_per_sync the average group size.
void BM_CommitConcurrentPosix(benchmark::State& state) {
  const Tree& tree = *g_tree;
  const std::vector<std::string> keys =
      make_keys(static_cast<uint64_t>(state.thread_index()) * kKeySpace, kKeySpace);
  std::mt19937_64 rng(kSeed + static_cast<uint64_t>(state.thread_index()));
  const std::string value = make_value(rng, kValueBytes);
  size_t next = 0;
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin(), "begin");
    check_ok(tx.set(keys[next], value), "set");
    if (++next == keys.size()) next = 0;
    tx.set_durability(Durability::Immediate);
    check_ok(tx.commit().wait(), "commit");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  if (state.thread_index() == 0) {
    // Every thread has left the loop (the loop ends at a barrier), so the counters are final.
    const TreeStats after = tree.stats();
    const uint64_t syncs = after.wal_syncs - g_before.wal_syncs;
    state.counters["commits_per_sync"] =
        syncs == 0
            ? 0.0
            : static_cast<double>(after.commits - g_before.commits) / static_cast<double>(syncs);
  }
}
BENCHMARK(BM_CommitConcurrentPosix)
    ->Setup(concurrent_setup)
    ->Teardown(concurrent_teardown)
    ->Threads(1)
    ->Threads(8)
    ->Threads(64)
    ->UseRealTime();

}  // namespace
}  // namespace skv::microbench
