// skv-test-modules: util opfs fake_slots
// The OPFS slot pool over a fake handle table: slot headers, the error mapping, buffered I/O,
// names and pointer records, recovery (duplicates, damaged headers, torn copies), the reserve,
// crash semantics (a seeded model check) and the platform around it.

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/opfs/opfs_error.h"
#include "platform/opfs/opfs_platform.h"
#include "platform/opfs/opfs_storage.h"
#include "platform/opfs/slot_header.h"
#include "support/fake_slots/fake_slot_handles.h"

using namespace skv;
using Op = FakeSlotDisk::Op;

namespace {

void require_ok(const Status& s) {
  INFO(s.to_string());
  REQUIRE(s.ok());
}

std::unique_ptr<OpfsStorage> open_storage(FakeSlotDisk& disk, OpfsOptions options = {}) {
  auto r = OpfsStorage::open("db", disk.handles(), options);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::unique_ptr<LogFile> create_log(Storage& s, const std::string& name) {
  auto r = s.logs().create(name);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::string read_log(Storage& s, const std::string& name) {
  auto f = s.logs().open(name);
  INFO(f.status().to_string());
  REQUIRE(f.ok());
  std::string out((*f)->size(), '\0');
  std::string_view got;
  require_ok((*f)->read_at(0, out.size(), out.data(), &got));
  return std::string(got);
}

std::optional<std::string> try_read_log(Storage& s, const std::string& name) {
  auto f = s.logs().open(name);
  if (!f.ok()) {
    REQUIRE(f.status().is_not_found());
    return std::nullopt;
  }
  std::string out((*f)->size(), '\0');
  std::string_view got;
  require_ok((*f)->read_at(0, out.size(), out.data(), &got));
  return std::string(got);
}

void write_object(Storage& s, const std::string& name, const std::string& bytes) {
  auto w = s.objects().create(name);
  INFO(w.status().to_string());
  REQUIRE(w.ok());
  require_ok((*w)->append(bytes));
  require_ok((*w)->finish());
}

// A valid header copy written straight into a slot file (for recovery tests).
void put_header(FakeSlotDisk& disk, size_t slot, int copy, const SlotHeader& h) {
  disk.overwrite(slot, static_cast<uint64_t>(copy) * kSlotHeaderCopySize, encode_slot_header(h));
}

SlotHeader used_header(SlotKind kind, const std::string& name, uint64_t generation,
                       std::string payload = {}) {
  SlotHeader h;
  h.used = true;
  h.kind = kind;
  h.name = name;
  h.generation = generation;
  h.payload = std::move(payload);
  return h;
}

// What the crash model check knows of a file: every byte appended, how many are durable, and
// whether its name is.
struct FileModel {
  std::string bytes;
  size_t synced = 0;
  bool name_durable = false;
};

// A file that survived a crash holds its synced bytes; without reordering it holds a prefix of
// what was appended (reordered writes may leave holes past the synced part).
void check_survivor(const std::string& got, const FileModel& m, bool reordered) {
  REQUIRE(got.size() >= m.synced);
  REQUIRE(got.substr(0, m.synced) == m.bytes.substr(0, m.synced));
  if (!reordered) {
    REQUIRE(got.size() <= m.bytes.size());
    REQUIRE(got == m.bytes.substr(0, got.size()));
  }
}

// The invariant that makes header rewrites crash-safe: until a slot is flushed, at least one copy
// holding its newest durable header is untouched by the writes made since.
void check_durable_headers_intact(const FakeSlotDisk& disk) {
  for (size_t slot = 0; slot < disk.slot_count(); ++slot) {
    std::string durable = disk.durable_bytes(slot).substr(0, kSlotHeaderArea);
    const SlotHeaderRead r = read_slot_header(durable);
    if (r.outcome != SlotHeaderRead::Outcome::Valid) continue;
    std::string now = disk.bytes(slot).substr(0, kSlotHeaderArea);
    durable.resize(kSlotHeaderArea, '\0');  // a short file reads as zeros
    now.resize(kSlotHeaderArea, '\0');
    bool intact = false;
    for (size_t copy = 0; copy < 2; ++copy) {
      const std::string part = durable.substr(copy * kSlotHeaderCopySize, kSlotHeaderCopySize);
      const SlotHeaderCopy c = decode_slot_header_copy(part);
      if (c.state == SlotHeaderCopy::State::Valid && c.header.generation == r.max_generation &&
          now.substr(copy * kSlotHeaderCopySize, kSlotHeaderCopySize) == part) {
        intact = true;
      }
    }
    INFO("slot " << slot);
    REQUIRE(intact);
  }
}

}  // namespace

TEST_CASE("slot headers round-trip and reject damage", "[opfs][header]") {
  SlotHeader h = used_header(SlotKind::Pointer, "CURRENT", 42, "MANIFEST-000007\n");
  std::string copy = encode_slot_header(h);
  REQUIRE(copy.size() == kSlotHeaderCopySize);
  SlotHeaderCopy d = decode_slot_header_copy(copy);
  REQUIRE(d.state == SlotHeaderCopy::State::Valid);
  CHECK(d.header.used);
  CHECK(d.header.kind == SlotKind::Pointer);
  CHECK(d.header.generation == 42);
  CHECK(d.header.name == "CURRENT");
  CHECK(d.header.payload == "MANIFEST-000007\n");

  CHECK(decode_slot_header_copy(std::string(kSlotHeaderCopySize, '\0')).state ==
        SlotHeaderCopy::State::Blank);
  CHECK(decode_slot_header_copy({}).state == SlotHeaderCopy::State::Blank);
  for (size_t pos : {0, 9, 14, 20, 33, 40}) {
    std::string bad = copy;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    INFO("byte " << pos);
    CHECK(decode_slot_header_copy(bad).state == SlotHeaderCopy::State::Damaged);
  }

  SECTION("the valid copy with the higher generation wins") {
    std::string area = encode_slot_header(used_header(SlotKind::Log, "old.wal", 5)) +
                       encode_slot_header(used_header(SlotKind::Log, "new.wal", 9));
    SlotHeaderRead r = read_slot_header(area);
    REQUIRE(r.outcome == SlotHeaderRead::Outcome::Valid);
    CHECK(r.copy == 1);
    CHECK(r.header.name == "new.wal");
    CHECK(r.max_generation == 9);
    CHECK_FALSE(r.other_damaged);
  }
  SECTION("a damaged copy beside a valid one is a torn rewrite") {
    std::string torn = encode_slot_header(used_header(SlotKind::Log, "x.wal", 3));
    torn.resize(20);  // the write stopped inside the generation field
    torn.resize(kSlotHeaderCopySize, 'z');
    SlotHeaderRead r = read_slot_header(encode_slot_header(SlotHeader()) + torn);
    REQUIRE(r.outcome == SlotHeaderRead::Outcome::Valid);
    CHECK_FALSE(r.header.used);
    CHECK(r.other_damaged);
  }
  SECTION("zeros beside a damaged copy is a torn first write; two damaged copies are damage") {
    std::string garbage(kSlotHeaderCopySize, 'q');
    CHECK(read_slot_header(garbage).outcome == SlotHeaderRead::Outcome::Blank);
    SlotHeaderRead r = read_slot_header(garbage + garbage);
    CHECK(r.outcome == SlotHeaderRead::Outcome::Damaged);
    CHECK(r.problem.find("copy 0") != std::string::npos);
  }
}

TEST_CASE("DOMException names map to codes and messages name the slot and file", "[opfs][errors]") {
  CHECK(opfs_error_code("QuotaExceededError") == Code::Quota);
  CHECK(opfs_error_code("InvalidStateError") == Code::IO);
  CHECK(opfs_error_code("NotReadableError") == Code::IO);
  Status s = opfs_handle_error(opfs_slot_target("opfs:db", "000007.wal", 3), "write",
                               HandleError::make("QuotaExceededError", "full"));
  CHECK(s.code() == Code::Quota);
  CHECK(s.message() == "opfs:db/000007.wal (slot 3): write: QuotaExceededError: full");

  FakeSlotDisk disk(6);
  auto storage = open_storage(disk);
  auto log = create_log(*storage, "000001.wal");
  disk.inject({Op::Write, -1, 1, 1, "QuotaExceededError"});
  require_ok(log->append("abc"));  // buffered
  Status q = log->sync();
  CHECK(q.code() == Code::Quota);
  CHECK(q.message().find("opfs:db/000001.wal (slot ") != std::string::npos);
  CHECK(q.message().find("QuotaExceededError") != std::string::npos);
  // The bytes stay buffered; a retry writes them.
  require_ok(log->sync());
  disk.inject({Op::Flush, -1, 1, 1, "NotReadableError"});
  require_ok(log->append("d"));
  Status io = log->sync();
  CHECK(io.code() == Code::IO);
  require_ok(log->sync());
  CHECK(read_log(*storage, "000001.wal") == "abcd");
}

TEST_CASE("appends are buffered into one write and reads see buffered bytes", "[opfs][io]") {
  FakeSlotDisk disk(6);
  OpfsOptions options;
  options.write_buffer_bytes = 4096;
  auto storage = open_storage(disk, options);
  auto log = create_log(*storage, "000001.wal");
  const uint64_t writes = disk.calls(Op::Write);
  const uint64_t flushes = disk.calls(Op::Flush);
  std::string all;
  for (int i = 0; i < 100; ++i) {
    std::string rec = "record-" + std::to_string(i) + ";";
    all += rec;
    require_ok(log->append(rec));
  }
  CHECK(disk.calls(Op::Write) == writes);  // nothing written yet
  CHECK(log->size() == all.size());
  std::string buf(20, '\0');
  std::string_view got;
  require_ok(log->read_at(all.size() - 10, 20, buf.data(), &got));
  CHECK(got == all.substr(all.size() - 10));

  require_ok(log->sync());
  CHECK(disk.calls(Op::Flush) == flushes + 1);
  // One data write, plus the repeat of the (now durable) header in its second copy.
  CHECK(disk.calls(Op::Write) == writes + 2);

  // A full buffer is written without a sync; a read spanning file and buffer works.
  const uint64_t before = disk.calls(Op::Write);
  std::string big(5000, 'b');
  require_ok(log->append(big));
  CHECK(disk.calls(Op::Write) == before + 1);
  require_ok(log->append("tail"));
  all += big + "tail";
  CHECK(read_log(*storage, "000001.wal") == all);

  // Truncate within the buffer and within the file.
  require_ok(log->truncate(all.size() - 2));
  all.resize(all.size() - 2);
  CHECK(read_log(*storage, "000001.wal") == all);
  require_ok(log->truncate(10));
  CHECK(read_log(*storage, "000001.wal") == all.substr(0, 10));
  CHECK(log->truncate(11).code() == Code::InvalidArgument);
}

TEST_CASE("objects: finish makes them readable - create, open and abort rules", "[opfs][io]") {
  FakeSlotDisk disk(8);
  auto storage = open_storage(disk);
  auto w = storage->objects().create("000005.sst");
  REQUIRE(w.ok());
  require_ok((*w)->append("hello "));
  require_ok((*w)->append("world"));
  CHECK((*w)->size() == 11);
  CHECK(storage->objects().open("000005.sst").status().code() == Code::InvalidArgument);
  CHECK(storage->objects().create("000005.sst").status().code() == Code::InvalidArgument);
  require_ok((*w)->finish());
  CHECK((*w)->append("x").code() == Code::InvalidArgument);

  auto r = storage->objects().open("000005.sst");
  REQUIRE(r.ok());
  CHECK((*r)->size() == 11);
  std::string buf(64, '\0');
  std::string_view got;
  require_ok((*r)->read_at(6, 64, buf.data(), &got));
  CHECK(got == "world");
  require_ok((*r)->read_at(11, 4, buf.data(), &got));
  CHECK(got.empty());

  {
    auto aborted = storage->objects().create("000006.sst");
    REQUIRE(aborted.ok());
    require_ok((*aborted)->append("junk"));
  }  // destroyed without finish: aborted
  auto objects = storage->objects().list();
  REQUIRE(objects.ok());
  CHECK(*objects == std::vector<std::string>{"000005.sst"});
  CHECK(storage->logs().list()->empty());
  CHECK(storage->logs().open("000005.sst").status().code() == Code::InvalidArgument);
  CHECK(storage->objects().remove("nope.sst").is_not_found());
  CHECK(storage->logs().create("a/b").status().code() == Code::InvalidArgument);
}

TEST_CASE("a removed file stays readable through open handles - its slot is freed after",
          "[opfs][names]") {
  FakeSlotDisk disk(6);
  auto storage = open_storage(disk);
  write_object(*storage, "000001.sst", std::string(10000, 'o'));
  auto reader = storage->objects().open("000001.sst");
  REQUIRE(reader.ok());
  const size_t free_before = storage->free_slots();
  require_ok(storage->objects().remove("000001.sst"));
  require_ok(storage->sync_dir());
  CHECK(storage->objects().open("000001.sst").status().is_not_found());
  CHECK(storage->stats().releasing == 1);
  CHECK(storage->free_slots() == free_before);  // pinned: not reusable yet
  std::string buf(4, '\0');
  std::string_view got;
  require_ok((*reader)->read_at(9996, 4, buf.data(), &got));
  CHECK(got == "oooo");
  reader->reset();
  CHECK(storage->free_slots() == free_before + 1);
  CHECK(storage->stats().releasing == 0);
  // The slot's data went back to the quota: only headers remain.
  CHECK(disk.total_bytes() <= 6 * kSlotHeaderArea);
}

TEST_CASE("write_pointer uses a newer slot and frees the old one", "[opfs][pointer]") {
  FakeSlotDisk disk(6);
  {
    auto storage = open_storage(disk);
    CHECK(storage->read_pointer("CURRENT").status().is_not_found());
    require_ok(storage->write_pointer("CURRENT", "MANIFEST-000001\n"));
    require_ok(storage->write_pointer("CURRENT", "MANIFEST-000002\n"));
    CHECK(*storage->read_pointer("CURRENT") == "MANIFEST-000002\n");
    CHECK(storage->stats().used == 1);
    CHECK(storage->write_pointer("CURRENT", std::string(kSlotMaxPointerBytes + 1, 'x')).code() ==
          Code::InvalidArgument);
  }
  // The pointer is durable when write_pointer returns, even if nothing else was flushed.
  disk.crash({7, true, false, true});
  auto storage = open_storage(disk);
  CHECK(*storage->read_pointer("CURRENT") == "MANIFEST-000002\n");
  CHECK(storage->logs().list()->empty());
}

TEST_CASE("names: durable at sync, finish or sync_dir - removals at sync_dir", "[opfs][crash]") {
  FakeSlotDisk disk(8);
  {
    auto storage = open_storage(disk);
    auto a = create_log(*storage, "a.wal");
    require_ok(a->append("synced"));
    require_ok(a->sync());
    require_ok(a->append("-lost"));
    auto b = create_log(*storage, "b.wal");
    require_ok(b->append("named"));
    require_ok(storage->sync_dir());  // b's name is durable, its bytes are not
    auto c = create_log(*storage, "c.wal");
    require_ok(c->append("nothing durable"));
    write_object(*storage, "d.sst", "object");
    disk.crash({1, false, false, true});
  }
  auto storage = open_storage(disk);
  CHECK(read_log(*storage, "a.wal") == "synced");
  CHECK(read_log(*storage, "b.wal").empty());
  CHECK_FALSE(try_read_log(*storage, "c.wal").has_value());
  CHECK(storage->objects().open("d.sst").ok());

  require_ok(storage->logs().remove("a.wal"));
  require_ok(storage->objects().remove("d.sst"));
  storage.reset();  // closing flushes pending header changes
  storage = open_storage(disk);
  CHECK_FALSE(try_read_log(*storage, "a.wal").has_value());
  CHECK(storage->objects().list()->empty());

  require_ok(storage->logs().remove("b.wal"));
  disk.crash({2, false, false, true});  // not synced: the removal is undone
  storage = open_storage(disk);
  CHECK(try_read_log(*storage, "b.wal").has_value());
}

TEST_CASE("recovery keeps the newer of two slots holding a name and frees the older",
          "[opfs][recovery]") {
  FakeSlotDisk disk(5);
  put_header(disk, 0, 0, used_header(SlotKind::Pointer, "CURRENT", 10, "MANIFEST-000001\n"));
  put_header(disk, 3, 0, used_header(SlotKind::Pointer, "CURRENT", 12, "MANIFEST-000002\n"));
  put_header(disk, 1, 0, used_header(SlotKind::Log, "000003.wal", 4));
  disk.overwrite(1, kSlotHeaderArea, "old");
  put_header(disk, 2, 1, used_header(SlotKind::Log, "000003.wal", 11));
  disk.overwrite(2, kSlotHeaderArea, "new");
  {
    auto storage = open_storage(disk);
    CHECK(*storage->read_pointer("CURRENT") == "MANIFEST-000002\n");
    CHECK(read_log(*storage, "000003.wal") == "new");
    SlotPoolStats st = storage->stats();
    CHECK(st.duplicates_dropped == 2);
    CHECK(st.used == 2);
    CHECK(st.releasing == 2);
  }
  // Closing made the frees durable; a new header gets a generation above every one seen.
  auto storage = open_storage(disk);
  CHECK(storage->stats().free == 3);
  CHECK(storage->stats().duplicates_dropped == 0);
  require_ok(storage->write_pointer("CURRENT", "MANIFEST-000003\n"));
  bool found = false;
  for (size_t slot = 0; slot < 5; ++slot) {
    SlotHeaderRead r = read_slot_header(disk.bytes(slot).substr(0, kSlotHeaderArea));
    if (r.outcome == SlotHeaderRead::Outcome::Valid && r.header.payload == "MANIFEST-000003\n") {
      found = true;
      CHECK(r.header.generation > 12);
    }
  }
  CHECK(found);
}

TEST_CASE("two claims with the same generation are quarantined, not guessed", "[opfs][recovery]") {
  FakeSlotDisk disk(4);
  put_header(disk, 0, 0, used_header(SlotKind::Log, "x.wal", 7));
  put_header(disk, 2, 0, used_header(SlotKind::Log, "x.wal", 7));
  auto bad = OpfsStorage::open("db", disk.handles());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::Corruption);
  CHECK(bad.status().message().find("x.wal") != std::string::npos);
  OpfsOptions options;
  options.open_with_damaged_slots = true;
  auto storage = open_storage(disk, options);
  CHECK(storage->damaged_slots().size() == 2);
  CHECK_FALSE(try_read_log(*storage, "x.wal").has_value());
}

TEST_CASE("a damaged slot header is corruption naming the slot, never freed on its own",
          "[opfs][recovery]") {
  FakeSlotDisk disk(5);
  {
    auto storage = open_storage(disk);
    write_object(*storage, "000009.sst", "precious");
  }
  size_t slot = 5;
  for (size_t i = 0; i < 5; ++i) {
    if (disk.bytes(i).size() > kSlotHeaderArea) slot = i;
  }
  REQUIRE(slot < 5);
  const std::string untouched = disk.bytes(slot);

  SECTION("one damaged copy: the other one serves, counted as a torn copy") {
    disk.flip(slot, 20);
    auto storage = open_storage(disk);
    CHECK(storage->objects().open("000009.sst").ok());
    CHECK(storage->stats().torn_copies == 1);
  }
  SECTION("both copies damaged: open fails, or quarantines when asked") {
    disk.flip(slot, 20);
    disk.flip(slot, kSlotHeaderCopySize + 20);
    auto bad = OpfsStorage::open("db", disk.handles());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code() == Code::Corruption);
    CHECK(bad.status().message().find("(slot " + std::to_string(slot) + ")") != std::string::npos);

    OpfsOptions options;
    options.open_with_damaged_slots = true;
    auto storage = open_storage(disk, options);
    std::vector<Status> damaged = storage->damaged_slots();
    REQUIRE(damaged.size() == 1);
    CHECK(damaged[0].code() == Code::Corruption);
    CHECK(storage->stats().damaged == 1);
    // Creates never take it, even when that exhausts the pool.
    std::vector<std::unique_ptr<LogFile>> logs;
    Status s;
    for (int i = 0; i < 10 && s.ok(); ++i) {
      auto f = storage->logs().create("l" + std::to_string(i));
      if (f.ok()) logs.push_back(std::move(f).value());
      s = f.status();
    }
    CHECK(s.code() == Code::Quota);
    CHECK(logs.size() == 3);  // 4 healthy slots, the last kept for pointer records
    std::string now = disk.bytes(slot);
    CHECK(now.substr(kSlotHeaderArea) == untouched.substr(kSlotHeaderArea));
    // Discarding is explicit.
    CHECK(storage->release_damaged_slot(slot == 0 ? 1 : 0).code() == Code::InvalidArgument);
    require_ok(storage->release_damaged_slot(slot));
    CHECK(storage->damaged_slots().empty());
    CHECK(disk.bytes(slot).size() == kSlotHeaderArea);
  }
}

TEST_CASE("the reserve: a short pool fails creates cleanly and add_slots tops it up",
          "[opfs][reserve]") {
  FakeSlotDisk disk(4);
  OpfsOptions options;
  options.reserve_slots = 3;
  auto storage = open_storage(disk, options);
  CHECK(storage->free_slots() == 4);
  CHECK_FALSE(storage->needs_more_slots());
  auto a = create_log(*storage, "a.wal");
  auto b = create_log(*storage, "b.wal");
  CHECK(storage->needs_more_slots());
  CHECK(storage->slots_wanted() == 1);
  auto c = create_log(*storage, "c.wal");

  const uint64_t writes = disk.calls(Op::Write);
  auto d = storage->logs().create("d.wal");
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == Code::Quota);
  CHECK(d.status().message().find("slot pool exhausted") != std::string::npos);
  CHECK(d.status().message().find("opfs:db/d.wal") != std::string::npos);
  CHECK(disk.calls(Op::Write) == writes);  // nothing written
  // The last slot is kept for a pointer record.
  require_ok(storage->write_pointer("CURRENT", "x"));
  CHECK(storage->write_pointer("CURRENT", "y").code() == Code::Quota);

  // The shim appends handles between calls; add_slots takes them into use.
  CHECK(storage->add_slots(2).code() == Code::InvalidArgument);
  disk.add_slots(2);
  require_ok(storage->add_slots(2));
  CHECK(storage->free_slots() == 2);
  auto d2 = create_log(*storage, "d.wal");
  require_ok(storage->write_pointer("CURRENT", "y"));
  CHECK(*storage->read_pointer("CURRENT") == "y");

  // Slots appended without add_slots are adopted when a create needs them.
  disk.add_slots(3);
  auto e = create_log(*storage, "e.wal");
  CHECK(storage->stats().slots == 9);

  // An added slot that already holds data is quarantined, not used.
  disk.add_slots(1);
  put_header(disk, 9, 0, used_header(SlotKind::Log, "stray.wal", 1));
  CHECK(storage->add_slots(1).code() == Code::InvalidArgument);
  CHECK(storage->stats().damaged == 1);
}

TEST_CASE("removed slots are reclaimed by a create when the pool is short", "[opfs][reserve]") {
  FakeSlotDisk disk(3);
  auto storage = open_storage(disk);
  write_object(*storage, "1.sst", "one");
  write_object(*storage, "2.sst", "two");
  require_ok(storage->objects().remove("1.sst"));  // not flushed yet
  const uint64_t flushes = disk.calls(Op::Flush);
  write_object(*storage, "3.sst", "three");
  CHECK(disk.calls(Op::Flush) >= flushes + 2);  // the removal, then the finish
  CHECK(storage->objects().list()->size() == 2);
}

TEST_CASE("a failed write leaves the file as it was", "[opfs][errors]") {
  FakeSlotDisk disk(4);
  OpfsOptions options;
  options.write_buffer_bytes = 64;
  auto storage = open_storage(disk, options);
  auto log = create_log(*storage, "q.wal");
  require_ok(log->append(std::string(10, 'a')));
  disk.set_quota(disk.total_bytes() + 32);
  Status s = log->append(std::string(100, 'b'));
  CHECK(s.code() == Code::Quota);
  CHECK(log->size() == 10);
  disk.set_quota(FakeSlotDisk::kNoQuota);
  require_ok(log->append(std::string(100, 'c')));
  require_ok(log->sync());
  CHECK(read_log(*storage, "q.wal") == std::string(10, 'a') + std::string(100, 'c'));
}

namespace {

// The slot holding file `name` on the fake disk (its newest valid header names it).
size_t slot_of(const FakeSlotDisk& disk, const std::string& name) {
  for (size_t slot = 0; slot < disk.slot_count(); ++slot) {
    const SlotHeaderRead r = read_slot_header(disk.bytes(slot).substr(0, kSlotHeaderArea));
    if (r.outcome == SlotHeaderRead::Outcome::Valid && r.header.used && r.header.name == name) {
      return slot;
    }
  }
  FAIL("no slot holds " << name);
  return 0;
}

}  // namespace

TEST_CASE("reserve lays zeros ahead, appends write over them, truncate takes them away",
          "[opfs][io]") {
  FakeSlotDisk disk(6);
  auto storage = open_storage(disk);
  auto log = create_log(*storage, "000001.wal");
  require_ok(log->append("first"));
  require_ok(log->sync());
  const size_t slot = slot_of(disk, "000001.wal");
  CHECK(disk.bytes(slot).size() == kSlotHeaderArea + 5);

  // One write of zeros extends the file; the contents seen through the file do not change.
  const uint64_t writes = disk.calls(Op::Write);
  require_ok(log->reserve(1000));
  CHECK(disk.calls(Op::Write) == writes + 1);
  CHECK(disk.bytes(slot).size() == kSlotHeaderArea + 1000);
  CHECK(disk.bytes(slot).find_first_not_of('\0', kSlotHeaderArea + 5) == std::string::npos);
  CHECK(log->size() == 5);
  CHECK(read_log(*storage, "000001.wal") == "first");
  require_ok(log->reserve(600));  // already there: no call
  CHECK(disk.calls(Op::Write) == writes + 1);

  // Appends replace zeros and leave the file's length alone.
  require_ok(log->append("second"));
  require_ok(log->sync());
  CHECK(disk.bytes(slot).size() == kSlotHeaderArea + 1000);
  CHECK(disk.bytes(slot).substr(kSlotHeaderArea, 12) == std::string("firstsecond") + '\0');
  CHECK(read_log(*storage, "000001.wal") == "firstsecond");

  // A crash keeps the zeros once flushed: a reopened log holds them after its last byte.
  disk.crash(FakeSlotDisk::CrashOptions());
  storage.reset();
  storage = open_storage(disk);
  const std::string reopened = read_log(*storage, "000001.wal");
  CHECK(reopened.size() == 1000);
  CHECK(reopened.substr(0, 11) == "firstsecond");
  CHECK(reopened.find_first_not_of('\0', 11) == std::string::npos);

  // truncate(size()) on a reserved file removes the zeros, buffered bytes kept.
  auto again = create_log(*storage, "000002.wal");
  require_ok(again->append("abc"));
  require_ok(again->sync());
  require_ok(again->reserve(4096));
  require_ok(again->append("de"));  // buffered
  const size_t slot2 = slot_of(disk, "000002.wal");
  CHECK(disk.bytes(slot2).size() == kSlotHeaderArea + 4096);
  require_ok(again->truncate(again->size()));
  CHECK(disk.bytes(slot2).size() == kSlotHeaderArea + 3);
  require_ok(again->sync());
  CHECK(disk.durable_bytes(slot2).size() == kSlotHeaderArea + 5);
  CHECK(read_log(*storage, "000002.wal") == "abcde");

  // Removing a file with zeros reserved gives every byte back.
  require_ok(again->reserve(8192));
  require_ok(again->close());
  require_ok(storage->logs().remove("000002.wal"));
  require_ok(storage->sync_dir());
  CHECK(disk.bytes(slot2).size() == kSlotHeaderArea);
}

TEST_CASE("a failed reserve leaves the file as it was", "[opfs][errors]") {
  FakeSlotDisk disk(4);
  auto storage = open_storage(disk);
  auto log = create_log(*storage, "000001.wal");
  require_ok(log->append("kept"));
  require_ok(log->sync());
  disk.set_quota(disk.total_bytes() + 100);
  Status s = log->reserve(1 << 20);
  CHECK(s.code() == Code::Quota);
  CHECK(s.message().find("000001.wal") != std::string::npos);
  CHECK(disk.bytes(slot_of(disk, "000001.wal")).size() == kSlotHeaderArea + 4);
  require_ok(log->append("+more"));
  require_ok(log->sync());
  CHECK(read_log(*storage, "000001.wal") == "kept+more");
}

TEST_CASE("handles die with a terminated worker - written bytes survive it", "[opfs][crash]") {
  FakeSlotDisk disk(4);
  auto storage = open_storage(disk);
  auto log = create_log(*storage, "t.wal");
  require_ok(log->append("durable"));
  require_ok(log->sync());
  require_ok(log->append("+written"));
  require_ok(log->close());  // written out, not flushed
  disk.terminate();
  Status s = storage->logs().create("u.wal").status();
  CHECK(s.code() == Code::IO);
  CHECK(s.message().find("InvalidStateError") != std::string::npos);
  storage.reset();
  storage = open_storage(disk);
  CHECK(read_log(*storage, "t.wal") == "durable+written");
  CHECK_FALSE(try_read_log(*storage, "u.wal").has_value());
}

TEST_CASE("crash model check: synced bytes and acknowledged names always survive",
          "[opfs][crash]") {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    INFO("seed " << seed);
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull;
    auto draw = [&rng](uint64_t n) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      return rng % n;
    };
    FakeSlotDisk disk(12);
    OpfsOptions options;
    options.write_buffer_bytes = 256;
    // Model: per live file, every byte appended and how many are durable; whether the name is.
    std::map<std::string, FileModel> files;
    std::map<std::string, FileModel> removed;  // removed but not yet durably
    std::string pointer;
    int next = 0;
    bool reordered = false;
    for (int life = 0; life < 4; ++life) {
      auto storage = open_storage(disk, options);
      CHECK(storage->damaged_slots().empty());
      // Nothing comes back that was durably removed (or never existed).
      Result<std::vector<std::string>> listed = storage->logs().list();
      REQUIRE(listed.ok());
      for (const std::string& name : listed.value()) {
        INFO("listed " << name);
        REQUIRE((files.count(name) + removed.count(name)) == 1);
      }
      // Check what survived; from here on what is there is durable.
      for (auto it = files.begin(); it != files.end();) {
        std::optional<std::string> got = try_read_log(*storage, it->first);
        INFO("file " << it->first);
        if (it->second.name_durable) REQUIRE(got.has_value());
        if (!got) {
          it = files.erase(it);
          continue;
        }
        check_survivor(*got, it->second, reordered);
        it->second = FileModel{*got, got->size(), true};
        ++it;
      }
      for (auto& [name, m] : removed) {
        std::optional<std::string> got = try_read_log(*storage, name);
        if (!got) continue;  // the removal held
        INFO("removed file " << name);
        check_survivor(*got, m, reordered);
        files[name] = FileModel{*got, got->size(), true};
      }
      removed.clear();
      if (!pointer.empty()) {
        Result<std::string> p = storage->read_pointer("P");
        REQUIRE(p.ok());
        CHECK(p.value() == pointer);
      }
      std::map<std::string, std::unique_ptr<LogFile>> open;
      const int steps = 20 + static_cast<int>(draw(60));
      for (int step = 0; step < steps; ++step) {
        const uint64_t op = draw(100);
        if (op < 15 && storage->free_slots() > 2) {
          const std::string name = std::to_string(next++) + ".log";
          open[name] = create_log(*storage, name);
          files[name] = FileModel();
        } else if (op < 55 && !open.empty()) {
          auto it = std::next(open.begin(), static_cast<long>(draw(open.size())));
          std::string data(1 + draw(300), static_cast<char>('a' + draw(26)));
          require_ok(it->second->append(data));
          files[it->first].bytes += data;
        } else if (op < 70 && !open.empty()) {
          auto it = std::next(open.begin(), static_cast<long>(draw(open.size())));
          require_ok(it->second->sync());
          files[it->first].synced = files[it->first].bytes.size();
          files[it->first].name_durable = true;
        } else if (op < 78) {
          require_ok(storage->sync_dir());
          for (auto& [name, m] : files) m.name_durable = true;
          removed.clear();
        } else if (op < 86 && !open.empty()) {
          auto it = std::next(open.begin(), static_cast<long>(draw(open.size())));
          const std::string name = it->first;
          open.erase(it);
          require_ok(storage->logs().remove(name));
          removed[name] = files[name];  // until sync_dir a crash may bring it back
          files.erase(name);
        } else if (op < 92) {
          pointer = "p" + std::to_string(step);
          require_ok(storage->write_pointer("P", pointer));
        } else if (!open.empty()) {
          auto it = std::next(open.begin(), static_cast<long>(draw(open.size())));
          require_ok(it->second->close());  // writes bytes out, does not sync
          open.erase(it);
        }
        check_durable_headers_intact(disk);
      }
      FakeSlotDisk::CrashOptions crash;
      crash.seed = draw(1u << 30);
      crash.tear = draw(2) == 0;
      crash.reorder = draw(3) == 0;
      disk.crash(crash);
      open.clear();
      storage.reset();
      reordered = crash.reorder;
    }
  }
}

TEST_CASE("OpfsPlatform: one open per database, factory errors pass through", "[opfs][platform]") {
  auto disk = std::make_shared<FakeSlotDisk>(6);
  int asked = 0;
  auto platform = std::make_shared<OpfsPlatform>(
      [disk, &asked](const std::string& name, bool create) -> Result<std::shared_ptr<SlotHandles>> {
        ++asked;
        if (name != "db" && !create) return Status::not_found("opfs:" + name + ": no database");
        return disk->handles();
      });
  REQUIRE(platform->queue_executor() != nullptr);
  CHECK(platform->storage("db") == nullptr);
  auto s = platform->open_storage("db", StorageOptions{});
  REQUIRE(s.ok());
  CHECK((*s)->location() == "opfs:db");
  CHECK(platform->storage("db") != nullptr);
  CHECK(platform->open_storage("db", StorageOptions{}).status().code() == Code::Busy);
  CHECK(platform->open_storage("other", StorageOptions{.create_if_missing = false, .marker = {}})
            .status()
            .is_not_found());
  CHECK(platform->open_storage("a/b", StorageOptions{}).status().code() == Code::InvalidArgument);
  s->reset();
  CHECK(platform->storage("db") == nullptr);
  CHECK(
      platform->open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}}).ok());
  CHECK(asked == 3);
  // A pool with no CURRENT is not a database.
  const StorageOptions existing{.create_if_missing = false, .marker = "CURRENT"};
  CHECK(platform->open_storage("db", existing).status().code() == Code::NotFound);
  {
    auto again = platform->open_storage("db", StorageOptions{});
    REQUIRE(again.ok());
    REQUIRE((*again)->write_pointer("CURRENT", "MANIFEST-000002\n").ok());
  }
  CHECK(platform->open_storage("db", existing).ok());
  CHECK(platform->clock().now_nanos() > 0);
}
