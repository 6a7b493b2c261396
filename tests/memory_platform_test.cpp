// skv-test-modules: util memory
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "platform/memory/memory_platform.h"
#include "support/storage_helpers.h"

using namespace skv;
using namespace skv::testing;

namespace {

std::string file_or_empty(const MemoryPlatform& p, const std::string& name) {
  auto r = p.read_file("db", name);
  return r.ok() ? *r : std::string("<absent>");
}

}  // namespace

TEST_CASE("log files round trip", "[memory]") {
  MemoryPlatform p;
  auto s = open_db(p, "db/");  // trailing '/' ignored
  CHECK(s->location() == "mem:db");
  auto f = create_log(*s, "000001.wal", "hello ", false);
  REQUIRE(f->append("world").ok());
  CHECK(f->size() == 11);
  CHECK(f->name() == "000001.wal");

  char scratch[16];
  std::string_view got;
  REQUIRE(f->read_at(6, 16, scratch, &got).ok());
  CHECK(got == "world");
  REQUIRE(f->read_at(11, 4, scratch, &got).ok());
  CHECK(got.empty());
  REQUIRE(f->read_at(100, 4, scratch, &got).ok());
  CHECK(got.empty());

  auto again = s->logs().open("000001.wal");
  REQUIRE(again.ok());
  REQUIRE((*again)->append("!").ok());
  CHECK(read_all(*f) == "hello world!");
  CHECK(*p.read_file("db", "000001.wal") == "hello world!");

  // No room ahead here: the request is declined and the file is as it was.
  CHECK(f->reserve(1 << 20).code() == Code::NotSupported);
  CHECK(f->size() == 12);
  CHECK(*p.read_file("db", "000001.wal") == "hello world!");

  REQUIRE(f->close().ok());
  REQUIRE(f->close().ok());
  CHECK(f->append("x").code() == Code::IO);

  // create() replaces an existing file.
  auto fresh = create_log(*s, "000001.wal", "", false);
  CHECK(fresh->size() == 0);
  CHECK(s->logs().open("missing.wal").status().code() == Code::NotFound);
  CHECK(s->logs().create("a/b").status().code() == Code::InvalidArgument);
  REQUIRE(s->logs().remove("000001.wal").ok());
  Status st = s->logs().remove("000001.wal");
  CHECK(st.code() == Code::NotFound);
  CHECK(st.message().find("mem:db/000001.wal") != std::string::npos);
}

TEST_CASE("objects round trip", "[memory]") {
  MemoryPlatform p;
  auto s = open_db(p);
  auto w = s->objects().create("000005.sst");
  REQUIRE(w.ok());
  REQUIRE((*w)->append("abc").ok());
  REQUIRE((*w)->append("defg").ok());
  CHECK((*w)->size() == 7);
  CHECK(s->objects().open("000005.sst").status().code() == Code::InvalidArgument);
  REQUIRE((*w)->finish().ok());
  CHECK((*w)->append("x").code() == Code::InvalidArgument);

  auto r = s->objects().open("000005.sst");
  REQUIRE(r.ok());
  CHECK((*r)->size() == 7);
  char scratch[8];
  std::string_view got;
  REQUIRE((*r)->read_at(2, 8, scratch, &got).ok());
  CHECK(got == "cdefg");
  CHECK(s->objects().create("000005.sst").status().code() == Code::InvalidArgument);

  {  // a writer destroyed without finish() aborts: the name goes away
    auto dropped = s->objects().create("000006.sst");
    REQUIRE(dropped.ok());
    REQUIRE((*dropped)->append("zz").ok());
  }
  CHECK(s->objects().open("000006.sst").status().code() == Code::NotFound);
  CHECK(p.total_bytes("db") == 7);

  REQUIRE(s->objects().remove("000005.sst").ok());
  CHECK(s->objects().open("000005.sst").status().code() == Code::NotFound);
  // An open reader keeps its bytes, as an unlinked file would.
  REQUIRE((*r)->read_at(0, 3, scratch, &got).ok());
  CHECK(got == "abc");
}

TEST_CASE("list follows the name rule and hides pointers", "[memory]") {
  MemoryPlatform p;
  auto s = open_db(p);
  for (const char* name : {"000001.wal", "MANIFEST-000002", "9.tmp", "notes.txt", "LOCK"}) {
    create_log(*s, name, "x", false);
  }
  write_object(*s, "000003.sst", "t");
  REQUIRE(s->write_pointer("CURRENT", "MANIFEST-000002\n").ok());
  CHECK(sorted(s->logs().list()) ==
        std::vector<std::string>{"000001.wal", "9.tmp", "MANIFEST-000002"});
  CHECK(sorted(s->objects().list()) == std::vector<std::string>{"000003.sst"});

  CHECK(*s->read_pointer("CURRENT") == "MANIFEST-000002\n");
  REQUIRE(s->write_pointer("CURRENT", "MANIFEST-000007\n").ok());
  CHECK(*s->read_pointer("CURRENT") == "MANIFEST-000007\n");
  CHECK(s->read_pointer("OTHER").status().code() == Code::NotFound);
  // Six one-byte files, one object byte and a 16-byte pointer.
  CHECK(p.total_bytes("db") == 5 + 1 + 16);
}

TEST_CASE("the lock is exclusive and released with the Storage", "[memory]") {
  MemoryPlatform p;
  CHECK(p.open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}})
            .status()
            .code() == Code::NotFound);
  CHECK_FALSE(p.database_exists("db"));
  auto s = open_db(p);
  CHECK(p.database_exists("db/"));
  CHECK(p.open_storage("db", StorageOptions{}).status().code() == Code::Busy);
  CHECK(p.open_storage("db/", StorageOptions{.create_if_missing = false, .marker = {}})
            .status()
            .code() == Code::Busy);
  CHECK(p.remove_database("db").code() == Code::Busy);
  auto other = open_db(p, "a");
  CHECK(p.databases() == std::vector<std::string>{"a", "db"});

  create_log(*s, "000001.wal", "kept", true);
  s.reset();
  auto again = p.open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}});
  REQUIRE(again.ok());
  CHECK(*p.read_file("db", "000001.wal") == "kept");
  again->reset();
  REQUIRE(p.remove_database("db").ok());
  CHECK_FALSE(p.database_exists("db"));
  CHECK(p.remove_database("db").code() == Code::NotFound);
  CHECK(p.open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}})
            .status()
            .code() == Code::NotFound);
}

TEST_CASE("without create a storage that lacks the marker is not a database", "[memory]") {
  MemoryPlatform p;
  const StorageOptions existing{.create_if_missing = false, .marker = "CURRENT"};
  {
    auto s = open_db(p);
    create_log(*s, "000001.wal", "bytes", true);
  }
  Result<std::unique_ptr<Storage>> refused = p.open_storage("db", existing);
  CHECK(refused.status().code() == Code::NotFound);
  CHECK(refused.status().message().find("not an skv database") != std::string::npos);
  {
    auto s = open_db(p);
    REQUIRE(s->write_pointer("CURRENT", "MANIFEST-000002\n").ok());
  }
  CHECK(p.open_storage("db", existing).ok());
}

TEST_CASE("crash keeps exactly what was made durable", "[memory][crash]") {
  MemoryPlatform p;
  auto s = open_db(p);

  SECTION("unsynced bytes are dropped") {
    auto f = create_log(*s, "000001.wal", "abc", true);
    REQUIRE(f->append("def").ok());
    REQUIRE(s->sync_dir().ok());
    p.crash(1, false);
    auto s2 = open_db(p);
    CHECK(file_or_empty(p, "000001.wal") == "abc");
    CHECK(p.total_bytes("db") == 3);
  }
  SECTION("names created without sync_dir vanish, pointers stay") {
    create_log(*s, "000001.wal", "abc", true);
    write_object(*s, "000002.sst", "table");
    REQUIRE(s->write_pointer("CURRENT", "x").ok());
    p.crash(1, false);
    auto s2 = open_db(p);
    CHECK(sorted(s2->logs().list()).empty());
    CHECK(sorted(s2->objects().list()).empty());
    CHECK(*s2->read_pointer("CURRENT") == "x");
    CHECK(p.total_bytes("db") == 1);
  }
  SECTION("removed files come back with their durable bytes") {
    create_log(*s, "000001.wal", "abc", true);
    write_object(*s, "000002.sst", "table");
    REQUIRE(s->sync_dir().ok());
    REQUIRE(s->logs().remove("000001.wal").ok());
    REQUIRE(s->objects().remove("000002.sst").ok());
    p.crash(1, false);
    auto s2 = open_db(p);
    CHECK(file_or_empty(p, "000001.wal") == "abc");
    auto r = s2->objects().open("000002.sst");
    REQUIRE(r.ok());
    CHECK((*r)->size() == 5);
  }
  SECTION("a file created again since sync_dir reverts to the older one") {
    create_log(*s, "000001.wal", "old", true);
    REQUIRE(s->sync_dir().ok());
    create_log(*s, "000001.wal", "new", true);
    auto infos = p.list_files("db");
    REQUIRE(infos.ok());
    REQUIRE(infos->size() == 1);
    CHECK_FALSE((*infos)[0].name_durable);
    p.crash(1, false);
    CHECK(file_or_empty(p, "000001.wal") == "old");
  }
  SECTION("a truncate since the last sync reverts") {
    auto f = create_log(*s, "000001.wal", "hello world", true);
    create_log(*s, "000002.wal", "hello world", true);
    REQUIRE(s->sync_dir().ok());
    REQUIRE(f->truncate(5).ok());
    REQUIRE(f->append("!!").ok());
    CHECK(read_all(*f) == "hello!!");
    auto second = s->logs().open("000002.wal");
    REQUIRE(second.ok());
    REQUIRE((*second)->truncate(5).ok());
    REQUIRE((*second)->sync().ok());
    CHECK((*second)->truncate(6).code() == Code::InvalidArgument);
    p.crash(1, true);
    CHECK(file_or_empty(p, "000001.wal") == "hello world");
    CHECK(file_or_empty(p, "000002.wal") == "hello");
  }
  SECTION("an unfinished object whose name was synced survives as a finished one") {
    auto w = s->objects().create("000004.sst");
    REQUIRE(w.ok());
    REQUIRE((*w)->append("partial").ok());
    REQUIRE(s->sync_dir().ok());
    p.crash(1, false);
    auto s2 = open_db(p);
    auto r = s2->objects().open("000004.sst");
    REQUIRE(r.ok());
    CHECK((*r)->size() == 0);
  }
}

TEST_CASE("torn tails replay from the seed", "[memory][crash]") {
  const std::string synced = "durable-";
  const std::string tail(200, 't');
  auto run = [&](uint64_t seed) {
    MemoryPlatform p;
    auto s = open_db(p);
    auto a = create_log(*s, "000001.wal", synced, true);
    REQUIRE(a->append(tail).ok());
    auto b = create_log(*s, "000002.wal", synced, true);
    REQUIRE(b->append(tail).ok());
    REQUIRE(s->sync_dir().ok());
    p.crash(seed, true);
    return std::make_pair(*p.read_file("db", "000001.wal"), *p.read_file("db", "000002.wal"));
  };
  std::set<size_t> lengths;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    auto first = run(seed);
    CHECK(first == run(seed));
    for (const std::string& got : {first.first, first.second}) {
      REQUIRE(got.size() >= synced.size());
      REQUIRE(got.size() <= synced.size() + tail.size());
      CHECK(got == (synced + tail).substr(0, got.size()));
      lengths.insert(got.size());
    }
  }
  CHECK(lengths.size() > 8);  // the cut really depends on the seed
}

TEST_CASE("handles from before a crash fail and change nothing", "[memory][crash]") {
  MemoryPlatform p;
  auto old = open_db(p);
  auto f = create_log(*old, "000001.wal", "abc", true);
  write_object(*old, "000002.sst", "table");
  REQUIRE(old->sync_dir().ok());
  auto reader = old->objects().open("000002.sst");
  REQUIRE(reader.ok());
  auto writer = old->objects().create("000003.sst");
  REQUIRE(writer.ok());
  p.crash(3, false);

  auto s = open_db(p);  // the crash released the lock
  char scratch[8];
  std::string_view got;
  CHECK(f->append("zzz").code() == Code::IO);
  CHECK(f->sync().code() == Code::IO);
  CHECK(f->truncate(0).code() == Code::IO);
  CHECK(f->read_at(0, 3, scratch, &got).code() == Code::IO);
  CHECK((*reader)->read_at(0, 3, scratch, &got).code() == Code::IO);
  CHECK((*writer)->append("x").code() == Code::IO);
  CHECK((*writer)->finish().code() == Code::IO);
  CHECK(old->sync_dir().code() == Code::IO);
  CHECK(old->write_pointer("CURRENT", "x").code() == Code::IO);
  CHECK(old->logs().create("000009.wal").status().code() == Code::IO);
  CHECK(old->logs().remove("000001.wal").code() == Code::IO);
  CHECK(old->objects().list().status().code() == Code::IO);
  CHECK(old->logs().open("000001.wal").status().message().find("mem:db/000001.wal") !=
        std::string::npos);

  CHECK(file_or_empty(p, "000001.wal") == "abc");
  CHECK(s->read_pointer("CURRENT").status().code() == Code::NotFound);
  CHECK(sorted(s->objects().list()) == std::vector<std::string>{"000002.sst"});
  // Destroying the stale Storage does not release the new one's lock.
  old.reset();
  writer->reset();
  CHECK(p.open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}})
            .status()
            .code() == Code::Busy);
}

TEST_CASE("quota fails appends and pointer writes, leaving the file unchanged", "[memory]") {
  MemoryPlatform p;
  p.set_quota("db", 10);  // before the database exists
  auto s = open_db(p);
  auto f = create_log(*s, "000001.wal", "12345678", false);
  Status st = f->append("abc");
  CHECK(st.code() == Code::Quota);
  CHECK(st.message().find("mem:db/000001.wal") != std::string::npos);
  CHECK(*p.read_file("db", "000001.wal") == "12345678");
  CHECK(s->write_pointer("CURRENT", "abc").code() == Code::Quota);
  CHECK(s->read_pointer("CURRENT").status().code() == Code::NotFound);
  REQUIRE(s->write_pointer("CURRENT", "ab").ok());
  CHECK(p.total_bytes("db") == 10);

  auto w = s->objects().create("000002.sst");
  REQUIRE(w.ok());
  CHECK((*w)->append("x").code() == Code::Quota);
  REQUIRE(s->logs().remove("000001.wal").ok());  // frees its bytes
  CHECK((*w)->append("x").ok());

  p.set_quota("db", 1);  // bytes already stored stay
  CHECK(p.total_bytes("db") == 3);
  CHECK((*w)->append("y").code() == Code::Quota);
  p.set_quota("db", MemoryPlatform::kNoQuota);
  CHECK((*w)->append(std::string(1000, 'y')).ok());
  CHECK(p.total_bytes() == 1003);
}

TEST_CASE("corruption helpers edit files durably", "[memory]") {
  MemoryPlatform p;
  auto s = open_db(p);
  auto f = create_log(*s, "000001.wal", "abcdef", true);
  REQUIRE(f->append("gh").ok());
  write_object(*s, "000002.sst", "table");
  REQUIRE(s->sync_dir().ok());
  auto w = s->objects().create("000003.sst");
  REQUIRE(w.ok());

  auto infos = p.list_files("db");
  REQUIRE(infos.ok());
  REQUIRE(infos->size() == 3);
  const MemoryFileInfo& log = (*infos)[0];
  CHECK(log.name == "000001.wal");
  CHECK(log.size == 8);
  CHECK(log.synced_size == 6);
  CHECK(log.name_durable);
  CHECK_FALSE(log.is_object);
  CHECK((*infos)[1].is_object);
  CHECK((*infos)[1].finished);
  CHECK_FALSE((*infos)[2].name_durable);
  CHECK_FALSE((*infos)[2].finished);
  CHECK(p.list_files("nope").status().code() == Code::NotFound);

  REQUIRE(p.flip_byte("db", "000001.wal", 0).ok());
  REQUIRE(p.flip_byte("db", "000001.wal", 1, 0xff).ok());
  CHECK(*p.read_file("db", "000001.wal") == std::string("`") + char(~'b') + "cdefgh");
  CHECK(read_all(*f) == *p.read_file("db", "000001.wal"));
  REQUIRE(p.overwrite_file("db", "000002.sst", 1, "XY").ok());
  CHECK(p.overwrite_file("db", "000002.sst", 4, "XY").code() == Code::InvalidArgument);
  CHECK(p.overwrite_file("db", "000002.sst", 9, "").code() == Code::InvalidArgument);
  CHECK(p.flip_byte("db", "000002.sst", 5).code() == Code::InvalidArgument);
  CHECK(p.flip_byte("db", "missing", 0).code() == Code::NotFound);
  CHECK(p.read_file("db", "missing").status().code() == Code::NotFound);
  CHECK(p.truncate_file("db", "000002.sst", 6).code() == Code::InvalidArgument);
  REQUIRE(p.truncate_file("db", "000002.sst", 4).ok());
  CHECK(p.total_bytes("db") == 12);

  p.crash(9, false);
  CHECK(*p.read_file("db", "000001.wal") == std::string("`") + char(~'b') + "cdef");
  CHECK(*p.read_file("db", "000002.sst") == "tXYl");
  CHECK(p.total_bytes("db") == 10);
}

TEST_CASE("clock and executor", "[memory]") {
  MemoryPlatform p;
  REQUIRE(p.queue_executor() != nullptr);
  CHECK(&p.executor() == p.queue_executor());
  CHECK_FALSE(p.executor().concurrent());
  int ran = 0;
  p.executor().schedule([&] { ++ran; });
  CHECK(ran == 0);
  CHECK(p.executor().run_pending(10) == 1);
  CHECK(ran == 1);

  uint64_t t0 = p.clock().now_nanos();
  CHECK(t0 == FakeClock::kDefaultStart);
  CHECK(p.clock().now_nanos() == t0 + 1);
  p.fake_clock().advance(1000);
  CHECK(p.fake_clock().peek_nanos() == t0 + 1002);

  auto queue = std::make_shared<QueueExecutor>();
  MemoryPlatform given(queue);
  CHECK(given.queue_executor() == nullptr);
  CHECK(&given.executor() == queue.get());
}
