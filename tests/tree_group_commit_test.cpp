// skv-test-modules: engine memory
// skv-test-wasm: off
// Group commit through a whole tree, made deterministic: a platform wrapper holds the WAL's sync()
// at a gate, so the test knows exactly which commits queue behind the leader. Checks one WAL write
// and one sync per group, in-order visibility, and that a commit's future completes only once its
// group is durable.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "skv/platform_wrapper.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

// Holds every LogFile::sync() until release() while closed; counts waiters.
class Gate {
 public:
  void close() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = false;
  }
  void release() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> l(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(l, [&] { return open_; });
    --waiting_;
  }
  void wait_for_waiter() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int waiting_ = 0;
};

class GatedLogFile final : public LogFileWrapper {
 public:
  GatedLogFile(std::unique_ptr<LogFile> f, Gate* g) : LogFileWrapper(std::move(f)), gate_(g) {}
  Status sync() override {
    gate_->pass();
    return LogFileWrapper::sync();
  }

 private:
  Gate* gate_;
};

class GatedLogStore final : public LogStoreWrapper {
 public:
  GatedLogStore(LogStore* s, Gate* g) : LogStoreWrapper(s), gate_(g) {}

 protected:
  // Only WAL segments are gated; the manifest syncs freely.
  std::unique_ptr<LogFile> wrap_file(const std::string& name, std::unique_ptr<LogFile> f) override {
    if (name.find(".wal") == std::string::npos) return f;
    return std::make_unique<GatedLogFile>(std::move(f), gate_);
  }

 private:
  Gate* gate_;
};

class GatedStorage final : public StorageWrapper {
 public:
  GatedStorage(std::unique_ptr<Storage> s, Gate* g)
      : StorageWrapper(std::move(s)), logs_(&target().logs(), g) {}
  LogStore& logs() override { return logs_; }

 private:
  GatedLogStore logs_;
};

class GatedPlatform final : public PlatformWrapper {
 public:
  GatedPlatform() : PlatformWrapper(std::make_shared<MemoryPlatform>()) {}
  Gate& gate() { return gate_; }

 protected:
  std::unique_ptr<Storage> wrap_storage(std::unique_ptr<Storage> s) override {
    return std::make_unique<GatedStorage>(std::move(s), &gate_);
  }

 private:
  Gate gate_;
};

Transaction writer(const Tree& tree, const std::string& key, Durability d) {
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set(key, "v-" + key));
  tx.set_durability(d);
  return tx;
}

}  // namespace

TEST_CASE("commits queued behind a syncing leader share one WAL write and one sync",
          "[group-commit]") {
  auto p = std::make_shared<GatedPlatform>();
  Tree tree = open_or_fail(TreeBuilder().with_path("db").with_platform(p));
  const TreeStats before = tree.stats();

  p->gate().close();
  // The leader: its commit blocks inside the WAL sync.
  Transaction first = writer(tree, "k0", Durability::Immediate);
  Status leader_status;
  // Catch2 assertions stay on the test thread; the leader only records its status.
  std::thread leader([&] { leader_status = first.commit().wait(); });
  p->gate().wait_for_waiter();

  // Seven more commits queue up behind it; commit() returns at once with a pending future.
  std::vector<CommitFuture> futures;
  for (int i = 1; i <= 7; ++i) {
    Transaction tx =
        writer(tree, "k" + std::to_string(i), i % 2 ? Durability::Immediate : Durability::Eventual);
    futures.push_back(tx.commit());
  }
  for (const CommitFuture& f : futures) CHECK_FALSE(f.ready());
  {
    // Not visible yet: neither the leader's group (unsynced) nor the queued ones.
    Transaction r = begin_or_fail(tree, Mode::ReadOnly);
    CHECK_FALSE(get_or_fail(r, "k0").has_value());
    CHECK_FALSE(get_or_fail(r, "k7").has_value());
  }

  p->gate().release();
  leader.join();
  require_ok(leader_status);
  for (const CommitFuture& f : futures) require_ok(f.wait());

  const TreeStats after = tree.stats();
  CHECK(after.commits - before.commits == 8);
  CHECK(after.commit_groups - before.commit_groups == 2);
  CHECK(after.wal_syncs - before.wal_syncs == 2);
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  for (int i = 0; i <= 7; ++i)
    CHECK(get_or_fail(r, "k" + std::to_string(i)) == "v-k" + std::to_string(i));
  require_ok(tree.close());
}

TEST_CASE("a group of Eventual commits is written without a sync", "[group-commit]") {
  auto p = std::make_shared<GatedPlatform>();
  Tree tree = open_or_fail(TreeBuilder().with_path("db").with_platform(p));
  const TreeStats before = tree.stats();
  p->gate().close();  // any sync would hang the test here
  for (int i = 0; i < 20; ++i) {
    Transaction tx = writer(tree, "e" + std::to_string(i), Durability::Eventual);
    require_ok(tx.commit().wait());
  }
  const TreeStats after = tree.stats();
  CHECK(after.commits - before.commits == 20);
  CHECK(after.wal_syncs == before.wal_syncs);
  p->gate().release();
  require_ok(tree.close());
}

TEST_CASE("visibility follows sequence order under concurrent commits", "[group-commit]") {
  auto p = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(TreeBuilder().with_path("db").with_platform(p));
  // Each writer commits an increasing counter under its own key and, in the same transaction,
  // a global log entry; a reader that sees entry n of a writer must see every entry before it.
  constexpr int kWriters = 4, kCommits = 300;
  std::atomic<bool> done{false};
  std::atomic<int> violations{0}, write_errors{0};
  std::thread reader([&] {
    while (!done.load()) {
      Result<Transaction> rt = tree.begin_with_mode(Mode::ReadOnly);
      if (!rt.ok()) {
        violations.fetch_add(1);
        return;
      }
      Transaction& r = *rt;
      for (int w = 0; w < kWriters; ++w) {
        auto v = r.get("w" + std::to_string(w));
        if (!v.ok() || !v->has_value()) continue;
        const int n = std::stoi(**v);
        for (int back = std::max(0, n - 3); back <= n; ++back) {
          auto e = r.get("log/" + std::to_string(w) + "/" + std::to_string(back));
          if (!e.ok() || !e->has_value()) violations.fetch_add(1);
        }
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int n = 0; n < kCommits; ++n) {
        Result<Transaction> tx = tree.begin();
        Status s = tx.status();
        if (s.ok()) s = tx->set("w" + std::to_string(w), std::to_string(n));
        if (s.ok()) s = tx->set("log/" + std::to_string(w) + "/" + std::to_string(n), "x");
        if (s.ok()) s = tx->commit().wait();
        if (!s.ok()) write_errors.fetch_add(1);
      }
    });
  }
  for (auto& t : writers) t.join();
  done = true;
  reader.join();
  CHECK(violations.load() == 0);
  CHECK(write_errors.load() == 0);
  CHECK(tree.stats().commits == kWriters * kCommits);
  require_ok(tree.close());
}

TEST_CASE("deferred commits of one turn share one WAL write and one sync", "[group-commit]") {
  auto p = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(TreeBuilder().with_path("db").with_platform(p).with_commit_pipeline(
      CommitPipeline::Deferred));
  p->queue_executor()->run_all();
  const TreeStats before = tree.stats();
  // One "turn": several commits, nothing written yet.
  std::vector<CommitFuture> futures;
  for (int i = 0; i < 6; ++i) {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("t" + std::to_string(i), "v"));
    tx.set_durability(i == 2 ? Durability::Immediate : Durability::Eventual);
    futures.push_back(tx.commit());
  }
  // A conflicting commit in the same turn is refused at once (the others are in flight).
  {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("t3", "late"));
    CHECK(tx.commit().wait().code() == Code::Conflict);
  }
  for (const CommitFuture& f : futures) CHECK_FALSE(f.ready());
  CHECK(tree.stats().commits == before.commits);
  {
    Transaction r = begin_or_fail(tree, Mode::ReadOnly);
    CHECK_FALSE(get_or_fail(r, "t0").has_value());
  }
  // The host's end of turn: run the executor.
  p->queue_executor()->run_all();
  for (const CommitFuture& f : futures) {
    REQUIRE(f.ready());
    require_ok(f.wait());
  }
  const TreeStats after = tree.stats();
  CHECK(after.commits - before.commits == 6);
  CHECK(after.commit_groups - before.commit_groups == 1);
  CHECK(after.wal_syncs - before.wal_syncs == 1);
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  for (int i = 0; i < 6; ++i) CHECK(get_or_fail(r, "t" + std::to_string(i)) == "v");

  // Commits still queued when the tree closes are written by close().
  Transaction last = begin_or_fail(tree);
  require_ok(last.set("queued", "at close"));
  last.set_durability(Durability::Immediate);
  CommitFuture pending = last.commit();
  CHECK_FALSE(pending.ready());
  require_ok(tree.close());
  REQUIRE(pending.ready());
  require_ok(pending.wait());
  Tree again = open_or_fail(TreeBuilder().with_path("db").with_platform(p));
  Transaction r2 = begin_or_fail(again, Mode::ReadOnly);
  CHECK(get_or_fail(r2, "queued") == "at close");
}
