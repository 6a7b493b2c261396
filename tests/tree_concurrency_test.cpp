// skv-test-modules: util wal memtable sstable version engine posix native
// skv-test-wasm: off
// Eight threads commit overlapping and disjoint transactions against a real directory (POSIX
// platform, thread-pool background work, small memtables so flushes and compactions run under
// the load). Counters incremented with retry-on-conflict must end at the exact total: a lost
// update would mean a missed conflict. A lock-step round shows that every conflict is reported.

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr int kThreads = 8;

std::string temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/skv-concurrency-XXXXXX";
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

TreeBuilder posix_tree(const std::string& dir) {
  TreeBuilder b;
  b.with_path(dir)
      .with_memtable_size(64 * 1024)
      .with_block_size(4096)
      .with_target_file_size(128 * 1024)
      .with_level_base_bytes(512 * 1024)
      .with_l0_compaction_trigger(2);
  return b;
}

// A barrier for one round of kThreads.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> l(mu_);
    const int gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(l, [&] { return gen_ != gen; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, count_ = 0, gen_ = 0;
};

}  // namespace

TEST_CASE("eight threads: counters with retry end at the exact total", "[tree][concurrency]") {
  const std::string dir = temp_dir();
  INFO("dir " << dir);
  constexpr int kIncrements = 400;
  constexpr int kCounters = 4;
  std::atomic<uint64_t> conflicts{0}, errors{0};
  {
    Tree tree = open_or_fail(posix_tree(dir));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kIncrements; ++i) {
          const std::string counter = "counter/" + std::to_string((t + i) % kCounters);
          while (true) {
            Result<Transaction> tx = tree.begin();
            if (!tx.ok()) {
              errors.fetch_add(1);
              return;
            }
            Result<std::optional<std::string>> v = tx->get(counter);
            if (!v.ok()) {
              errors.fetch_add(1);
              return;
            }
            const uint64_t n = v->has_value() ? std::stoull(**v) : 0;
            Status s = tx->set(counter, std::to_string(n + 1));
            // Disjoint keys ride along: each thread's own log, plus filler for flushes, in
            // enough keys that the pipeline's in-flight set forgets applied commits as it goes.
            if (s.ok()) s = tx->set("own/" + std::to_string(t), std::to_string(i));
            for (int f = 0; s.ok() && f < 12; ++f) {
              s = tx->set(
                  "fill/" + std::to_string(t) + "/" + std::to_string(i) + "/" + std::to_string(f),
                  std::string(20, static_cast<char>('a' + t)));
            }
            if (s.ok()) s = tx->commit().wait();
            if (s.ok()) break;
            if (s.code() == Code::Conflict) {
              conflicts.fetch_add(1);
              continue;  // retry with a fresh snapshot
            }
            errors.fetch_add(1);
            return;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    CHECK(errors.load() == 0);
    Model all = read_all(tree);
    uint64_t total = 0;
    for (int c = 0; c < kCounters; ++c) total += std::stoull(all["counter/" + std::to_string(c)]);
    CHECK(total == uint64_t{kThreads} * kIncrements);
    for (int t = 0; t < kThreads; ++t) {
      CHECK(all["own/" + std::to_string(t)] == std::to_string(kIncrements - 1));
    }
    const TreeStats st = tree.stats();
    CHECK(st.flushes > 0);
    INFO("conflicts " << conflicts.load());
    require_ok(tree.close());
  }
  // Everything is still there after reopening.
  Tree tree = open_or_fail(posix_tree(dir));
  Model all = read_all(tree);
  uint64_t total = 0;
  for (int c = 0; c < kCounters; ++c) total += std::stoull(all["counter/" + std::to_string(c)]);
  CHECK(total == uint64_t{kThreads} * kIncrements);
  require_ok(tree.close());
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("eight threads on one key in lock step: one winner and seven conflicts per round",
          "[tree][concurrency]") {
  const std::string dir = temp_dir();
  Tree tree = open_or_fail(posix_tree(dir));
  constexpr int kRounds = 25;
  Barrier barrier(kThreads);
  std::atomic<int> wins{0}, conflicts{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        Result<Transaction> tx = tree.begin();
        Status s = tx.status();
        if (s.ok()) s = tx->set("hot", std::to_string(t));
        barrier.arrive_and_wait();  // every snapshot is taken before anyone commits
        if (s.ok()) s = tx->commit().wait();
        if (s.ok()) {
          wins.fetch_add(1);
        } else if (s.code() == Code::Conflict) {
          conflicts.fetch_add(1);
        } else {
          errors.fetch_add(1);
        }
        barrier.arrive_and_wait();  // the round ends before the next snapshots
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors.load() == 0);
  CHECK(wins.load() == kRounds);
  CHECK(conflicts.load() == kRounds * (kThreads - 1));
  require_ok(tree.close());
  std::system(("rm -rf '" + dir + "'").c_str());
}
