// skv-test-modules: commit
// skv-test-wasm: off
// The commit pipeline under concurrent committers (inline leaders), on the fake env: every commit
// gets a unique sequence number, batches are applied in sequence order, groups share writes, and
// a committing thread that leads hands over after its turn.

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_commit_env.h"

using namespace skv;
using namespace skv::commit;
using namespace skv::testing;

namespace {

// Runs `threads` threads that each call body(key, i) for i in [0, each), with keys unique to
// the thread and the step, and joins them.
void run_committers(int threads, int each,
                    const std::function<void(const std::string& key, int i)>& body) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < each; ++i) body("t" + std::to_string(t) + "/" + std::to_string(i), i);
    });
  }
  for (auto& w : workers) w.join();
}

// Every one of `n` commits is visible, and the env applied them in sequence order.
void check_applied_in_order(const CommitPipeline& p, const FakeEnv& env, size_t n) {
  CHECK(p.visible().load() == n);
  REQUIRE(env.applied.size() == n);
  for (size_t i = 0; i < n; ++i) CHECK(env.applied[i] == i + 1);
}

}  // namespace

TEST_CASE("concurrent committers: unique sequence numbers, groups share writes", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/false);
  constexpr int kThreads = 4, kEach = 500;
  std::atomic<int> failures{0};
  run_committers(kThreads, kEach, [&](const std::string& key, int i) {
    if (!p.commit(batch_of({key}), 0, true, i % 7 == 0).wait().ok()) failures.fetch_add(1);
  });
  CHECK(failures.load() == 0);
  check_applied_in_order(p, env, kThreads * kEach);
  const CommitCounters c = p.counters();
  CHECK(c.commits == kThreads * kEach);
  CHECK(c.groups <= c.commits);
  p.close();
}

TEST_CASE("a committing thread leads for a bounded turn while the queue never empties",
          "[commit]") {
  // Eight threads and a WAL write that takes a while: the threads a group completes queue again
  // while the next group is written, so the queue is never empty. Without a bound on the turn,
  // the first thread to lead would stay in its commit() call for most of the run.
  FakeEnv env;
  env.wal_delay = std::chrono::microseconds(100);
  // Turns of 1 ms: at most ten groups of at most eight commits each.
  CommitPipeline p(&env, /*deferred=*/false, std::chrono::milliseconds(1));
  constexpr int kThreads = 8, kEach = 150;
  auto applied = [&] {
    std::lock_guard<std::mutex> l(env.mu);
    return env.applied.size();
  };
  std::atomic<size_t> longest{0};  // commits applied during one commit() call, at most
  std::atomic<int> failures{0};
  run_committers(kThreads, kEach, [&](const std::string& key, int) {
    const size_t before = applied();
    CommitFuture f = p.commit(batch_of({key}), 0, true, false);
    const size_t during = applied() - before;
    size_t seen = longest.load();
    while (during > seen && !longest.compare_exchange_weak(seen, during)) {
    }
    if (!f.wait().ok()) failures.fetch_add(1);
  });
  CHECK(failures.load() == 0);
  check_applied_in_order(p, env, kThreads * kEach);
  // A turn (and the group its successor waits for) is far below the 1,200 commits of the run.
  INFO("longest commit() call: " << longest.load() << " commits applied during it");
  CHECK(longest.load() <= 200);
  p.close();
}
