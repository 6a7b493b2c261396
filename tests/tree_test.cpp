// skv-test-modules: util wal memtable sstable version engine memory
// The public API end to end on the in-memory platform: transactions, read-your-own-writes,
// savepoints, modes, ranges, counts, durability, close and reopen, and every kind of bad input
// (each gets its named error and changes nothing).

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "skv/platform_wrapper.h"
#include "support/counting_blocks.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

std::shared_ptr<MemoryPlatform> new_platform() { return std::make_shared<MemoryPlatform>(); }

TreeBuilder builder(const std::shared_ptr<MemoryPlatform>& p) {
  TreeBuilder b;
  b.with_path("db").with_platform(p);
  return b;
}

// The in-memory platform with memtable memory from a source the test chooses.
class BlocksPlatform final : public PlatformWrapper {
 public:
  BlocksPlatform(std::shared_ptr<Platform> target, std::shared_ptr<MemoryBlocks> blocks)
      : PlatformWrapper(std::move(target)), blocks_(std::move(blocks)) {}
  std::shared_ptr<MemoryBlocks> memory_blocks() override { return blocks_; }

 private:
  const std::shared_ptr<MemoryBlocks> blocks_;
};

}  // namespace

TEST_CASE("a transaction commits, and a new one reads it", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("user:001", "Alice"));
  require_ok(tx.set("user:002", "Bob"));
  require_ok(tx.commit().wait());

  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "user:001") == "Alice");
  CHECK(get_or_fail(r, "user:002") == "Bob");
  CHECK_FALSE(get_or_fail(r, "user:003").has_value());
  require_ok(tree.close());
}

TEST_CASE("one-call get, set and del, inline and deferred", "[tree]") {
  auto p = new_platform();
  // Deferred: the commit waits in the executor's queue, which only the call itself runs.
  const CommitPipeline pipeline = GENERATE(CommitPipeline::Inline, CommitPipeline::Deferred);
  Tree tree = open_or_fail(builder(p).with_commit_pipeline(pipeline));
  require_ok(tree.set("k", "v1"));
  CHECK(tree.get("k")->value_or("") == "v1");
  require_ok(tree.set("k", "v2"));
  CHECK(tree.get("k")->value_or("") == "v2");
  require_ok(tree.del("k"));
  CHECK_FALSE(tree.get("k")->has_value());
  CHECK_FALSE(tree.get("never")->has_value());
  require_ok(tree.del("never"));  // deleting a missing key is not an error
  CHECK(tree.set("", "v").code() == Code::InvalidArgument);
  CHECK(tree.get("").status().code() == Code::InvalidArgument);
  CHECK(tree.set(std::string(kMaxKeySize + 1, 'k'), "v").code() == Code::InvalidArgument);
  // A transaction that wrote the key and commits after a one-call set conflicts.
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("k", "from tx"));
  require_ok(tree.set("k", "blind"));
  CommitFuture f = tx.commit();
  REQUIRE(f.ready());  // refused at once: the conflict is found before anything is queued
  CHECK(f.wait().code() == Code::Conflict);
  CHECK(tree.get("k")->value_or("") == "blind");
  require_ok(tree.close());
  CHECK(tree.set("k", "late").code() == Code::Closed);
  CHECK(tree.get("k").status().code() == Code::Closed);
}

TEST_CASE("a transaction reads its own writes, deletes included", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("a", "1"));
    require_ok(tx.set("b", "2"));
    require_ok(tx.set("c", "3"));
    require_ok(tx.commit().wait());
  }
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("b", "two"));
  require_ok(tx.del("c"));
  require_ok(tx.set("d", "4"));
  CHECK(get_or_fail(tx, "b") == "two");
  CHECK_FALSE(get_or_fail(tx, "c").has_value());
  CHECK(get_or_fail(tx, "d") == "4");

  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  std::string seen;
  for (moved(it->seek_first(), *it); it->valid(); moved(it->next(), *it)) {
    seen += std::string(it->key()) + "=" + std::string(*it->value()) + ";";
  }
  CHECK(seen == "a=1;b=two;d=4;");
  Result<uint64_t> n = tx.count("", "");
  REQUIRE(n.ok());
  CHECK(*n == 3);

  // Others do not see the uncommitted writes.
  Transaction other = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(other, "b") == "2");
  CHECK(get_or_fail(other, "c") == "3");
  CHECK_FALSE(get_or_fail(other, "d").has_value());
}

TEST_CASE("ranges are half-open (start included, end excluded) and iterate both ways", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction tx = begin_or_fail(tree);
  for (char c = 'a'; c <= 'j'; ++c) require_ok(tx.set(std::string(1, c), std::string(3, c)));
  require_ok(tx.commit().wait());

  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = r.range("c", "g");
  REQUIRE(it.ok());
  std::string fwd, back;
  for (moved(it->seek_first(), *it); it->valid(); moved(it->next(), *it)) fwd += it->key();
  for (moved(it->seek_last(), *it); it->valid(); moved(it->prev(), *it)) back += it->key();
  CHECK(fwd == "cdef");
  CHECK(back == "fedc");
  moved(it->seek("a"), *it);  // before the range: lands on its first key
  REQUIRE(it->valid());
  CHECK(it->key() == "c");
  moved(it->seek("g"), *it);  // the end is excluded
  CHECK_FALSE(it->valid());

  Result<uint64_t> n = r.count("b", "e");
  REQUIRE(n.ok());
  CHECK(*n == 3);
}

TEST_CASE("keys-only iteration returns keys and refuses values", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("k1", std::string(1000, 'x')));
  require_ok(tx.set("k2", "y"));
  require_ok(tx.commit().wait());
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = r.keys("", "");
  REQUIRE(it.ok());
  moved(it->seek_last(), *it);
  REQUIRE(it->valid());
  CHECK(it->key() == "k2");
  CHECK(it->value().status().code() == Code::InvalidArgument);
  moved(it->prev(), *it);
  REQUIRE(it->valid());
  CHECK(it->key() == "k1");
}

TEST_CASE("savepoints nest and roll back to the most recent one", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("a", "1"));
  require_ok(tx.set_savepoint());
  require_ok(tx.set("a", "2"));
  require_ok(tx.set("b", "2"));
  require_ok(tx.set_savepoint());
  require_ok(tx.del("a"));
  CHECK_FALSE(get_or_fail(tx, "a").has_value());
  require_ok(tx.rollback_to_savepoint());
  CHECK(get_or_fail(tx, "a") == "2");
  require_ok(tx.rollback_to_savepoint());
  CHECK(get_or_fail(tx, "a") == "1");
  CHECK_FALSE(get_or_fail(tx, "b").has_value());
  CHECK(tx.rollback_to_savepoint().code() == Code::InvalidArgument);
  require_ok(tx.commit().wait());
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "a") == "1");
  CHECK_FALSE(get_or_fail(r, "b").has_value());
}

TEST_CASE("snapshots are stable while others commit", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("k", "old"));
    require_ok(tx.commit().wait());
  }
  Transaction snap = begin_or_fail(tree, Mode::ReadOnly);
  {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("k", "new"));
    require_ok(tx.set("n", "x"));
    require_ok(tx.commit().wait());
  }
  require_ok(tree.flush().wait());
  require_ok(tree.compact_all());
  CHECK(get_or_fail(snap, "k") == "old");
  CHECK_FALSE(get_or_fail(snap, "n").has_value());
  Transaction now = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(now, "k") == "new");
}

TEST_CASE("write-write overlap: the first committer wins, a retry succeeds", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction t1 = begin_or_fail(tree);
  Transaction t2 = begin_or_fail(tree);
  require_ok(t1.set("x", "t1"));
  require_ok(t2.set("x", "t2"));
  require_ok(t2.set("y", "t2"));
  require_ok(t1.commit().wait());
  Status s = t2.commit().wait();
  CHECK(s.code() == Code::Conflict);
  CHECK(s.message().find("x") != std::string::npos);
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "x") == "t1");
  CHECK_FALSE(get_or_fail(r, "y").has_value());  // the loser changed nothing

  Transaction retry = begin_or_fail(tree);
  require_ok(retry.set("x", "t2"));
  require_ok(retry.commit().wait());

  // Disjoint writes do not conflict; read-only ones never do.
  Transaction a = begin_or_fail(tree);
  Transaction b = begin_or_fail(tree);
  require_ok(a.set("p", "1"));
  require_ok(b.set("q", "1"));
  CHECK(get_or_fail(b, "p") == std::nullopt);
  require_ok(a.commit().wait());
  require_ok(b.commit().wait());
}

TEST_CASE("write-only transactions write blindly and cannot read", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction w = begin_or_fail(tree, Mode::WriteOnly);
  require_ok(w.set("k", "v"));
  CHECK(w.get("k").status().code() == Code::InvalidArgument);
  CHECK(w.range("", "").status().code() == Code::InvalidArgument);
  require_ok(w.commit().wait());
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "k") == "v");
}

TEST_CASE("bad input gets a named error and changes nothing", "[tree][errors]") {
  auto p = new_platform();
  Tree tree = open_or_fail(builder(p));
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("keep", "1"));

  CHECK(tx.set("", "v").code() == Code::InvalidArgument);
  CHECK(tx.del("").code() == Code::InvalidArgument);
  CHECK(tx.get("").status().code() == Code::InvalidArgument);
  CHECK(tx.set(std::string(kMaxKeySize + 1, 'k'), "v").code() == Code::InvalidArgument);
  require_ok(tx.set(std::string(kMaxKeySize, 'k'), "v"));  // the limit itself is fine
  CHECK(tx.set("big", std::string(kMaxValueSize + 1, 'v')).code() == Code::InvalidArgument);
  require_ok(tx.commit().wait());

  // Use after commit.
  CHECK(tx.set("late", "1").code() == Code::Closed);
  CHECK(tx.get("keep").status().code() == Code::Closed);
  CHECK(tx.commit().wait().code() == Code::Closed);
  CHECK(tx.rollback().code() == Code::Closed);

  // Writes on a read-only transaction.
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(r.set("k", "v").code() == Code::ReadOnly);
  CHECK(r.del("keep").code() == Code::ReadOnly);
  CHECK(get_or_fail(r, "keep") == "1");
  CHECK_FALSE(get_or_fail(r, "big").has_value());

  // Use after rollback.
  Transaction rb = begin_or_fail(tree);
  require_ok(rb.set("gone", "1"));
  require_ok(rb.rollback());
  CHECK(rb.set("x", "1").code() == Code::Closed);
  Transaction check = begin_or_fail(tree, Mode::ReadOnly);
  CHECK_FALSE(get_or_fail(check, "gone").has_value());

  // Use after close: open transactions and the tree itself.
  Transaction open_tx = begin_or_fail(tree);
  require_ok(open_tx.set("after", "close"));
  require_ok(tree.close());
  CHECK(tree.begin().status().code() == Code::Closed);
  CHECK(open_tx.commit().wait().code() == Code::Closed);
  require_ok(tree.close());  // idempotent

  Tree again = open_or_fail(builder(p));
  Transaction r2 = begin_or_fail(again, Mode::ReadOnly);
  CHECK(get_or_fail(r2, "keep") == "1");
  CHECK_FALSE(get_or_fail(r2, "after").has_value());
}

TEST_CASE("bad options are refused by name", "[tree][errors]") {
  auto p = new_platform();
  CHECK(builder(p).with_memtable_size(0).build().status().code() == Code::InvalidArgument);
  CHECK(builder(p).with_level_count(1).build().status().code() == Code::InvalidArgument);
  CHECK(builder(p).with_block_size(0).build().status().code() == Code::InvalidArgument);
  const Status bad_flush =
      builder(p).with_flush_compression(static_cast<Compression>(7)).build().status();
  CHECK(bad_flush.code() == Code::InvalidArgument);
  CHECK(bad_flush.message().find("flush_compression") != std::string::npos);
  CHECK(builder(p).with_compression(static_cast<Compression>(2)).build().status().code() ==
        Code::InvalidArgument);
  for (int start : {0, 8}) {  // levels 1 to level_count (7)
    const Status bad_start = builder(p).with_compression_start_level(start).build().status();
    CHECK(bad_start.code() == Code::InvalidArgument);
    CHECK(bad_start.message().find("compression_start_level") != std::string::npos);
  }
  CHECK(builder(p).with_level_count(3).with_compression_start_level(4).build().status().code() ==
        Code::InvalidArgument);
  CHECK(TreeBuilder().with_platform(p).build().status().code() == Code::InvalidArgument);
  CHECK(builder(p).with_create_if_missing(false).build().status().code() == Code::NotFound);
}

TEST_CASE("a second open of the same database fails with Busy", "[tree][errors]") {
  auto p = new_platform();
  Tree first = open_or_fail(builder(p));
  Result<Tree> second = builder(p).build();
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == Code::Busy);
  require_ok(first.close());
  Tree third = open_or_fail(builder(p));  // the lock went with the close
  require_ok(third.close());
}

TEST_CASE("close and reopen keep every commit, across flushes", "[tree]") {
  auto p = new_platform();
  Model model;
  {
    Tree tree = open_or_fail(small_tree(p));
    for (int i = 0; i < 2000; ++i) {
      Transaction tx = begin_or_fail(tree);
      const std::string k = "key" + std::to_string(i % 700);
      const std::string v = "value" + std::to_string(i);
      require_ok(tx.set(k, v));
      model[k] = v;
      if (i % 5 == 0) {
        const std::string d = "key" + std::to_string((i * 7) % 700);
        require_ok(tx.del(d));
        model.erase(d);
      }
      require_ok(tx.commit().wait());
      p->queue_executor()->run_pending(4);
    }
    CHECK(tree.stats().flushes > 0);
    CHECK(read_all(tree) == model);
    require_ok(tree.close());
  }
  Tree tree = open_or_fail(small_tree(p));
  CHECK(read_all(tree) == model);
}

TEST_CASE("a compaction removes its input tables at once", "[tree]") {
  auto p = new_platform();
  Tree tree = open_or_fail(small_tree(p));
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 300; ++i) {
      Transaction tx = begin_or_fail(tree);
      require_ok(tx.set("key" + std::to_string((i * 37 + round) % 500), std::string(100, 'v')));
      require_ok(tx.commit().wait());
    }
    require_ok(tree.flush().wait());
  }
  require_ok(tree.compact_all());
  const TreeStats stats = tree.stats();
  int live = 0;
  for (int level = 0; level < stats.level_count; ++level) live += stats.files_per_level[level];
  CHECK(stats.compactions > 0);
  // No flush or compaction ran after the last step: only the live tables may be on storage.
  Result<std::vector<MemoryFileInfo>> files = p->list_files("db");
  REQUIRE(files.ok());
  int tables = 0;
  for (const MemoryFileInfo& f : *files) {
    if (f.name.size() > 4 && f.name.compare(f.name.size() - 4, 4, ".sst") == 0) ++tables;
  }
  CHECK(tables == live);
}

TEST_CASE("a count takes at most a quarter of the block cache from point reads", "[tree]") {
  auto p = new_platform();
  {
    Tree tree = open_or_fail(small_tree(p));
    for (int i = 0; i < 2000; ++i) {
      Transaction tx = begin_or_fail(tree);
      require_ok(tx.set("key" + std::to_string(100000 + i), std::string(200, 'v')));
      require_ok(tx.commit().wait());
    }
    require_ok(tree.compact_all());
    require_ok(tree.close());
  }
  // About 450 KB of 1 KiB blocks under a 256 KiB cache.
  const uint64_t capacity = 256 * 1024;
  Tree tree = open_or_fail(small_tree(p));
  Transaction tx = begin_or_fail(tree);
  // Point reads fill the cache.
  for (int i = 0; i < 2000; i += 2) {
    Result<std::optional<std::string>> v = tx.get("key" + std::to_string(100000 + i));
    REQUIRE(v.ok());
    REQUIRE(v->has_value());
  }
  const TreeStats warm = tree.stats();
  REQUIRE(warm.block_cache_usage > capacity * 3 / 4);
  CHECK(warm.block_cache_scan_usage == 0);

  // A count reads every block: its blocks go to the scan pool, which never holds more than a
  // quarter of the cache, so at least the rest of what point reads cached stays.
  Result<uint64_t> n = tx.count("", "");
  REQUIRE(n.ok());
  CHECK(*n == 2000);
  const TreeStats counted = tree.stats();
  CHECK(counted.block_cache_scan_usage > 0);
  CHECK(counted.block_cache_scan_usage <= capacity / 4);
  CHECK(counted.block_cache_usage <= capacity);
  CHECK(counted.block_cache_usage - counted.block_cache_scan_usage >=
        warm.block_cache_usage - capacity / 4);

  // An ordinary scan caches what it reads as point reads do: it takes the pool's room first.
  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  for (moved(it->seek_first(), *it); it->valid(); moved(it->next(), *it)) {
  }
  CHECK(tree.stats().block_cache_scan_usage == 0);
  CHECK(tree.stats().block_cache_usage > capacity * 3 / 4);
}

TEST_CASE("compactions in steps: reads, commits and close between the steps", "[tree]") {
  auto p = new_platform();
  TreeBuilder b = small_tree(p);
  b.with_compaction_step_bytes(4096);
  Model model;
  uint64_t reads_between_steps = 0;
  {
    Tree tree = open_or_fail(b);
    for (int i = 0; i < 3000; ++i) {
      Transaction tx = begin_or_fail(tree);
      const std::string k = "key" + std::to_string((i * 7919) % 1500);
      const std::string v = "value" + std::to_string(i) + std::string(60, 'x');
      require_ok(tx.set(k, v));
      model[k] = v;
      require_ok(tx.commit().wait());
      // One task at a time, and a full read in between now and then: every state between two
      // steps of a compaction must read like the model.
      const uint64_t steps = tree.stats().compaction_steps;
      p->queue_executor()->run_pending(1);
      if (tree.stats().compaction_steps != steps && i % 10 == 0) {
        CHECK(read_all(tree) == model);
        ++reads_between_steps;
      }
    }
    const TreeStats st = tree.stats();
    CHECK(st.compactions > 0);
    CHECK(st.compaction_steps > 2 * st.compactions);
    CHECK(reads_between_steps > 0);
    // Close with a compaction paused between steps (if one is): its outputs are removed.
    require_ok(tree.close());
  }
  Tree tree = open_or_fail(b);
  CHECK(read_all(tree) == model);
  require_ok(tree.compact_all());
  CHECK(read_all(tree) == model);
}

TEST_CASE("flush on a single-threaded executor runs queued work only until it is done", "[tree]") {
  auto p = new_platform();
  TreeBuilder b = small_tree(p);
  b.with_compaction_step_bytes(256).with_memtable_size(1 << 20);
  Tree tree = open_or_fail(b);
  auto write_table = [&](int round) {
    for (int i = 0; i < 100; ++i) {
      require_ok(
          tree.set("key" + std::to_string(i), std::to_string(round) + std::string(100, 'v')));
    }
    require_ok(tree.flush().wait());
  };
  // Two tables reach the L0 trigger: their compaction is queued, and needs far more than 64
  // steps of 256 bytes. Neither flush may run it.
  write_table(1);
  write_table(2);
  TreeStats st = tree.stats();
  CHECK(st.flushes == 2);
  CHECK(st.compaction_steps == 0);
  CHECK(p->queue_executor()->pending() == 1);
  CHECK(st.background_jobs == 1);  // the queued compaction
  CHECK(st.immutable_memtables == 0);

  // The compaction step queued ahead of the next flush runs (once), then the flush; no more.
  require_ok(tree.set("late", "value"));
  require_ok(tree.flush().wait());
  st = tree.stats();
  CHECK(st.flushes == 3);
  CHECK(st.compaction_steps == 1);
  CHECK(st.compactions == 0);
  CHECK(p->queue_executor()->pending() >= 1);

  CHECK(st.background_jobs == 1);  // between two steps, the compaction is still a job

  // The embedder's pump finishes the compaction, one step per task.
  size_t tasks = 0;
  while (p->queue_executor()->run_pending(1) > 0) ++tasks;
  st = tree.stats();
  CHECK(st.background_jobs == 0);
  CHECK(st.compactions >= 1);
  CHECK(st.compaction_steps > 64);
  CHECK(tasks >= st.compaction_steps - 1);
  Transaction tx = begin_or_fail(tree);
  CHECK(get_or_fail(tx, "key7") == "2" + std::string(100, 'v'));
  CHECK(get_or_fail(tx, "late") == "value");

  // Commits that fill the memtable freeze it; its flush waits in the queue as the one job.
  for (int i = 0; i < 4000 && tree.stats().immutable_memtables == 0; ++i) {
    require_ok(tree.set("fill" + std::to_string(i), std::string(1000, 'f')));
  }
  st = tree.stats();
  REQUIRE(st.immutable_memtables == 1);
  CHECK(st.background_jobs == 1);
  while (p->queue_executor()->run_pending(1) > 0) {
  }
  st = tree.stats();
  CHECK(st.immutable_memtables == 0);
  CHECK(st.background_jobs == 0);
  CHECK(st.flushes == 4);
}

TEST_CASE("a long backward scan visits every key, across overwritten versions", "[tree]") {
  auto p = new_platform();
  const bool small_memtable = GENERATE(false, true);
  TreeBuilder b = builder(p);
  if (small_memtable) b.with_memtable_size(32 * 1024);
  Tree tree = open_or_fail(b);
  Model model;
  for (int first = 0; first < 400; first += 50) {
    Transaction tx = begin_or_fail(tree);
    for (int i = first; i < first + 50; ++i) {
      char k[16];
      std::snprintf(k, sizeof(k), "key:%05d", i);
      std::string v = "v0-" + std::to_string(i);
      if (i % 7 == 0) v += std::string(700 + i, 'x');  // enough bytes to fill a few tables
      require_ok(tx.set(k, v));
      model[k] = v;
    }
    require_ok(tx.commit().wait());
    p->queue_executor()->run_all();
  }
  Transaction tx = begin_or_fail(tree);
  for (int i = 0; i < 400; i += 5) {
    char k[16];
    std::snprintf(k, sizeof(k), "key:%05d", i);
    require_ok(tx.set(k, "v1"));
    model[k] = "v1";
  }
  require_ok(tx.commit().wait());

  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  const bool point_reads_first = GENERATE(false, true);  // they warm the block cache
  if (point_reads_first) {
    for (const auto& [k, v] : model) CHECK(get_or_fail(r, k) == v);
  }
  Result<Iterator> it = r.range("", "");
  REQUIRE(it.ok());
  auto m = model.rbegin();
  for (moved(it->seek_last(), *it); it->valid(); moved(it->prev(), *it), ++m) {
    REQUIRE(m != model.rend());
    REQUIRE(it->key() == m->first);
    REQUIRE(*it->value() == m->second);
  }
  CHECK(m == model.rend());
}

// A tree small enough that a few thousand rows flush and compact several times.
Options small_tree(const std::shared_ptr<MemoryPlatform>& p, size_t memtable_size) {
  Options o;
  o.path = "db";
  o.platform = p;
  o.memtable_size = memtable_size;
  o.l0_compaction_trigger = 2;
  o.target_file_size = 64 * 1024;  // the smallest allowed
  o.level_base_bytes = 64 * 1024;
  return o;
}

TEST_CASE("write stalls bound memory when background work falls behind", "[tree][stall]") {
  auto p = new_platform();
  Options o = small_tree(p, 8 * 1024);
  o.max_immutable_memtables = 1;
  o.l0_stop_writes_trigger = 4;
  Tree tree = open_or_fail(TreeBuilder().with_options(o));
  // Nobody runs the executor here: only the stalls make background work happen.
  for (int i = 0; i < 3000; ++i) {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("k" + std::to_string(i % 500), std::string(100, 'v')));
    require_ok(tx.commit().wait());
    const TreeStats st = tree.stats();
    REQUIRE(st.immutable_memtables <= o.max_immutable_memtables);
    REQUIRE(st.files_per_level[0] <= o.l0_stop_writes_trigger);
    REQUIRE(st.memtable_bytes <= o.memtable_size + 64 * 1024);  // plus one arena block
  }
  const TreeStats st = tree.stats();
  CHECK(st.stalls > 0);
  CHECK(st.flushes > 0);
  CHECK(st.compactions > 0);
  require_ok(tree.close());
}

TEST_CASE("deleting every row gives its space back through background compaction",
          "[tree][compaction]") {
  auto p = new_platform();
  Options o = small_tree(p, 32 * 1024);
  o.level_count = 4;
  o.level_multiplier = 4;
  o.compression = Compression::None;
  Tree tree = open_or_fail(TreeBuilder().with_options(o));
  auto table_bytes = [&] {
    const TreeStats st = tree.stats();
    uint64_t bytes = 0;
    for (int l = 0; l < o.level_count; ++l) bytes += st.bytes_per_level[l];
    return bytes;
  };
  auto settle = [&] {
    require_ok(tree.flush().wait());
    p->queue_executor()->run_all();  // every flush and compaction the tree schedules
  };
  constexpr int kRows = 3000;
  for (int i = 0; i < kRows; ++i) {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("row" + std::to_string(100000 + i), std::string(1000, 'a' + i % 26)));
    require_ok(tx.commit().wait());
  }
  settle();
  const uint64_t full = table_bytes();
  REQUIRE(full >= kRows * 1000);
  for (int i = 0; i < kRows; ++i) {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.del("row" + std::to_string(100000 + i)));
    require_ok(tx.commit().wait());
  }
  settle();
  // The tombstones (about 45 KiB, under L1's 64 KiB target in bytes) were pushed down to the
  // rows they hide, and both were dropped: no manual compaction was asked for.
  INFO("table bytes: " << full << " before the deletes, " << table_bytes() << " after");
  CHECK(table_bytes() < full / 10);
  CHECK(tree.stats().table_entries < kRows / 10);
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK_FALSE(get_or_fail(r, "row100000").has_value());
  require_ok(tree.close());
}

namespace {

// A value of 1,000 bytes that compresses about 20 to 1.
std::string compressible_value(int i) {
  std::string value(1000, static_cast<char>('a' + i % 26));
  for (size_t j = 0; j < value.size(); j += 50) value[j] = static_cast<char>('0' + j / 50 % 10);
  return value;
}

uint64_t total_table_bytes(const Tree& tree) {
  uint64_t total = 0;
  for (uint64_t bytes : tree.stats().bytes_per_level) total += bytes;
  return total;
}

}  // namespace

TEST_CASE("flushes write L0 raw unless asked, compactions compress from the start level on",
          "[tree][compaction]") {
  CHECK(Options().compression_start_level == 2);
  const bool compress_flushes = GENERATE(false, true);
  const int start_level = GENERATE(1, 2, 3);
  auto p = new_platform();
  TreeBuilder b = builder(p);
  if (compress_flushes) b.with_flush_compression(Compression::Zstd);
  if (start_level != 2) b.with_compression_start_level(start_level);  // 2 is the default
  Tree tree = open_or_fail(b);
  for (int i = 0; i < 2000; ++i) {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("row" + std::to_string(100000 + i), compressible_value(i)));
    require_ok(tx.commit().wait());
  }
  require_ok(tree.flush().wait());
  const uint64_t l0 = tree.stats().bytes_per_level[0];
  INFO("L0 bytes: " << l0 << ", compression from L" << start_level);
  if (compress_flushes) {
    CHECK(l0 < 500 * 1000);
  } else {
    CHECK(l0 > 2000 * 1000);
  }
  // Into L1, the deepest level then, and rewritten there.
  require_ok(tree.compact_all());
  const uint64_t l1 = tree.stats().bytes_per_level[1];
  INFO("L1 bytes: " << l1);
  CHECK(total_table_bytes(tree) == l1);
  if (start_level == 1) {
    CHECK(l1 < 500 * 1000);
  } else {
    CHECK(l1 > 2000 * 1000);  // raw whatever L0 was
  }
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "row101999") == compressible_value(1999));
  require_ok(tree.close());
}

TEST_CASE("a table goes down a level by a move only where both levels compress alike",
          "[tree][compaction]") {
  const int start_level = GENERATE(1, 2);
  auto p = new_platform();
  Options o = small_tree(p, 4 << 20);
  o.l0_compaction_trigger = 1;  // the flushed table goes into the empty L1 at once
  o.level_base_bytes = 64 << 20;
  o.target_file_size = 64 << 20;
  o.compression_start_level = start_level;
  Tree tree = open_or_fail(TreeBuilder().with_options(o));
  for (int i = 0; i < 2000; ++i) {
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("row" + std::to_string(100000 + i), compressible_value(i)));
    require_ok(tx.commit().wait());
  }
  require_ok(tree.flush().wait());
  p->queue_executor()->run_all();
  const TreeStats st = tree.stats();
  INFO("L0 " << st.bytes_per_level[0] << " bytes, L1 " << st.bytes_per_level[1]
             << ", compression from L" << start_level);
  CHECK(st.bytes_per_level[0] == 0);
  if (start_level == 1) {
    CHECK(st.bytes_per_level[1] < 500 * 1000);  // rewritten: L0 is raw, L1 compressed
  } else {
    CHECK(st.bytes_per_level[1] > 2000 * 1000);  // moved as it was: both raw
  }
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "row100007") == compressible_value(7));
  require_ok(tree.close());
}

TEST_CASE("a tree reads its cached blocks into its platform's memory blocks", "[tree][memory]") {
  constexpr size_t kPreferred = 96 * 1024;
  constexpr size_t kCache = 1 << 20;
  auto blocks = std::make_shared<CountingBlocks>(kPreferred);
  auto p = std::make_shared<BlocksPlatform>(new_platform(), blocks);
  auto value_of = [](int j) { return std::string(300, static_cast<char>('a' + j % 26)); };
  {
    Tree tree = open_or_fail(TreeBuilder()
                                 .with_path("db")
                                 .with_platform(p)
                                 .with_block_cache_capacity(kCache)
                                 .with_block_size(4096));
    for (int i = 0; i < 6000; i += 200) {
      Transaction tx = begin_or_fail(tree);
      for (int j = i; j < i + 200; ++j) {
        char key[16];
        std::snprintf(key, sizeof(key), "k%06d", j);
        require_ok(tx.set(key, value_of(j)));
      }
      require_ok(tx.commit().wait());
    }
    require_ok(tree.flush().wait());
    CHECK(tree.stats().block_cache_pool_bytes == 0);  // nothing read yet
    const size_t memtable_blocks = blocks->live_blocks();

    // 6,000 rows of ~310 bytes: about twice what the cache holds, so buffers are reused.
    for (int round = 0; round < 2; ++round) {
      Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
      for (int j = 0; j < 6000; j += 7) {
        char key[16];
        std::snprintf(key, sizeof(key), "k%06d", j);
        Result<std::optional<std::string>> got = tx.get(key);
        require_ok(got.status());
        REQUIRE(got.value() == value_of(j));
      }
    }
    const TreeStats st = tree.stats();
    CHECK(st.block_cache_pool_bytes > 0);
    CHECK(st.block_cache_pool_bytes % kPreferred == 0);
    CHECK(st.block_cache_pool_bytes <= kCache + kCache / 16);
    CHECK(st.block_cache_usage <= kCache);
    CHECK(blocks->live_blocks() >= memtable_blocks + st.block_cache_pool_bytes / kPreferred);

    // An iterator open across the close holds its block (and with it the pool) until it is
    // destroyed, after the tree: the chunks go back only then.
    Transaction reader = begin_or_fail(tree, Mode::ReadOnly);
    Result<Iterator> it = reader.range("k000100", "k000200");
    require_ok(it.status());
    moved(it->seek_first(), *it);
    REQUIRE(it->valid());
    const std::string first_value(*it->value());
    CHECK(first_value == value_of(100));
    require_ok(tree.close());
    CHECK(blocks->live_blocks() > 0);
  }
  CHECK(blocks->live_blocks() == 0);
  CHECK(blocks->bad_releases() == 0);

  // A platform whose memory is the heap's keeps the cache's blocks on the heap.
  auto heap = new_platform();
  Tree tree = open_or_fail(builder(heap).with_block_cache_capacity(kCache));
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set("k", "v"));
  require_ok(tx.commit().wait());
  require_ok(tree.flush().wait());
  Transaction reader = begin_or_fail(tree, Mode::ReadOnly);
  Result<std::optional<std::string>> got = reader.get("k");
  require_ok(got.status());
  CHECK(got.value() == "v");
  CHECK(tree.stats().block_cache_pool_bytes == 0);
}

TEST_CASE("a tree carves its memtables from its platform's memory blocks", "[tree][memory]") {
  constexpr size_t kPreferred = 96 * 1024;
  auto blocks = std::make_shared<CountingBlocks>(kPreferred);
  auto p = std::make_shared<BlocksPlatform>(new_platform(), blocks);
  auto write_rows = [](const Tree& tree, int rows) {
    for (int i = 0; i < rows; i += 100) {
      Transaction tx = begin_or_fail(tree);
      for (int j = i; j < i + 100; ++j) {
        char key[16];
        std::snprintf(key, sizeof(key), "k%06d", j);
        require_ok(tx.set(key, std::string(200, static_cast<char>('a' + j % 26))));
      }
      require_ok(tx.commit().wait());
    }
  };
  SECTION("memtables of 16 preferred blocks or more use that size") {
    {
      Tree tree = open_or_fail(
          TreeBuilder().with_path("db").with_platform(p).with_memtable_size(16 * kPreferred));
      write_rows(tree, 3000);
      CHECK(blocks->live_blocks() >= 6);  // 3,000 rows of ~230 bytes
      CHECK(blocks->sizes() == std::set<size_t>{kPreferred});
      // A reader opened before a flush keeps its memtable, and so its blocks, past the close.
      Transaction reader = begin_or_fail(tree, Mode::ReadOnly);
      require_ok(tree.flush().wait());
      Result<std::optional<std::string>> got = reader.get("k000042");
      require_ok(got.status());
      CHECK(got.value() == std::string(200, static_cast<char>('a' + 42 % 26)));
      require_ok(tree.close());
    }
    CHECK(blocks->live_blocks() == 0);
    CHECK(blocks->bad_releases() == 0);
  }
  SECTION("smaller memtables keep blocks of an eighth of their size") {
    {
      Tree tree =
          open_or_fail(TreeBuilder().with_path("db").with_platform(p).with_memtable_size(1 << 20));
      write_rows(tree, 1000);
      CHECK(blocks->sizes() == std::set<size_t>{128 * 1024});
    }
    CHECK(blocks->live_blocks() == 0);
    CHECK(blocks->bad_releases() == 0);
  }
  SECTION("a platform with no memory source is refused, and nothing is created") {
    auto base = new_platform();
    auto none = std::make_shared<BlocksPlatform>(base, nullptr);
    Result<Tree> r = TreeBuilder().with_path("db").with_platform(none).build();
    CHECK(r.status().code() == Code::InvalidArgument);
    CHECK(r.status().to_string().find("memory_blocks") != std::string::npos);
    CHECK(builder(base).with_create_if_missing(false).build().status().code() == Code::NotFound);
  }
}
