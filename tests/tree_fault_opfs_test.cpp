// skv-test-modules: util wal memtable sstable version engine memory opfs fake_slots fault
// The fault wrapper over the OPFS platform (its slot pool over the fake handle table, as in
// opfs_tree_test.cpp): a failed WAL sync and a failed table write surface as errors naming the
// file ("opfs:db/...") and the cause, never reach the slot files (no flush of a slot is asked
// for), and the database reopens with every acknowledged commit once the fault is gone.

#include <memory>
#include <string>

#include "platform/fault/fault_platform.h"
#include "platform/opfs/opfs_platform.h"
#include "support/fake_slots/fake_slot_handles.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

// The OPFS files of database "db", the platform over them, and the fault wrapper around that.
struct World {
  explicit World(size_t slots) : disk(std::make_shared<FakeSlotDisk>(slots)) {
    std::shared_ptr<FakeSlotDisk> d = disk;
    opfs = std::make_shared<OpfsPlatform>(
        [d](const std::string&, bool) -> Result<std::shared_ptr<SlotHandles>> {
          return d->handles();
        });
    platform = std::make_shared<FaultPlatform>(opfs);
  }

  std::shared_ptr<FakeSlotDisk> disk;
  std::shared_ptr<OpfsPlatform> opfs;
  std::shared_ptr<FaultPlatform> platform;
};

}  // namespace

TEST_CASE("OPFS: a failed WAL sync fails the commit, no slot is flushed, reopen recovers",
          "[fault][opfs]") {
  World w(16);
  {
    Tree tree = open_or_fail(small_tree(w.platform));
    require_ok(commit_one(tree, "before"));
    FaultRule rule = FaultRule::nth_call(FaultOp::Sync, 1);
    rule.target_contains = ".wal";
    w.platform->set_fault_policy(FaultPolicy{{rule}, 0});
    const uint64_t flushes = w.disk->calls(FakeSlotDisk::Op::Flush);
    Status s = commit_one(tree, "failed");
    INFO(s.to_string());
    CHECK(s.code() == Code::IO);
    CHECK(s.message().find("opfs:db/") != std::string::npos);
    CHECK(s.message().find(".wal: injected sync fault") != std::string::npos);
    CHECK(w.disk->calls(FakeSlotDisk::Op::Flush) == flushes);  // the sync never reached a slot
    w.platform->clear_faults();
    Status later = commit_one(tree, "later");
    CHECK(later.code() == Code::IO);
    CHECK(later.message().find("write-ahead log") != std::string::npos);
    (void)tree.close();
  }
  Tree tree = open_or_fail(small_tree(w.platform));
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "before") == "v-before");
  CHECK_FALSE(get_or_fail(r, "later").has_value());
  require_ok(commit_one(tree, "after"));
  require_ok(tree.close());
}

TEST_CASE("OPFS: a failed table write fails the flush with its cause, reopen recovers",
          "[fault][opfs]") {
  World w(16);
  Model model;
  {
    Tree tree = open_or_fail(small_tree(w.platform));
    for (int i = 0; i < 50; ++i) {
      require_ok(commit_one(tree, "k" + std::to_string(i)));
      model["k" + std::to_string(i)] = "v-k" + std::to_string(i);
    }
    FaultRule rule = FaultRule::every_call(FaultOp::Write);
    rule.target_contains = ".sst";
    w.platform->set_fault_policy(FaultPolicy{{rule}, 0});
    Status s = tree.flush().wait();
    INFO(s.to_string());
    CHECK(s.code() == Code::IO);
    CHECK(s.message().find("opfs:db/") != std::string::npos);
    CHECK(s.message().find(".sst: injected write fault") != std::string::npos);
    CHECK(w.platform->call_count(FaultOp::Sync, ".sst") == 0);  // no table was finished
    CHECK_FALSE(commit_one(tree, "later").ok());
    CHECK(read_all(tree) == model);
    w.platform->clear_faults();
    (void)tree.close();
  }
  Tree tree = open_or_fail(small_tree(w.platform));
  CHECK(read_all(tree) == model);
  require_ok(tree.flush().wait());
  CHECK(w.platform->call_count(FaultOp::Sync, ".sst") > 0);
  CHECK(read_all(tree) == model);
  OpfsStorage* storage = w.opfs->storage("db");
  REQUIRE(storage != nullptr);
  CHECK(storage->damaged_slots().empty());
  require_ok(tree.close());
}
