// skv-test-modules: util memory fault
// The fault-injecting platform wrapper over the in-memory platform: the rules (nth, times,
// one_in, target, first rule decides), that a failed call reaches nothing (the target's files,
// names and pointers are as they were), messages that name the file, the call counts by kind and
// by target, and that without a policy every call is forwarded unchanged.

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "platform/fault/fault_platform.h"
#include "platform/memory/memory_platform.h"
#include "support/storage_helpers.h"

using namespace skv;
using namespace skv::testing;

namespace {

struct Fixture {
  std::shared_ptr<MemoryPlatform> memory = std::make_shared<MemoryPlatform>();
  FaultPlatform p{memory};
};

// The target's view of one file, or null when it has no such file.
std::unique_ptr<MemoryFileInfo> info(const MemoryPlatform& m, const std::string& name) {
  auto files = m.list_files("db");
  REQUIRE(files.ok());
  for (const MemoryFileInfo& f : *files) {
    if (f.name == name) return std::make_unique<MemoryFileInfo>(f);
  }
  return nullptr;
}

}  // namespace

TEST_CASE("without a policy every call reaches the target unchanged", "[fault]") {
  Fixture fx;
  auto s = open_db(fx.p);
  CHECK(s->location() == "mem:db");
  auto f = create_log(*s, "000001.wal", "hello", true);
  CHECK(f->name() == "000001.wal");
  CHECK(f->size() == 5);
  CHECK(read_all(*f) == "hello");
  auto w = s->objects().create("000002.sst");
  REQUIRE(w.ok());
  REQUIRE((*w)->append("table").ok());
  CHECK((*w)->size() == 5);
  REQUIRE((*w)->finish().ok());
  REQUIRE(s->write_pointer("CURRENT", "MANIFEST-000003\n").ok());
  REQUIRE(s->sync_dir().ok());

  // The target holds exactly what was written, with the durability it was given.
  CHECK(*fx.memory->read_file("db", "000001.wal") == "hello");
  CHECK(info(*fx.memory, "000001.wal")->synced_size == 5);
  CHECK(info(*fx.memory, "000002.sst")->finished);
  auto r = s->objects().open("000002.sst");
  REQUIRE(r.ok());
  CHECK((*r)->name() == "000002.sst");
  CHECK((*r)->size() == 5);
  CHECK(*s->read_pointer("CURRENT") == "MANIFEST-000003\n");
  CHECK(sorted(s->logs().list()) == std::vector<std::string>{"000001.wal"});
  CHECK(sorted(s->objects().list()) == std::vector<std::string>{"000002.sst"});
  CHECK(fx.p.faults_injected() == 0);
  // The lock is the target's: a second open through either platform is Busy.
  CHECK(fx.p.open_storage("db", StorageOptions{}).status().code() == Code::Busy);
  CHECK(fx.memory->open_storage("db", StorageOptions{}).status().code() == Code::Busy);
  // Clock and executor are the target's own.
  CHECK(&fx.p.clock() == &fx.memory->clock());
  CHECK(&fx.p.executor() == &fx.memory->executor());
}

TEST_CASE("fault rules", "[fault]") {
  Fixture fx;
  FaultPlatform& p = fx.p;
  auto s = open_db(p);
  auto f = create_log(*s, "000001.wal", "", false);

  SECTION("nth_call fails one call, which changes nothing") {
    p.set_fault_policy(FaultPolicy{{FaultRule::nth_call(FaultOp::Write, 2)}, 0});
    uint64_t writes_before = p.call_count(FaultOp::Write);
    REQUIRE(f->append("a").ok());
    Status st = f->append("b");
    CHECK(st.code() == Code::IO);
    CHECK(st.message() == "mem:db/000001.wal: injected write fault");
    CHECK(f->size() == 1);
    REQUIRE(f->append("c").ok());
    CHECK(read_all(*f) == "ac");
    CHECK(p.faults_injected() == 1);
    CHECK(p.call_count(FaultOp::Write) == writes_before + 3);
  }
  SECTION("every_call fails until cleared") {
    p.set_fault_policy(FaultPolicy{{FaultRule::every_call(FaultOp::SyncDir, Code::Quota)}, 0});
    for (int i = 0; i < 3; ++i) {
      Status st = s->sync_dir();
      CHECK(st.code() == Code::Quota);
      CHECK(st.message() == "mem:db: injected sync_dir fault");
    }
    CHECK(p.faults_injected() == 3);
    p.clear_faults();
    CHECK(s->sync_dir().ok());
    CHECK(p.call_count(FaultOp::SyncDir) == 4);
  }
  SECTION("nth and times bound a run of failures") {
    FaultRule rule = FaultRule::nth_call(FaultOp::Sync, 2);
    rule.times = 2;
    p.set_fault_policy(FaultPolicy{{rule}, 0});
    std::vector<bool> ok;
    for (int i = 0; i < 5; ++i) ok.push_back(f->sync().ok());
    CHECK(ok == std::vector<bool>{true, false, false, true, true});
  }
  SECTION("target_contains picks the files") {
    FaultRule rule = FaultRule::every_call(FaultOp::Create);
    rule.target_contains = "MANIFEST";
    p.set_fault_policy(FaultPolicy{{rule}, 0});
    CHECK(s->logs().create("000002.wal").ok());
    CHECK(s->logs().create("MANIFEST-000001").status().code() == Code::IO);
    CHECK(s->objects().create("000003.sst").ok());
    CHECK(sorted(s->logs().list()) == std::vector<std::string>{"000001.wal", "000002.wal"});

    rule = FaultRule::every_call(FaultOp::List);
    rule.target_contains = "other";  // list targets the storage's location
    p.set_fault_policy(FaultPolicy{{rule}, 0});
    CHECK(s->logs().list().ok());
    auto o = open_db(p, "other");
    CHECK(o->logs().list().status().code() == Code::IO);
  }
  SECTION("the first rule that fires decides; every rule counts") {
    p.set_fault_policy(FaultPolicy{{FaultRule::nth_call(FaultOp::Write, 1, Code::Quota),
                                    FaultRule::nth_call(FaultOp::Write, 2, Code::IO)},
                                   0});
    CHECK(f->append("a").code() == Code::Quota);
    CHECK(f->append("a").code() == Code::IO);  // the second rule counted the first call
    CHECK(f->append("a").ok());

    // Both rules match call 1; the second, not having fired then, keeps its two failures.
    FaultRule twice = FaultRule::nth_call(FaultOp::Write, 1, Code::IO);
    twice.times = 2;
    p.set_fault_policy(
        FaultPolicy{{FaultRule::nth_call(FaultOp::Write, 1, Code::Quota), twice}, 0});
    CHECK(f->append("a").code() == Code::Quota);
    CHECK(f->append("a").code() == Code::IO);
    CHECK(f->append("a").code() == Code::IO);
    CHECK(f->append("a").ok());
    CHECK(read_all(*f) == "aa");
    CHECK(p.faults_injected() == 5);
  }
  SECTION("one_in draws replay from the seed") {
    auto pattern = [&](uint64_t seed) {
      FaultRule rule = FaultRule::every_call(FaultOp::Read);
      rule.one_in = 3;
      p.set_fault_policy(FaultPolicy{{rule}, seed});
      std::string out;
      char scratch[4];
      std::string_view got;
      for (int i = 0; i < 120; ++i) out += f->read_at(0, 4, scratch, &got).ok() ? '.' : 'X';
      return out;
    };
    std::string a = pattern(42);
    CHECK(a == pattern(42));
    CHECK(a != pattern(43));
    auto failures = std::count(a.begin(), a.end(), 'X');
    CHECK(failures > 20);
    CHECK(failures < 70);
  }
  SECTION("Code::Ok in a rule means IO") {
    p.set_fault_policy(FaultPolicy{{FaultRule::nth_call(FaultOp::Read, 1, Code::Ok)}, 0});
    char scratch[4];
    std::string_view got;
    CHECK(f->read_at(0, 4, scratch, &got).code() == Code::IO);
  }
}

TEST_CASE("a failed call never reaches the target", "[fault]") {
  Fixture fx;
  FaultPlatform& p = fx.p;
  MemoryPlatform& m = *fx.memory;
  auto s = open_db(p);
  auto log = create_log(*s, "000001.wal", "abc", true);
  REQUIRE(log->append("de").ok());
  REQUIRE(s->write_pointer("CURRENT", "old").ok());
  REQUIRE(s->sync_dir().ok());
  p.set_fault_policy(FaultPolicy{
      {FaultRule::every_call(FaultOp::Read), FaultRule::every_call(FaultOp::Write),
       FaultRule::every_call(FaultOp::Sync), FaultRule::every_call(FaultOp::Create),
       FaultRule::every_call(FaultOp::Open), FaultRule::every_call(FaultOp::Remove),
       FaultRule::every_call(FaultOp::List), FaultRule::every_call(FaultOp::PointerWrite),
       FaultRule::every_call(FaultOp::SyncDir)},
      0});

  // Each call fails with a message naming its file, and the target shows no trace of it.
  Status st = log->append("X");
  CHECK(st.message() == "mem:db/000001.wal: injected write fault");
  st = log->truncate(1);
  CHECK(st.message() == "mem:db/000001.wal: injected write fault");
  st = log->sync();
  CHECK(st.message() == "mem:db/000001.wal: injected sync fault");
  CHECK(*m.read_file("db", "000001.wal") == "abcde");
  CHECK(info(m, "000001.wal")->synced_size == 3);

  auto created = s->logs().create("000002.wal");
  CHECK(created.status().message() == "mem:db/000002.wal: injected create fault");
  CHECK(s->objects().create("000003.sst").status().code() == Code::IO);
  CHECK(info(m, "000002.wal") == nullptr);
  CHECK(info(m, "000003.sst") == nullptr);

  st = s->logs().remove("000001.wal");
  CHECK(st.message() == "mem:db/000001.wal: injected remove fault");
  CHECK(info(m, "000001.wal") != nullptr);

  st = s->write_pointer("CURRENT", "new");
  CHECK(st.message() == "mem:db/CURRENT: injected pointer_write fault");
  CHECK(s->read_pointer("CURRENT").status().message() == "mem:db/CURRENT: injected read fault");
  CHECK(s->logs().open("000001.wal").status().code() == Code::IO);
  CHECK(s->logs().list().status().message() == "mem:db: injected list fault");

  // A new file since the last sync_dir: a failed sync_dir leaves its name undurable.
  p.clear_faults();
  auto w = s->objects().create("000004.sst");
  REQUIRE(w.ok());
  REQUIRE((*w)->append("table").ok());
  p.set_fault_policy(
      FaultPolicy{{FaultRule::every_call(FaultOp::Write), FaultRule::every_call(FaultOp::Sync),
                   FaultRule::every_call(FaultOp::SyncDir)},
                  0});
  CHECK((*w)->append("more").message() == "mem:db/000004.sst: injected write fault");
  CHECK((*w)->size() == 5);
  CHECK((*w)->finish().message() == "mem:db/000004.sst: injected sync fault");
  CHECK_FALSE(info(m, "000004.sst")->finished);
  CHECK(s->sync_dir().code() == Code::IO);
  CHECK_FALSE(info(m, "000004.sst")->name_durable);

  // Once the faults are gone the same handles work, and the target has the old state.
  p.clear_faults();
  REQUIRE((*w)->finish().ok());
  CHECK(info(m, "000004.sst")->finished);
  CHECK(*s->read_pointer("CURRENT") == "old");
  CHECK(read_all(*log) == "abcde");
  m.crash(1, false);
  CHECK(*m.read_file("db", "000001.wal") == "abc");
  CHECK(info(m, "000004.sst") == nullptr);
}

TEST_CASE("call counts by kind and by target", "[fault]") {
  Fixture fx;
  FaultPlatform& p = fx.p;
  auto s = open_db(p);
  auto wal = create_log(*s, "000001.wal", "a", true);
  auto manifest = create_log(*s, "MANIFEST-000002", "m", true);
  REQUIRE(wal->sync().ok());
  REQUIRE(s->sync_dir().ok());
  auto other = open_db(p, "other");
  auto other_wal = create_log(*other, "000001.wal", "b", true);

  CHECK(p.call_count(FaultOp::Sync) == 4);
  CHECK(p.call_count(FaultOp::Sync, ".wal") == 3);
  CHECK(p.call_count(FaultOp::Sync, "mem:db/000001.wal") == 2);
  CHECK(p.call_count(FaultOp::Sync, "MANIFEST") == 1);
  CHECK(p.call_count(FaultOp::Sync, "other/") == 1);
  CHECK(p.call_count(FaultOp::Sync, "") == 4);
  CHECK(p.call_count(FaultOp::Create, ".wal") == 2);
  CHECK(p.call_count(FaultOp::SyncDir, "mem:db") == 1);
  CHECK(p.call_count(FaultOp::Remove, ".wal") == 0);
  CHECK(p.call_count(FaultOp::Sync, ".sst") == 0);

  // Failed calls count too, and a new policy does not restart the counts.
  p.set_fault_policy(FaultPolicy{{FaultRule::every_call(FaultOp::Sync)}, 0});
  CHECK_FALSE(wal->sync().ok());
  p.clear_faults();
  CHECK(p.call_count(FaultOp::Sync, ".wal") == 4);
  CHECK(p.call_count(FaultOp::Sync) == 5);
  CHECK(p.faults_injected() == 1);
}
