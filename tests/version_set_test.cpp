// skv-test-modules: util wal vlog sstable memtable version memory fault
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "compaction/compaction_picker.h"
#include "format/file_names.h"
#include "format/internal_key.h"
#include "platform/fault/fault_platform.h"
#include "platform/memory/memory_platform.h"
#include "version/table_cache.h"
#include "version/version_set.h"

using namespace skv;

namespace {

const std::string kPath = "vs";

// A database on the memory platform with a version set over it. Tables are stand-in objects: the
// version set only checks that they exist.
struct Db {
  std::shared_ptr<MemoryPlatform> memory = std::make_shared<MemoryPlatform>();
  MemoryPlatform& platform = *memory;
  FaultPlatform faults{memory};  // the storage is opened through it
  Options options;
  std::unique_ptr<Storage> storage;
  std::shared_ptr<TableCache> tables;
  std::unique_ptr<VersionSet> vset;

  Db() {
    options.level_count = 4;
    open();
  }

  void open() {
    vset.reset();
    tables.reset();
    storage.reset();
    auto s = faults.open_storage(kPath, StorageOptions{});
    REQUIRE(s.ok());
    storage = std::move(*s);
    tables = std::make_shared<TableCache>(storage.get(), nullptr, 16);
    vset = std::make_unique<VersionSet>(storage.get(), options, tables);
  }

  Status reopen_and_recover() {
    open();
    return vset->recover();
  }

  void touch_table(uint64_t number) {
    auto w = storage->objects().create(table_file_name(number));
    REQUIRE(w.ok());
    REQUIRE((*w)->append("table bytes").ok());
    REQUIRE((*w)->finish().ok());
    REQUIRE(storage->sync_dir().ok());
  }

  // Adds a table file and returns its metadata for [lo, hi] with sequences [s1, s2].
  FileMetaData new_table(const std::string& lo, const std::string& hi, SequenceNumber s1,
                         SequenceNumber s2) {
    FileMetaData m;
    m.number = *vset->new_file_number();
    m.file_size = 100 + m.number;
    m.smallest = make_internal_key(lo, s2, ValueKind::Value, 0);
    m.largest = make_internal_key(hi, s1, ValueKind::Value, 0);
    m.smallest_seq = s1;
    m.largest_seq = s2;
    m.num_entries = 3;
    touch_table(m.number);
    return m;
  }

  std::string current_pointer() {
    auto p = storage->read_pointer("CURRENT");
    REQUIRE(p.ok());
    return *p;
  }

  // Adds a value log file of `entries` entries of 100 bytes and returns its metadata.
  VlogFileMeta new_vlog(uint64_t entries) {
    VlogFileMeta v;
    v.number = *vset->new_file_number();
    v.file_size = 64 + 100 * entries;
    v.num_entries = entries;
    auto f = storage->logs().create(vlog_file_name(v.number));
    REQUIRE(f.ok());
    REQUIRE((*f)->append(std::string(v.file_size, 'v')).ok());
    REQUIRE((*f)->sync().ok());
    REQUIRE(storage->sync_dir().ok());
    return v;
  }

  bool log_exists(const std::string& name) {
    auto names = storage->logs().list();
    REQUIRE(names.ok());
    return std::find(names->begin(), names->end(), name) != names->end();
  }
};

// "L0: #n... | L1: ..." : the shape of a version, for comparing two of them.
std::string shape(const Version& v) {
  std::string r;
  for (int level = 0; level < v.level_count(); ++level) {
    r += "L" + std::to_string(level) + ":";
    for (const auto& f : v.files(level)) {
      r += " #" + std::to_string(f->number) + "/" + std::to_string(f->file_size) + "/" +
           std::string(extract_user_key(f->smallest)) + "-" +
           std::string(extract_user_key(f->largest)) + "/" + std::to_string(f->largest_seq);
    }
    r += " | ";
  }
  return r;
}

}  // namespace

TEST_CASE("create_new writes MANIFEST-000001 and CURRENT - recover reads them back",
          "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  REQUIRE(db.current_pointer() == "MANIFEST-000001\n");
  REQUIRE(db.vset->manifest_file_number() == 1);
  REQUIRE(db.vset->next_file_number() == 2);
  REQUIRE(db.vset->current()->total_files() == 0);

  // Survives a crash: the manifest, its name and CURRENT are all durable.
  db.vset.reset();
  db.tables.reset();
  db.storage.reset();
  db.platform.crash(1, false);
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(db.vset->last_sequence() == 0);
  REQUIRE(db.vset->log_number() == 0);
  REQUIRE(db.vset->next_file_number() >= 2);
  REQUIRE(db.vset->current()->total_files() == 0);
}

TEST_CASE("recover without CURRENT is NotFound", "[version_set]") {
  Db db;
  Status s = db.vset->recover();
  REQUIRE(s.is_not_found());
}

TEST_CASE("edits are applied, logged and recovered", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());

  FileMetaData a = db.new_table("a", "f", 1, 10);
  FileMetaData b = db.new_table("c", "k", 11, 20);
  FileMetaData c = db.new_table("a", "c", 1, 5);
  FileMetaData d = db.new_table("m", "p", 1, 5);
  uint64_t wal = *db.vset->new_file_number();

  VersionEdit e1;
  e1.add_file(0, a);
  e1.add_file(0, b);
  e1.add_file(1, c);
  e1.add_file(1, d);
  e1.set_log_number(wal);
  db.vset->set_last_sequence(20);
  REQUIRE(db.vset->log_and_apply(&e1).ok());
  REQUIRE(e1.next_file_number() == std::optional<uint64_t>(db.vset->next_file_number()));

  auto v = db.vset->current();
  REQUIRE(v->num_files(0) == 2);
  REQUIRE(v->files(0)[0]->number == b.number);  // newest first
  REQUIRE(v->num_files(1) == 2);
  REQUIRE(v->files(1)[0]->number == c.number);  // by smallest key
  REQUIRE(db.vset->level_bytes(1) == c.file_size + d.file_size);
  REQUIRE(db.vset->num_level_files(0) == 2);
  REQUIRE(db.vset->log_number() == wal);

  // A compaction-like edit: two files replaced by one.
  FileMetaData e = db.new_table("a", "k", 1, 20);
  VersionEdit e2;
  e2.delete_file(0, a.number);
  e2.delete_file(0, b.number);
  e2.delete_file(1, c.number);
  e2.add_file(1, e);
  e2.set_compact_pointer(0, b.largest);
  // Overlaps d? No: e ends at "k", d starts at "m".
  db.vset->set_last_sequence(25);
  REQUIRE(db.vset->log_and_apply(&e2).ok());
  const std::string before = shape(*db.vset->current());
  const uint64_t next_before = db.vset->next_file_number();

  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == before);
  REQUIRE(db.vset->last_sequence() == 25);
  REQUIRE(db.vset->log_number() == wal);
  REQUIRE(db.vset->next_file_number() >= next_before);
  REQUIRE(db.vset->compact_pointer(0) == b.largest);
  REQUIRE(db.vset->compact_pointer(1).empty());
}

TEST_CASE("inconsistent edits are refused without changing anything", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  FileMetaData a = db.new_table("a", "f", 1, 10);
  VersionEdit e1;
  e1.add_file(1, a);
  REQUIRE(db.vset->log_and_apply(&e1).ok());
  const std::string before = shape(*db.vset->current());

  VersionEdit bad;
  SECTION("deleting a file that is not there") { bad.delete_file(1, 999); }
  SECTION("deleting a file from the wrong level") { bad.delete_file(0, a.number); }
  SECTION("adding a live file again") { bad.add_file(2, a); }
  SECTION("overlapping files in L1") { bad.add_file(1, db.new_table("e", "g", 1, 2)); }
  SECTION("a level beyond level_count") { bad.add_file(4, db.new_table("x", "y", 1, 2)); }
  SECTION("a log number that was never allocated") {
    bad.set_log_number(db.vset->next_file_number() + 5);
  }
  Status s = db.vset->log_and_apply(&bad);
  REQUIRE(s.code() == Code::InvalidArgument);
  REQUIRE(shape(*db.vset->current()) == before);
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == before);
}

TEST_CASE("the manifest rolls over after recovery and when it grows", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  db.vset->set_max_manifest_size(1024);

  std::vector<uint64_t> manifests{1};
  // Each edit adds one L0 file and drops the previous one, so the snapshot stays small while the
  // log of edits grows.
  uint64_t prev = 0;
  for (int i = 0; i < 60; ++i) {
    FileMetaData f = db.new_table("k" + std::to_string(i), "z", 1, 1 + i);
    VersionEdit e;
    if (prev != 0) e.delete_file(0, prev);
    e.add_file(0, f);
    db.vset->set_last_sequence(1 + i);
    REQUIRE(db.vset->log_and_apply(&e).ok());
    prev = f.number;
    if (db.vset->manifest_file_number() != manifests.back()) {
      manifests.push_back(db.vset->manifest_file_number());
    }
  }
  REQUIRE(manifests.size() >= 3);
  const uint64_t m = db.vset->manifest_file_number();
  REQUIRE(db.current_pointer() == manifest_file_name(m) + "\n");
  for (size_t i = 0; i + 1 < manifests.size(); ++i) {
    REQUIRE(!db.log_exists(manifest_file_name(manifests[i])));  // old ones removed
  }
  const std::string before = shape(*db.vset->current());

  // After recovery the next edit goes to a fresh manifest.
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == before);
  REQUIRE(db.vset->manifest_file_number() == m);
  FileMetaData g = db.new_table("zz", "zz", 100, 100);
  VersionEdit e;
  e.add_file(2, g);
  REQUIRE(db.vset->log_and_apply(&e).ok());
  REQUIRE(db.vset->manifest_file_number() != m);
  REQUIRE(!db.log_exists(manifest_file_name(m)));
  REQUIRE(db.current_pointer() == manifest_file_name(db.vset->manifest_file_number()) + "\n");

  const std::string after = shape(*db.vset->current());
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == after);
  REQUIRE(db.vset->last_sequence() == 60);
}

TEST_CASE("a torn tail at the end of the manifest is dropped", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  FileMetaData a = db.new_table("a", "b", 1, 1);
  VersionEdit e1;
  e1.add_file(0, a);
  db.vset->set_last_sequence(1);
  REQUIRE(db.vset->log_and_apply(&e1).ok());
  const std::string before = shape(*db.vset->current());
  const std::string manifest = manifest_file_name(db.vset->manifest_file_number());
  auto size_before = db.platform.read_file(kPath, manifest);
  REQUIRE(size_before.ok());

  FileMetaData b = db.new_table("c", "d", 2, 2);
  VersionEdit e2;
  e2.add_file(0, b);
  db.vset->set_last_sequence(2);
  REQUIRE(db.vset->log_and_apply(&e2).ok());
  auto full = db.platform.read_file(kPath, manifest);
  REQUIRE(full.ok());
  REQUIRE(full->size() > size_before->size() + 10);

  // Cut the last record in the middle: what a crash during its append leaves.
  db.vset.reset();
  REQUIRE(db.platform.truncate_file(kPath, manifest, full->size() - 5).ok());
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == before);
  REQUIRE(db.vset->last_sequence() == 1);

  // The next edit starts a new manifest, and the state stays consistent afterwards.
  VersionEdit e3;
  e3.add_file(0, b);
  REQUIRE(db.vset->log_and_apply(&e3).ok());
  REQUIRE(manifest_file_name(db.vset->manifest_file_number()) != manifest);
  const std::string after = shape(*db.vset->current());
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == after);
}

TEST_CASE("corruption inside the manifest is reported with file and offset", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  for (int i = 0; i < 3; ++i) {
    FileMetaData f = db.new_table("k" + std::to_string(i), "k" + std::to_string(i), 1, 1);
    VersionEdit e;
    e.add_file(0, f);
    REQUIRE(db.vset->log_and_apply(&e).ok());
  }
  const std::string manifest = manifest_file_name(db.vset->manifest_file_number());
  db.vset.reset();
  // A byte inside the first record (past the 64-byte header and the 8-byte record header).
  REQUIRE(db.platform.flip_byte(kPath, manifest, 64 + 8 + 3).ok());
  Status s = db.reopen_and_recover();
  INFO(s.to_string());
  REQUIRE(s.is_corruption());
  REQUIRE(s.message().find(manifest) != std::string::npos);
  REQUIRE(s.message().find("64") != std::string::npos);
}

TEST_CASE("a bad CURRENT or a missing manifest is corruption", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  SECTION("garbage in CURRENT") {
    REQUIRE(db.storage->write_pointer("CURRENT", "MANIFEST-1\n").ok());
    Status s = db.reopen_and_recover();
    REQUIRE(s.is_corruption());
    REQUIRE(s.message().find("CURRENT") != std::string::npos);
  }
  SECTION("CURRENT names a manifest that is gone") {
    REQUIRE(db.storage->logs().remove("MANIFEST-000001").ok());
    Status s = db.reopen_and_recover();
    REQUIRE(s.is_corruption());
    REQUIRE(s.message().find("MANIFEST-000001") != std::string::npos);
  }
}

TEST_CASE("a table named by the manifest but missing is corruption naming it", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  FileMetaData a = db.new_table("a", "b", 1, 1);
  FileMetaData b = db.new_table("c", "d", 1, 1);
  VersionEdit e;
  e.add_file(1, a);
  e.add_file(2, b);
  REQUIRE(db.vset->log_and_apply(&e).ok());
  REQUIRE(db.storage->objects().remove(table_file_name(b.number)).ok());
  Status s = db.reopen_and_recover();
  REQUIRE(s.is_corruption());
  REQUIRE(s.message().find(table_file_name(b.number)) != std::string::npos);
}

TEST_CASE("recovery never reuses a number found on disk", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  // An orphan output of a job that crashed before its edit was logged.
  const uint64_t orphan = *db.vset->new_file_number() + 40;
  db.touch_table(orphan);
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(db.vset->next_file_number() > orphan);
}

TEST_CASE("live_files covers every version still held", "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  FileMetaData a = db.new_table("a", "b", 1, 1);
  VersionEdit e1;
  e1.add_file(0, a);
  REQUIRE(db.vset->log_and_apply(&e1).ok());

  std::shared_ptr<const Version> held = db.vset->current();
  FileMetaData b = db.new_table("a", "b", 1, 1);
  VersionEdit e2;
  e2.delete_file(0, a.number);
  e2.add_file(1, b);
  REQUIRE(db.vset->log_and_apply(&e2).ok());

  REQUIRE(db.vset->live_files() == std::set<uint64_t>{a.number, b.number});
  held.reset();
  REQUIRE(db.vset->live_files() == std::set<uint64_t>{b.number});
}

TEST_CASE("a failed manifest write leaves the version unchanged and the next edit recovers",
          "[version_set]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  FileMetaData a = db.new_table("a", "b", 1, 1);
  VersionEdit e1;
  e1.add_file(0, a);
  REQUIRE(db.vset->log_and_apply(&e1).ok());
  const std::string before = shape(*db.vset->current());

  FileMetaData b = db.new_table("c", "d", 2, 2);
  db.faults.set_fault_policy(FaultPolicy{{FaultRule::nth_call(FaultOp::Sync, 1)}, 0});
  VersionEdit e2;
  e2.add_file(0, b);
  Status s = db.vset->log_and_apply(&e2);
  REQUIRE(s.is_io_error());
  REQUIRE(shape(*db.vset->current()) == before);
  db.faults.clear_faults();

  const uint64_t old_manifest = db.vset->manifest_file_number();
  VersionEdit e3;
  e3.add_file(0, b);
  REQUIRE(db.vset->log_and_apply(&e3).ok());
  REQUIRE(db.vset->manifest_file_number() != old_manifest);
  const std::string after = shape(*db.vset->current());
  REQUIRE(after != before);

  // Everything acknowledged is durable across a crash.
  db.vset.reset();
  db.tables.reset();
  db.storage.reset();
  db.platform.crash(7, true);
  REQUIRE(db.reopen_and_recover().ok());
  REQUIRE(shape(*db.vset->current()) == after);
}

TEST_CASE("random edits recover to the same state after crashes", "[version_set]") {
  const uint32_t seed = 77123;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  Db db;
  REQUIRE(db.vset->create_new().ok());
  db.vset->set_max_manifest_size(4096);
  std::vector<FileMetaPtr> l0;
  SequenceNumber seq = 0;
  for (int round = 0; round < 150; ++round) {
    VersionEdit e;
    auto v = db.vset->current();
    if (v->num_files(0) > 0 && rng() % 3 == 0) {
      const auto& f = v->files(0)[rng() % v->files(0).size()];
      e.delete_file(0, f->number);
    } else {
      ++seq;
      std::string k = "k" + std::to_string(rng() % 50);
      e.add_file(0, db.new_table(k, k + "z", seq, seq));
    }
    db.vset->set_last_sequence(seq);
    REQUIRE(db.vset->log_and_apply(&e).ok());
    if (round % 25 == 24) {
      const std::string before = shape(*db.vset->current());
      db.vset.reset();
      db.tables.reset();
      db.storage.reset();
      db.platform.crash(seed + round, true);
      REQUIRE(db.reopen_and_recover().ok());
      REQUIRE(shape(*db.vset->current()) == before);
      REQUIRE(db.vset->last_sequence() == seq);
      db.vset->set_max_manifest_size(4096);
    }
  }
}

TEST_CASE("value logs live while tables point into them, and recover", "[version_set][vlog]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  VlogFileMeta v1 = db.new_vlog(10);  // 1,000 entry bytes
  VlogFileMeta v2 = db.new_vlog(4);
  FileMetaData a = db.new_table("a", "c", 1, 2);
  a.vlog_refs = {{v1.number, 600}};
  FileMetaData b = db.new_table("d", "f", 1, 2);
  b.vlog_refs = {{v1.number, 300}, {v2.number, 400}};
  VersionEdit e1;
  e1.add_file(1, a);
  e1.add_file(1, b);
  e1.add_vlog_file(v1);
  e1.add_vlog_file(v2);
  REQUIRE(db.vset->log_and_apply(&e1).ok());
  std::shared_ptr<const Version> v = db.vset->current();
  REQUIRE(v->vlog_files().size() == 2);
  CHECK(v->find_vlog(v1.number)->live_bytes == 900);
  CHECK(v->find_vlog(v1.number)->garbage_bytes() == 100);
  CHECK(v->find_vlog(v2.number)->garbage_bytes() == 0);

  // Rewriting `a` without its pointers leaves v1 with 300 live bytes of 1,000.
  FileMetaData a2 = db.new_table("a", "c", 1, 2);
  VersionEdit e2;
  e2.delete_file(1, a.number);
  e2.add_file(1, a2);
  REQUIRE(db.vset->log_and_apply(&e2).ok());
  CHECK(db.vset->current()->find_vlog(v1.number)->garbage_share() == Approx(0.7));
  CHECK(vlogs_over_ratio(*db.vset->current(), 0.7) == std::vector<uint64_t>{v1.number});
  CHECK(vlogs_over_ratio(*db.vset->current(), 0.71).empty());

  // Deleting `b` leaves no table pointing into either: the edit deletes both value logs, but a
  // version still held keeps them live.
  std::shared_ptr<const Version> held = db.vset->current();
  VersionEdit e3;
  e3.delete_file(1, b.number);
  REQUIRE(db.vset->log_and_apply(&e3).ok());
  CHECK(e3.deleted_vlog_files() == (std::vector<uint64_t>{v1.number, v2.number}));
  CHECK(db.vset->current()->vlog_files().empty());
  CHECK(db.vset->live_vlog_files() == std::set<uint64_t>{v1.number, v2.number});
  held.reset();
  v.reset();
  CHECK(db.vset->live_vlog_files().empty());

  REQUIRE(db.reopen_and_recover().ok());
  CHECK(db.vset->current()->vlog_files().empty());
  CHECK(db.vset->current()->num_files(1) == 1);
}

TEST_CASE("value log references are replayed and a missing value log is corruption",
          "[version_set][vlog]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  VlogFileMeta v1 = db.new_vlog(3);
  FileMetaData a = db.new_table("a", "c", 1, 2);
  a.vlog_refs = {{v1.number, 250}};
  VersionEdit e;
  e.add_file(0, a);
  e.add_vlog_file(v1);
  REQUIRE(db.vset->log_and_apply(&e).ok());
  REQUIRE(db.reopen_and_recover().ok());
  const VlogUsage* u = db.vset->current()->find_vlog(v1.number);
  REQUIRE(u != nullptr);
  CHECK(u->meta == v1);
  CHECK(u->live_bytes == 250);
  REQUIRE(db.vset->current()->files(0).size() == 1);
  CHECK(db.vset->current()->files(0)[0]->vlog_refs == a.vlog_refs);
  // The snapshot a new manifest starts with carries them too.
  VersionEdit nothing;
  REQUIRE(db.vset->log_and_apply(&nothing).ok());
  REQUIRE(db.reopen_and_recover().ok());
  CHECK(db.vset->current()->find_vlog(v1.number)->live_bytes == 250);

  REQUIRE(db.storage->logs().remove(vlog_file_name(v1.number)).ok());
  Status s = db.reopen_and_recover();
  INFO(s.to_string());
  CHECK(s.is_corruption());
  CHECK(s.message().find(vlog_file_name(v1.number)) != std::string::npos);
}

TEST_CASE("edits whose value log references disagree are refused", "[version_set][vlog]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  VlogFileMeta v1 = db.new_vlog(2);  // 200 entry bytes
  FileMetaData a = db.new_table("a", "c", 1, 2);
  const std::string before = shape(*db.vset->current());

  SECTION("a table points into a value log that is not live") {
    a.vlog_refs = {{v1.number, 100}};
    VersionEdit e;
    e.add_file(0, a);
    CHECK(db.vset->log_and_apply(&e).code() == Code::InvalidArgument);
  }
  SECTION("tables point at more bytes than the value log holds") {
    a.vlog_refs = {{v1.number, 201}};
    VersionEdit e;
    e.add_file(0, a);
    e.add_vlog_file(v1);
    CHECK(db.vset->log_and_apply(&e).code() == Code::InvalidArgument);
  }
  SECTION("a value log added twice") {
    a.vlog_refs = {{v1.number, 100}};
    VersionEdit e;
    e.add_file(0, a);
    e.add_vlog_file(v1);
    REQUIRE(db.vset->log_and_apply(&e).ok());
    FileMetaData b = db.new_table("d", "e", 3, 3);
    b.vlog_refs = {{v1.number, 100}};
    VersionEdit again;
    again.add_file(0, b);
    again.add_vlog_file(v1);
    CHECK(db.vset->log_and_apply(&again).code() == Code::InvalidArgument);
    return;
  }
  SECTION("a value log deleted that is not live") {
    VersionEdit e;
    e.delete_vlog_file(v1.number);
    CHECK(db.vset->log_and_apply(&e).code() == Code::InvalidArgument);
  }
  CHECK(shape(*db.vset->current()) == before);
  CHECK(db.vset->current()->vlog_files().empty());
}

TEST_CASE("garbage collection picks tables pointing into value logs over the ratio",
          "[version_set][vlog][gc]") {
  Db db;
  db.options.vlog_gc_ratio = 0.5;
  db.open();
  REQUIRE(db.vset->create_new().ok());
  VlogFileMeta v1 = db.new_vlog(10);
  VlogFileMeta v2 = db.new_vlog(10);
  FileMetaData l0 = db.new_table("a", "z", 5, 6);
  l0.vlog_refs = {{v2.number, 600}};
  FileMetaData l1a = db.new_table("a", "c", 1, 2);
  l1a.vlog_refs = {{v1.number, 300}};
  FileMetaData l1b = db.new_table("d", "f", 1, 2);
  l1b.vlog_refs = {{v1.number, 200}, {v2.number, 100}};
  VersionEdit e;
  e.add_file(0, l0);
  e.add_file(1, l1a);
  e.add_file(1, l1b);
  e.add_vlog_file(v1);
  e.add_vlog_file(v2);
  REQUIRE(db.vset->log_and_apply(&e).ok());

  // v1: 500 of 1,000 bytes live (share 0.5, collected); v2: 700 live (0.3, not).
  CHECK(vlogs_over_ratio(*db.vset->current(), 0.5) == std::vector<uint64_t>{v1.number});
  CHECK(vlogs_over_ratio(*db.vset->current(), 0.3) ==
        (std::vector<uint64_t>{v1.number, v2.number}));
  CHECK(needs_vlog_gc(*db.vset));
  std::unique_ptr<Compaction> c = pick_vlog_gc(*db.vset);
  REQUIRE(c != nullptr);
  CHECK(c->level == 1);
  CHECK(c->output_level == 1);
  REQUIRE(c->inputs.size() == 1);
  CHECK(c->inputs[0]->number == l1a.number);  // the first table pointing into v1
  CHECK(c->relocate_vlogs == std::vector<uint64_t>{v1.number});
  CHECK_FALSE(c->is_trivial_move());
  CHECK(c->first_deeper_level() == 2);

  // Once l1a no longer points into v1, the next pick is l1b.
  FileMetaData l1a2 = db.new_table("a", "c", 1, 2);
  VersionEdit moved;
  moved.delete_file(1, l1a.number);
  moved.add_file(1, l1a2);
  REQUIRE(db.vset->log_and_apply(&moved).ok());
  c = pick_vlog_gc(*db.vset);
  REQUIRE(c != nullptr);
  CHECK(c->inputs[0]->number == l1b.number);

  // With a higher ratio nothing is picked.
  db.options.vlog_gc_ratio = 0.9;
  REQUIRE(db.reopen_and_recover().ok());
  CHECK_FALSE(needs_vlog_gc(*db.vset));
  CHECK(pick_vlog_gc(*db.vset) == nullptr);
}

TEST_CASE("an L0 table is collected in place with every L0 table counted as deeper",
          "[version_set][vlog][gc]") {
  Db db;
  REQUIRE(db.vset->create_new().ok());
  VlogFileMeta v1 = db.new_vlog(10);
  FileMetaData t = db.new_table("a", "z", 5, 6);
  t.vlog_refs = {{v1.number, 100}};
  VersionEdit e;
  e.add_file(0, t);
  e.add_vlog_file(v1);
  REQUIRE(db.vset->log_and_apply(&e).ok());
  std::unique_ptr<Compaction> c = pick_vlog_gc(*db.vset);
  REQUIRE(c != nullptr);
  CHECK(c->level == 0);
  CHECK(c->output_level == 0);
  CHECK(c->first_deeper_level() == 0);
}
