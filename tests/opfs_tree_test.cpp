// skv-test-modules: util wal memtable sstable version engine memory opfs fake_slots
// The whole engine on the OPFS slot pool, over the fake handle table: writes, flushes,
// compactions and reopening; simulated power failures and killed workers (every Immediate commit
// survives, the visible commits are a prefix); pool exhaustion as a clear Quota error; a damaged
// slot header as corruption. (The memory module is linked only for default_platform(), which the
// test build adds to every engine test; the trees here all run on OpfsPlatform.)

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "platform/opfs/opfs_platform.h"
#include "platform/opfs/slot_header.h"
#include "support/fake_slots/fake_slot_handles.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

// A browser profile in miniature: the OPFS files of database "db" and a platform over them.
struct World {
  explicit World(size_t slots, OpfsOptions options = OpfsOptions())
      : disk(std::make_shared<FakeSlotDisk>(slots)) {
    std::shared_ptr<FakeSlotDisk> d = disk;
    platform = std::make_shared<OpfsPlatform>(
        [d](const std::string&, bool) -> Result<std::shared_ptr<SlotHandles>> {
          return d->handles();
        },
        options);
  }

  // What the JS wrapper does between calls: open more handles when the reserve runs low.
  void top_up() {
    OpfsStorage* storage = platform->storage("db");
    if (storage == nullptr || !storage->needs_more_slots()) return;
    const size_t n = storage->slots_wanted();
    disk->add_slots(n);
    require_ok(storage->add_slots(n));
  }

  // Runs queued background work in bounded steps, topping up in between.
  void run_background(size_t steps) {
    for (size_t i = 0; i < steps; ++i) {
      top_up();
      if (platform->queue_executor()->run_pending(1) == 0) break;
    }
    top_up();
  }

  std::shared_ptr<FakeSlotDisk> disk;
  std::shared_ptr<OpfsPlatform> platform;
};

std::string key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06d", i);
  return buf;
}

std::string commit_key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "c%06d", i);
  return buf;
}

// The commits visible after reopening, as a count n, after checking they are exactly 0..n-1.
int visible_prefix(const Tree& tree, int attempted) {
  Model all = read_all(tree);
  int n = 0;
  while (n < attempted && all.count(commit_key(n)) > 0) ++n;
  for (int i = n; i < attempted; ++i) {
    INFO("commit " << i << " is visible after a hole at " << n);
    REQUIRE(all.count(commit_key(i)) == 0);
  }
  if (n > 0) CHECK(all["last"] == std::to_string(n - 1));
  return n;
}

// The longest run of zero bytes ending a WAL segment's data, over every slot holding one.
size_t longest_wal_zero_tail(const FakeSlotDisk& disk) {
  size_t longest = 0;
  for (size_t slot = 0; slot < disk.slot_count(); ++slot) {
    const std::string bytes = disk.bytes(slot);
    const SlotHeaderRead r = read_slot_header(bytes.substr(0, kSlotHeaderArea));
    const std::string& name = r.header.name;
    if (r.outcome != SlotHeaderRead::Outcome::Valid || !r.header.used || name.size() < 4 ||
        name.compare(name.size() - 4, 4, ".wal") != 0 || bytes.size() <= kSlotHeaderArea) {
      continue;
    }
    const size_t last = bytes.find_last_not_of('\0');
    const size_t tail = last == std::string::npos || last < kSlotHeaderArea
                            ? bytes.size() - kSlotHeaderArea
                            : bytes.size() - last - 1;
    longest = std::max(longest, tail);
  }
  return longest;
}

}  // namespace

TEST_CASE("the engine runs on the slot pool: write, flush, compact, reopen", "[opfs][tree]") {
  World w(8);
  Model model;
  Rng rng(11);
  {
    Tree tree = open_or_fail(small_tree(w.platform));
    for (int batch = 0; batch < 60; ++batch) {
      Transaction tx = begin_or_fail(tree);
      for (int j = 0; j < 50; ++j) {
        const std::string k = key(static_cast<int>(rng.uniform(2000)));
        const std::string v(10 + rng.uniform(90), static_cast<char>('a' + batch % 26));
        require_ok(tx.set(k, v));
        model[k] = v;
      }
      require_ok(tx.commit().wait());
      w.run_background(4);
    }
    // The open WAL segment keeps room ahead of its records: zeros fill the rest of its slot.
    CHECK(longest_wal_zero_tail(*w.disk) >= 4096);
    w.top_up();
    require_ok(tree.flush().wait());
    w.run_background(1000);
    require_ok(tree.compact_all());
    w.run_background(1000);
    TreeStats st = tree.stats();
    CHECK(st.flushes > 0);
    CHECK(st.compactions > 0);
    CHECK(read_all(tree) == model);

    OpfsStorage* storage = w.platform->storage("db");
    REQUIRE(storage != nullptr);
    SlotPoolStats pool = storage->stats();
    CHECK(pool.damaged == 0);
    // Every used slot holds a listed file or CURRENT: removed files gave their slots back.
    Result<std::vector<std::string>> logs = storage->logs().list();
    Result<std::vector<std::string>> objects = storage->objects().list();
    REQUIRE(logs.ok());
    REQUIRE(objects.ok());
    CHECK(pool.used == logs.value().size() + objects.value().size() + 1);
    CHECK(logs.value().size() <= 3);
    // Appends were batched: far fewer handle writes than commits' records.
    CHECK(pool.handle_writes < 400);
    // One more commit after the flush: the newest segment has records, and zeros after them.
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("after-flush", "x"));
    model["after-flush"] = "x";
    require_ok(tx.commit().wait());
    CHECK(longest_wal_zero_tail(*w.disk) >= 4096);
    require_ok(tree.close());
  }
  // A clean close cuts them off: every segment ends at its last record (whose bytes here are
  // never a long run of zeros).
  CHECK(longest_wal_zero_tail(*w.disk) < 64);
  CHECK(w.platform->storage("db") == nullptr);
  Tree tree = open_or_fail(small_tree(w.platform));
  CHECK(read_all(tree) == model);
  // Reopening deleted what no version needs: one slot per live table, plus the logs and CURRENT.
  TreeStats st = tree.stats();
  int tables = 0;
  for (int level = 0; level < st.level_count; ++level) tables += st.files_per_level[level];
  OpfsStorage* storage = w.platform->storage("db");
  REQUIRE(storage != nullptr);
  Result<std::vector<std::string>> objects = storage->objects().list();
  REQUIRE(objects.ok());
  CHECK(objects.value().size() == static_cast<size_t>(tables));
}

TEST_CASE("after a power failure every Immediate commit is there and the rest is a prefix",
          "[opfs][tree][crash]") {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    Rng rng(seed);
    World w(6);
    int attempted = 0;
    int durable_floor = 0;
    for (int life = 0; life < 3; ++life) {
      {
        Tree tree = open_or_fail(small_tree(w.platform));
        const int before = visible_prefix(tree, attempted);
        REQUIRE(before >= durable_floor);
        attempted = before;
        OpfsStorage* storage = w.platform->storage("db");
        REQUIRE(storage != nullptr);
        CHECK(storage->damaged_slots().empty());
        const int commits = 1 + static_cast<int>(rng.uniform(250));
        for (int c = 0; c < commits; ++c) {
          Transaction tx = begin_or_fail(tree);
          const int i = attempted;
          require_ok(tx.set(commit_key(i), std::string(rng.uniform(300), 'v')));
          require_ok(tx.set("last", std::to_string(i)));
          const Durability d = rng.one_in(4) ? Durability::Immediate : Durability::Eventual;
          tx.set_durability(d);
          require_ok(tx.commit().wait());
          ++attempted;
          if (d == Durability::Immediate) durable_floor = attempted;
          if (rng.one_in(8)) w.run_background(1 + rng.uniform(3));
          w.top_up();
        }
        if (rng.one_in(4)) {
          w.disk->terminate();  // the worker is killed: written bytes survive, buffers do not
        } else {
          FakeSlotDisk::CrashOptions crash;
          crash.seed = rng.next();
          crash.tear = rng.one_in(2);
          crash.reorder = rng.one_in(3);  // unflushed writes land in any order
          w.disk->crash(crash);
        }
        (void)tree.close();  // the handles are dead: closing reports it, nothing more
      }
    }
    Tree tree = open_or_fail(small_tree(w.platform));
    REQUIRE(visible_prefix(tree, attempted) >= durable_floor);
  }
}

TEST_CASE("a pool that runs out of slots fails with a clear Quota error, data intact",
          "[opfs][tree][reserve]") {
  World w(5);  // MANIFEST, CURRENT, a WAL, and two free: the first flush cannot find a slot
  Status failure;
  int durable = 0;
  {
    Tree tree = open_or_fail(small_tree(w.platform));
    for (int i = 0; i < 2000 && failure.ok(); ++i) {
      Transaction tx = begin_or_fail(tree);
      require_ok(tx.set(commit_key(i), std::string(200, 'x')));
      require_ok(tx.set("last", std::to_string(i)));
      tx.set_durability(Durability::Immediate);
      failure = tx.commit().wait();
      if (failure.ok()) durable = i + 1;
      if (failure.ok()) w.platform->queue_executor()->run_pending(16);
    }
    (void)tree.close();
  }
  INFO(failure.to_string());
  REQUIRE_FALSE(failure.ok());
  CHECK(failure.code() == Code::Quota);
  CHECK(failure.message().find("slot pool exhausted") != std::string::npos);
  CHECK(durable > 0);
  // More slots (the wrapper's top-up), and the database opens with every acknowledged commit.
  w.disk->add_slots(6);
  Tree tree = open_or_fail(small_tree(w.platform));
  CHECK(visible_prefix(tree, durable + 1) >= durable);
}

TEST_CASE("a damaged slot header stops the open with corruption naming the slot",
          "[opfs][tree][corruption]") {
  World w(8);
  {
    Tree tree = open_or_fail(small_tree(w.platform));
    Transaction tx = begin_or_fail(tree);
    for (int i = 0; i < 300; ++i) require_ok(tx.set(key(i), std::string(40, 'v')));
    require_ok(tx.commit().wait());
    require_ok(tree.flush().wait());
    w.run_background(100);
    require_ok(tree.close());
  }
  // Damage both header copies of the slot holding the table.
  size_t table_slot = w.disk->slot_count();
  for (size_t s = 0; s < w.disk->slot_count(); ++s) {
    const std::string head = w.disk->bytes(s).substr(0, kSlotHeaderCopySize);
    if (head.find(".sst") != std::string::npos) table_slot = s;
  }
  REQUIRE(table_slot < w.disk->slot_count());
  w.disk->flip(table_slot, 40);
  w.disk->flip(table_slot, kSlotHeaderCopySize + 40);
  Result<Tree> t = small_tree(w.platform).build();
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == Code::Corruption);
  CHECK(t.status().message().find("(slot " + std::to_string(table_slot) + ")") !=
        std::string::npos);
}
