// skv-test-modules: commit
// The commit pipeline as a unit, on a fake CommitEnv that records every call: sequence numbers,
// conflicts (in flight and committed), group formation, barriers between groups, the sticky
// error after a failed WAL write, close, and and close. No tree, no platform (threads:
// commit_pipeline_concurrency_test.cpp).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/fake_commit_env.h"

using namespace skv;
using namespace skv::commit;
using namespace skv::testing;

namespace {

void require_ok(const Status& s) {
  INFO(s.to_string());
  REQUIRE(s.ok());
}

}  // namespace

TEST_CASE("inline commits get increasing sequence numbers and become visible in order",
          "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/false);
  p.start_after(41, 0);
  CHECK(p.visible().load() == 41);
  for (int i = 0; i < 3; ++i) {
    CommitFuture f = p.commit(batch_of({"k" + std::to_string(i)}), 41, true, i == 1);
    REQUIRE(f.ready());  // the committing thread led its own group
    require_ok(f.wait());
  }
  CHECK(p.visible().load() == 44);
  CHECK(env.applied == std::vector<SequenceNumber>{42, 43, 44});
  CHECK(env.events ==
        std::vector<std::string>{"room", "wal 1", "room", "wal 1 sync", "room", "wal 1"});
  // Each record went out with its sequence number in it.
  REQUIRE(env.wal.size() == 3);
  CHECK(WriteBatch::sequence_of(env.wal[2]) == 44);
  const CommitCounters c = p.counters();
  CHECK(c.commits == 3);
  CHECK(c.groups == 3);
  CHECK(c.syncs == 1);
  p.close();
}

TEST_CASE("commit timestamps follow the clock but never go back, and never repeat", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/false);
  p.start_after(7, 5000);  // recovery found a commit stamped 5000: the clock (1000) is behind
  std::vector<uint64_t> stamps;
  const std::vector<uint64_t> clock = {1000, 9000, 9000, 8000, 20000};
  for (size_t i = 0; i < clock.size(); ++i) {
    env.clock = clock[i];
    require_ok(p.commit(batch_of({"k" + std::to_string(i)}), 7, true, false).wait());
    stamps.push_back(WriteBatch::commit_timestamp_of(env.wal.back()));
  }
  CHECK(stamps == std::vector<uint64_t>{5001, 9000, 9001, 9002, 20000});
  CHECK(p.last_timestamp() == 20000);
  // A clock beyond the largest timestamp is capped there.
  env.clock = ~uint64_t{0};
  require_ok(p.commit(batch_of({"x"}), 7, true, false).wait());
  CHECK(WriteBatch::commit_timestamp_of(env.wal.back()) ==
        (uint64_t{1} << 63) - 1);  // kMaxTimestamp
  p.close();
}

TEST_CASE("a deferred pipeline writes everything queued in one group", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/true);
  std::vector<CommitFuture> fs;
  for (int i = 0; i < 5; ++i)
    fs.push_back(p.commit(batch_of({"k" + std::to_string(i)}), 0, true, i == 3));
  for (auto& f : fs) CHECK_FALSE(f.ready());
  CHECK(p.visible().load() == 0);   // nothing is visible before it is written
  CHECK(env.run_scheduled() == 1);  // one leader task for the whole turn
  for (auto& f : fs) {
    REQUIRE(f.ready());
    require_ok(f.wait());
  }
  CHECK(env.group_sizes == std::vector<size_t>{5});
  CHECK(env.events == std::vector<std::string>{"room", "wal 5 sync"});
  CHECK(p.visible().load() == 5);
  CHECK(p.counters().groups == 1);
  p.close();
}

TEST_CASE("first committer wins: keys in flight and keys committed after the snapshot",
          "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/true);
  CommitFuture a = p.commit(batch_of({"x", "y"}), 0, true, false);
  // "y" is in flight: a second writer conflicts at once, whatever its snapshot.
  CommitFuture b = p.commit(batch_of({"y"}), 0, true, false);
  REQUIRE(b.ready());
  CHECK(b.wait().code() == Code::Conflict);
  CHECK(b.wait().message().find("'y'") != std::string::npos);
  // A blind write (no conflict check) of the same key queues behind it.
  CommitFuture blind = p.commit(batch_of({"y"}), 0, false, false);
  CHECK_FALSE(blind.ready());
  env.run_scheduled();
  require_ok(a.wait());
  require_ok(blind.wait());
  CHECK(env.committed["y"] == 2);
  // Committed after snapshot 1: conflict; at snapshot 2 (which saw it): fine.
  CHECK(p.commit(batch_of({"y"}), 1, true, false).wait().code() == Code::Conflict);
  CommitFuture ok = p.commit(batch_of({"y"}), 2, true, false);
  env.run_scheduled();
  require_ok(ok.wait());
  // A failed lookup fails the commit with its own error, and allocates nothing.
  env.lookup_error = Status::io_error("table 000007.sst: read failed");
  CHECK(p.commit(batch_of({"z"}), 3, true, false).wait().code() == Code::IO);
  env.lookup_error = Status();
  CommitFuture next = p.commit(batch_of({"z"}), 3, true, false);
  env.run_scheduled();
  require_ok(next.wait());
  CHECK(env.applied.back() == 4);
  p.close();
}

TEST_CASE("a commit that lands while a check looks its keys up is a conflict, however long ago",
          "[commit]") {
  // The check first looks keys up with no lock held; a commit that lands meanwhile must still be
  // caught under the lock, from the in-flight set while it keeps the commit's keys and by a
  // second lookup once the set has forgotten them.
  const int others = GENERATE(0, 10, 40000);
  INFO("commits landing after the conflicting one: " << others);
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/false);
  bool first = true;
  env.after_lookup = [&](std::string_view key) {
    if (key != "k" || !first) return;
    first = false;
    // The check of "k" found nothing; now another transaction commits "k", then others land.
    require_ok(p.commit(batch_of({"k"}), 0, true, false).wait());
    for (int i = 0; i < others; ++i) {
      require_ok(p.commit(batch_of({"other/" + std::to_string(i)}), 0, false, false).wait());
    }
  };
  Status s = p.commit(batch_of({"k"}), 0, true, false).wait();
  CHECK_FALSE(first);
  CHECK(s.code() == Code::Conflict);
  CHECK(env.committed["k"] == 1);  // only the first writer's
  // A transaction that saw the first writer commits.
  require_ok(
      p.commit(batch_of({"k"}), static_cast<SequenceNumber>(others) + 1, true, false).wait());
  CHECK(env.committed["k"] == static_cast<SequenceNumber>(others) + 2);
  // Lookups: the first look of the conflicting check, the other writer's, the last commit's;
  // and a second look under the lock only where the set had forgotten the other writer.
  CHECK(env.lookups == (others == 40000 ? 4 : 3));
  // Every check has finished: the set keeps nothing applied.
  CHECK(p.inflight_entries() == 0);
  p.close();
}

TEST_CASE("the in-flight set keeps no applied keys when no check is running", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/false);
  WriteBatch big;
  for (int i = 0; i < 50000; ++i) big.put("key/" + std::to_string(i), "v", 1);
  require_ok(p.commit(std::move(big), 0, true, false).wait());
  CHECK(p.inflight_entries() == 0);
  require_ok(p.commit(batch_of({"a", "b"}), 1, true, false).wait());
  require_ok(p.commit(batch_of({"c"}), 0, false, false).wait());
  CHECK(p.inflight_entries() == 0);
  // Queued in a deferred pipeline: the keys are in flight until applied.
  CommitPipeline d(&env, /*deferred=*/true);
  d.start_after(3, 0);
  CommitFuture f = d.commit(batch_of({"x", "y"}), 3, true, false);
  CHECK(d.inflight_entries() == 2);
  env.run_scheduled();
  require_ok(f.wait());
  CHECK(d.inflight_entries() == 0);
  d.close();
}

TEST_CASE("groups are cut at the size cap", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/true);
  const size_t big = CommitPipeline::kMaxGroupBytes / 3 + 1;
  std::vector<CommitFuture> fs;
  for (int i = 0; i < 7; ++i)
    fs.push_back(p.commit(batch_of({"k" + std::to_string(i)}, big), 0, true, false));
  env.run_scheduled();
  for (auto& f : fs) require_ok(f.wait());
  CHECK(env.group_sizes == std::vector<size_t>{3, 3, 1});
  CHECK(p.visible().load() == 7);
}

TEST_CASE("a barrier runs alone, between the groups queued before and after it", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/true);
  CommitFuture a = p.commit(batch_of({"a"}), 0, true, false);
  SequenceNumber seen_by_barrier = 99;
  Status barrier_status = Status::io_error("not run");
  p.barrier([&](const Status& s) {
    barrier_status = s;
    seen_by_barrier = p.visible().load();
    env.events.push_back("barrier");
  });
  CommitFuture b = p.commit(batch_of({"b"}), 0, true, false);
  env.run_scheduled();
  require_ok(a.wait());
  require_ok(b.wait());
  require_ok(barrier_status);
  CHECK(seen_by_barrier == 1);  // everything before it is visible, nothing after it
  CHECK(env.events == std::vector<std::string>{"room", "wal 1", "barrier", "room", "wal 1"});
  p.close();
  // After close a barrier runs at once with Closed.
  Status late;
  p.barrier([&](const Status& s) { late = s; });
  CHECK(late.code() == Code::Closed);
}

TEST_CASE("a failed WAL write fails its group once, becomes sticky and is never retried",
          "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/true);
  require_ok([&] {
    CommitFuture f = p.commit(batch_of({"before"}), 0, true, true);
    env.run_scheduled();
    return f.wait();
  }());
  env.wal_error = Status::io_error("000005.wal: sync: injected");
  CommitFuture x = p.commit(batch_of({"x"}), 1, true, true);
  CommitFuture y = p.commit(batch_of({"y"}), 1, true, false);
  env.run_scheduled();
  CHECK(x.wait().code() == Code::IO);
  CHECK(y.wait().code() == Code::IO);
  CHECK(x.wait().message().find("write-ahead log") != std::string::npos);
  CHECK(env.fails == 1);
  CHECK(p.visible().load() == 1);  // the failed group never became visible
  CHECK(env.applied == std::vector<SequenceNumber>{1});
  // Later commits fail at once with the sticky error, with no WAL call: nothing is retried.
  env.wal_error = Status();
  const size_t wal_calls = env.group_sizes.size();
  CommitFuture z = p.commit(batch_of({"x"}), 1, true, true);
  REQUIRE(z.ready());
  CHECK(z.wait().code() == Code::IO);
  env.run_scheduled();
  CHECK(env.group_sizes.size() == wal_calls);
  // A barrier is told the writes are stopped.
  Status barrier_status;
  p.barrier([&](const Status& s) { barrier_status = s; });
  env.run_scheduled();
  CHECK(barrier_status.code() == Code::IO);
  p.close();
}

TEST_CASE("close writes what is queued, then refuses new commits", "[commit]") {
  FakeEnv env;
  CommitPipeline p(&env, /*deferred=*/true);
  CommitFuture queued = p.commit(batch_of({"q"}), 0, true, true);
  CHECK_FALSE(queued.ready());
  p.close();  // runs the deferred leader itself
  REQUIRE(queued.ready());
  require_ok(queued.wait());
  CommitFuture late = p.commit(batch_of({"l"}), 1, true, false);
  REQUIRE(late.ready());
  CHECK(late.wait().code() == Code::Closed);
  p.close();  // idempotent
  // The scheduled leader task, run after close, finds nothing to do.
  env.run_scheduled();
  CHECK(env.applied == std::vector<SequenceNumber>{1});
}
