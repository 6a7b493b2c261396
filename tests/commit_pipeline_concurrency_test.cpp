// skv-test-modules: commit
// skv-test-wasm: off
// The commit pipeline under concurrent committers (inline leaders), on the fake env: every commit
// gets a unique sequence number, batches are applied in sequence order, groups share writes.

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_commit_env.h"

using namespace skv;
using namespace skv::commit;
using namespace skv::testing;

TEST_CASE("concurrent committers: unique sequence numbers, groups share writes", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/false);
  constexpr int kThreads = 4, kEach = 500;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string key = "t" + std::to_string(t) + "/" + std::to_string(i);
        if (!p.commit(batch_of({key}), 0, true, i % 7 == 0).wait().ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(p.visible().load() == kThreads * kEach);
  std::vector<SequenceNumber> applied = env.applied;
  REQUIRE(applied.size() == static_cast<size_t>(kThreads * kEach));
  for (size_t i = 0; i < applied.size(); ++i) CHECK(applied[i] == i + 1);  // in sequence order
  const CommitCounters c = p.counters();
  CHECK(c.commits == kThreads * kEach);
  CHECK(c.groups <= c.commits);
  p.close();
}
