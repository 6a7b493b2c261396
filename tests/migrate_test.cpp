// skv-test-modules: engine native migrate
// skv-test-wasm: off
// migrate() and its driver (skv/migrate.h, native/migrate/): an IndexedDB dump migrates into a
// database holding exactly its records, and every malformed dump is a named error that leaves
// nothing at the destination; the destination is built aside and appears only when complete
// (an existing path is refused untouched, a foreign ".migrating" directory is refused, an
// interrupted run's is replaced); through a reader of the test's own, several families map to
// prefixed keys or merge (refusing a key in two families), versions arrive with their times and
// deletions, and a reader that fails half way leaves nothing; the source's kind is detected from
// its files.

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "native/migrate/migrate_driver.h"
#include "native/migrate/source.h"
#include "skv/migrate.h"
#include "skv/skv.h"
#include "support/dir_snapshot.h"
#include "support/temp_dir.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;
namespace fs = std::filesystem;

namespace {

std::string be32(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (24 - 8 * i));
  return out;
}

std::string dump_of(const std::vector<std::pair<std::string, std::string>>& records) {
  std::string out = "INDXDB01" + be32(static_cast<uint32_t>(records.size()));
  for (const auto& [k, v] : records) out += be32(k.size()) + k + be32(v.size()) + v;
  return out;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

Model open_and_read(const std::string& path) {
  Tree tree = open_or_fail(TreeBuilder().with_path(path).with_create_if_missing(false));
  Model m = read_all(tree);
  require_ok(tree.close());
  return m;
}

// Nothing at `dest`, and no staging directory beside it.
void check_nothing_at(const std::string& dest) {
  CHECK_FALSE(fs::exists(dest));
  CHECK_FALSE(fs::exists(dest + ".migrating"));
}

// A reader of the test's own, over a list of records given in the order the interface asks
// for; `fail_after` >= 0 makes read() fail after that many records.
class ListReader : public migration::SourceReader {
 public:
  struct Rec {
    std::string family, key, value;
    uint64_t ts = 0;
    bool tombstone = false;
  };
  ListReader(MigrationSource kind, std::vector<std::string> families, bool versions,
             std::vector<Rec> recs)
      : kind_(kind), families_(std::move(families)), versions_(versions), recs_(std::move(recs)) {}

  MigrationSource kind() const override { return kind_; }
  std::vector<std::string> families() const override { return families_; }
  bool has_versions() const override { return versions_; }
  uint64_t total_bytes() const override { return 1000; }
  Status read(const migration::SourceReadOptions& options, migration::RecordSink& sink) override {
    asked = options;
    int n = 0;
    for (const std::string& f : options.families) {
      for (const Rec& r : recs_) {
        if (r.family != f) continue;
        if (!options.versions && r.tombstone) continue;
        if (fail_after >= 0 && n == fail_after) return Status::corruption("the test's failure");
        migration::SourceRecord out;
        out.family = r.family;
        out.key = r.key;
        out.value = r.value;
        out.timestamp = options.versions ? r.ts : 0;
        out.tombstone = r.tombstone;
        Status s = sink.put(out);
        if (!s.ok()) return s;
        ++n;
        if (options.progress) options.progress(static_cast<uint64_t>(n), 1000);
      }
    }
    return Status::OK();
  }

  int fail_after = -1;
  migration::SourceReadOptions asked;

 private:
  MigrationSource kind_;
  std::vector<std::string> families_;
  bool versions_;
  std::vector<Rec> recs_;
};

}  // namespace

TEST_CASE("an IndexedDB dump migrates into a database holding exactly its records") {
  TempDir dir("migrate-dump");
  std::vector<std::pair<std::string, std::string>> records;
  Model want;
  for (int i = 499; i >= 0; --i) {  // unsorted in the file
    std::string key = "k" + std::to_string(i * 7919 % 1000);
    key.push_back(static_cast<char>(i % 256));  // binary bytes too
    std::string value(static_cast<size_t>(i % 300), static_cast<char>('a' + i % 26));
    records.emplace_back(key, value);
    want[key] = value;
  }
  write_file(dir.sub("dump.bin"), dump_of(records));
  const std::string before = dir_snapshot(dir.path);

  std::vector<MigrateProgress> seen;
  MigrateOptions options;
  options.batch_bytes = 16 * 1024;  // several batches
  options.progress = [&](const MigrateProgress& p) { seen.push_back(p); };
  auto summary = migrate(dir.sub("dump.bin"), dir.sub("db"), options);
  require_ok(summary.status());
  CHECK(summary->source == MigrationSource::IndexedDbDump);
  CHECK(summary->keys == 500);
  CHECK(summary->versions == 500);
  CHECK_FALSE(summary->versioned);
  CHECK(summary->source_bytes == fs::file_size(dir.sub("dump.bin")));
  REQUIRE(seen.size() > 2);
  CHECK(seen.back().keys == 500);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].keys >= seen[i - 1].keys);

  CHECK(open_and_read(dir.sub("db")) == want);
  CHECK_FALSE(fs::exists(dir.sub("db.migrating")));
  // The source is only read.
  CHECK(dir_snapshot(dir.path, dir.sub("db")) == before);

  // A directory holding the dump under its usual name migrates the same.
  fs::create_directories(dir.sub("export"));
  write_file(dir.sub("export/indxdb_dump.bin"), dump_of(records));
  auto again = migrate(dir.sub("export"), dir.sub("db2"));
  require_ok(again.status());
  CHECK(open_and_read(dir.sub("db2")) == want);
}

TEST_CASE("a malformed dump is a named error and leaves nothing at the destination") {
  TempDir dir("migrate-baddump");
  const std::string good = dump_of({{"a", "1"}, {"b", "22"}, {"c", "333"}});
  std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"bad magic", "INDXDB02" + good.substr(8), "magic"},
      {"trailing byte", good + "x", "follow the last"},
      {"count too large", "INDXDB01" + be32(4) + good.substr(12), "ends inside record 3"},
      {"count too small", "INDXDB01" + be32(2) + good.substr(12), "follow the last"},
      {"absurd count", "INDXDB01" + be32(0xffffffffu) + good.substr(12), "more than"},
      {"key length past the end", "INDXDB01" + be32(1) + be32(100) + "abcdefgh", "past the end"},
      {"duplicate key", dump_of({{"a", "1"}, {"a", "2"}}), "twice"},
      {"empty file", "", "shorter than"},
      {"empty key", dump_of({{"", "v"}}), "empty key"},
  };
  // Every truncation of a good dump, too.
  for (size_t n = 1; n < good.size(); ++n) {
    cases.emplace_back("truncated to " + std::to_string(n), good.substr(0, n), "");
  }
  for (const auto& [name, bytes, needle] : cases) {
    INFO(name);
    write_file(dir.sub("dump.bin"), bytes);
    MigrateOptions options;
    options.source = MigrationSource::IndexedDbDump;
    auto s = migrate(dir.sub("dump.bin"), dir.sub("db"), options);
    REQUIRE_FALSE(s.ok());
    INFO(s.status().to_string());
    CHECK((s.status().code() == Code::Corruption || s.status().code() == Code::InvalidArgument));
    CHECK(s.status().message().find(needle) != std::string::npos);
    check_nothing_at(dir.sub("db"));
  }
}

TEST_CASE(
    "the destination is built aside: an existing path or a foreign staging directory is "
    "refused untouched, an interrupted run's staging directory is replaced") {
  TempDir dir("migrate-dest");
  write_file(dir.sub("dump.bin"), dump_of({{"a", "1"}}));
  // An existing destination: a file, an empty directory, a database.
  write_file(dir.sub("file"), "mine");
  fs::create_directories(dir.sub("empty"));
  require_ok(migrate(dir.sub("dump.bin"), dir.sub("db")).status());
  const std::string before = dir_snapshot(dir.path);
  for (const char* target : {"file", "empty", "db"}) {
    INFO(target);
    auto s = migrate(dir.sub("dump.bin"), dir.sub(target));
    CHECK(s.status().code() == Code::InvalidArgument);
    CHECK(s.status().message().find("exists") != std::string::npos);
  }
  CHECK(migrate(dir.sub("dump.bin"), "").status().code() == Code::InvalidArgument);
  // "x.migrating" that is not a migration's own.
  fs::create_directories(dir.sub("x.migrating"));
  write_file(dir.sub("x.migrating/notes"), "mine");
  const std::string with_foreign = dir_snapshot(dir.path);
  CHECK(migrate(dir.sub("dump.bin"), dir.sub("x")).status().code() == Code::InvalidArgument);
  CHECK(dir_snapshot(dir.path) == with_foreign);
  fs::remove_all(dir.sub("x.migrating"));
  CHECK(dir_snapshot(dir.path) == before);

  // What an interrupted run leaves: the marker and a half-made database. The next run replaces
  // it, and the half-made database never opens as the destination.
  fs::create_directories(dir.sub("y.migrating/db"));
  write_file(dir.sub("y.migrating/SKV-MIGRATION-IN-PROGRESS"), "x");
  write_file(dir.sub("y.migrating/db/000001.sst"), "half");
  auto s = migrate(dir.sub("dump.bin"), dir.sub("y"));
  require_ok(s.status());
  CHECK(open_and_read(dir.sub("y")) == Model{{"a", "1"}});
  CHECK_FALSE(fs::exists(dir.sub("y.migrating")));
}

TEST_CASE("families map to prefixed keys, or merge when their keys are distinct") {
  TempDir dir("migrate-families");
  using R = ListReader::Rec;
  std::vector<R> recs = {{"default", "a", "d-a"},
                         {"default", "b", "d-b"},
                         {"users", "a", "u-a"},
                         {"users", "c", "u-c"},
                         {"logs", "z", "l-z"}};
  auto reader = [&] {
    return ListReader(MigrationSource::RocksDb, {"default", "users", "logs"}, false, recs);
  };

  {  // the default family alone, keys as they are
    ListReader r = reader();
    auto s = migration::migrate_from(r, dir.sub("one"), {}, TreeBuilder());
    require_ok(s.status());
    CHECK(r.asked.families == std::vector<std::string>{"default"});
    CHECK(s->column_families == std::vector<std::string>{"default"});
    CHECK(open_and_read(dir.sub("one")) == Model{{"a", "d-a"}, {"b", "d-b"}});
  }
  {  // every family, prefixed
    ListReader r = reader();
    MigrateOptions o;
    o.all_column_families = true;
    auto s = migration::migrate_from(r, dir.sub("all"), o, TreeBuilder());
    require_ok(s.status());
    CHECK(s->keys == 5);
    using namespace std::string_literals;
    CHECK(open_and_read(dir.sub("all")) == Model{{"default\0a"s, "d-a"},
                                                 {"default\0b"s, "d-b"},
                                                 {"users\0a"s, "u-a"},
                                                 {"users\0c"s, "u-c"},
                                                 {"logs\0z"s, "l-z"}});
  }
  {  // two families merged: distinct keys are fine
    ListReader r = reader();
    MigrateOptions o;
    o.column_families = {"logs", "default"};
    o.family_mapping = FamilyMapping::Merge;
    auto s = migration::migrate_from(r, dir.sub("merged"), o, TreeBuilder());
    require_ok(s.status());
    CHECK(r.asked.families == std::vector<std::string>{"logs", "default"});
    CHECK(open_and_read(dir.sub("merged")) == Model{{"a", "d-a"}, {"b", "d-b"}, {"z", "l-z"}});
  }
  {  // a key in two merged families is refused, and nothing is left
    ListReader r = reader();
    MigrateOptions o;
    o.column_families = {"default", "users"};
    o.family_mapping = FamilyMapping::Merge;
    auto s = migration::migrate_from(r, dir.sub("clash"), o, TreeBuilder());
    CHECK(s.status().code() == Code::InvalidArgument);
    CHECK(s.status().message().find("\"a\" of column family \"users\"") != std::string::npos);
    check_nothing_at(dir.sub("clash"));
  }
  {  // a family the source lacks, or one named twice
    ListReader r = reader();
    MigrateOptions o;
    o.column_families = {"nope"};
    auto s = migration::migrate_from(r, dir.sub("nope"), o, TreeBuilder());
    CHECK(s.status().code() == Code::InvalidArgument);
    CHECK(s.status().message().find("default, users, logs") != std::string::npos);
    o.column_families = {"users", "users"};
    CHECK(migration::migrate_from(r, dir.sub("nope"), o, TreeBuilder()).status().code() ==
          Code::InvalidArgument);
    check_nothing_at(dir.sub("nope"));
  }
}

TEST_CASE("versions arrive with their times and deletions, or only the newest values") {
  TempDir dir("migrate-versions");
  using R = ListReader::Rec;
  const uint64_t t = 1'700'000'000'000'000'000ull;
  std::vector<R> recs = {{"", "a", "a3", t + 30},
                         {"", "a", "a1", t + 10},
                         {"", "b", "", t + 50, true},
                         {"", "b", "b2", t + 20},
                         {"", "c", "c9", t + 90}};
  {
    ListReader r(MigrationSource::SurrealKv, {""}, true, recs);
    auto s = migration::migrate_from(r, dir.sub("v"), {}, TreeBuilder());
    require_ok(s.status());
    CHECK(s->versioned);
    CHECK(s->keys == 3);
    CHECK(s->versions == 5);
    CHECK(s->tombstones == 1);
    Tree tree = open_or_fail(TreeBuilder().with_path(dir.sub("v")).with_create_if_missing(false));
    CHECK(tree.versioning().enabled);
    Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
    HistoryOptions all;
    all.include_tombstones = true;
    auto h = tx.history("b", all);
    require_ok(h.status());
    REQUIRE(h->size() == 2);
    CHECK((*h)[0].tombstone);
    CHECK((*h)[0].timestamp == t + 50);
    CHECK((*h)[1].value == "b2");
    CHECK((*h)[1].timestamp == t + 20);
    CHECK(*tx.get_at("a", t + 15).value() == "a1");
    CHECK(*tx.get_at("a", t + 35).value() == "a3");
    CHECK_FALSE(tx.get_at("b", t + 60).value().has_value());
    CHECK(read_all(tree) == Model{{"a", "a3"}, {"c", "c9"}});
    require_ok(tree.close());
  }
  {  // without versions: the newest value of each key, in a tree that is not versioned
    ListReader r(MigrationSource::SurrealKv, {""}, true,
                 {{"", "a", "a3", t + 30}, {"", "c", "c9", t + 90}});
    MigrateOptions o;
    o.versions = false;
    auto s = migration::migrate_from(r, dir.sub("nv"), o, TreeBuilder());
    require_ok(s.status());
    CHECK_FALSE(s->versioned);
    CHECK_FALSE(r.asked.versions);
    Tree tree = open_or_fail(TreeBuilder().with_path(dir.sub("nv")).with_create_if_missing(false));
    CHECK_FALSE(tree.versioning().enabled);
    CHECK(read_all(tree) == Model{{"a", "a3"}, {"c", "c9"}});
    require_ok(tree.close());
  }
}

TEST_CASE("a reader that fails or misbehaves half way leaves nothing at the destination") {
  TempDir dir("migrate-fail");
  using R = ListReader::Rec;
  std::vector<R> many;
  for (int i = 0; i < 200; ++i) {
    many.push_back({"", "k" + std::to_string(1000 + i), std::string(100, 'v')});
  }
  {
    ListReader r(MigrationSource::IndexedDbDump, {""}, false, many);
    r.fail_after = 150;
    MigrateOptions o;
    o.batch_bytes = 1024;  // batches were committed before the failure
    auto s = migration::migrate_from(r, dir.sub("db"), o, TreeBuilder());
    CHECK(s.status().code() == Code::Corruption);
    check_nothing_at(dir.sub("db"));
  }
  const std::vector<std::pair<std::string, std::vector<R>>> bad = {
      {"out of order", {{"", "b", "1"}, {"", "a", "2"}}},
      {"twice", {{"", "a", "1"}, {"", "a", "2"}}},
      {"too long a key", {{"", std::string(kMaxKeySize + 1, 'k'), "v"}}},
      {"empty key", {{"", "", "v"}}},
  };
  for (const auto& [name, recs] : bad) {
    INFO(name);
    ListReader r(MigrationSource::IndexedDbDump, {""}, false, recs);
    auto s = migration::migrate_from(r, dir.sub("db"), {}, TreeBuilder());
    REQUIRE_FALSE(s.ok());
    CHECK((s.status().code() == Code::Corruption || s.status().code() == Code::InvalidArgument));
    check_nothing_at(dir.sub("db"));
  }
}

TEST_CASE("in a versioned import, records without a time get the time of the migration") {
  TempDir dir("migrate-notime");
  const uint64_t t = 1'700'000'000'000'000'000ull;
  ListReader r(MigrationSource::RocksDb, {"default", "timed"}, true,
               {{"default", "a", "plain"}, {"timed", "a", "old", t}});
  MigrateOptions o;
  o.all_column_families = true;
  const auto before = std::chrono::system_clock::now().time_since_epoch();
  auto s = migration::migrate_from(r, dir.sub("db"), o, TreeBuilder());
  const auto after = std::chrono::system_clock::now().time_since_epoch();
  require_ok(s.status());
  Tree tree = open_or_fail(TreeBuilder().with_path(dir.sub("db")).with_create_if_missing(false));
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  using namespace std::string_literals;
  auto plain = tx.history("default\0a"s);
  require_ok(plain.status());
  REQUIRE(plain->size() == 1);
  CHECK((*plain)[0].timestamp >= static_cast<uint64_t>(std::chrono::nanoseconds(before).count()));
  CHECK((*plain)[0].timestamp <= static_cast<uint64_t>(std::chrono::nanoseconds(after).count()));
  auto timed = tx.history("timed\0a"s);
  require_ok(timed.status());
  REQUIRE(timed->size() == 1);
  CHECK((*timed)[0].timestamp == t);
  require_ok(tree.close());
}

TEST_CASE("the source's kind is detected from its files") {
  TempDir dir("migrate-detect");
  write_file(dir.sub("dump.bin"), dump_of({{"a", "1"}}));
  CHECK(detect_migration_source(dir.sub("dump.bin")).value() == MigrationSource::IndexedDbDump);
  fs::create_directories(dir.sub("export"));
  write_file(dir.sub("export/indxdb_dump.bin"), dump_of({}));
  CHECK(detect_migration_source(dir.sub("export")).value() == MigrationSource::IndexedDbDump);
  fs::create_directories(dir.sub("skv1/manifest"));
  write_file(dir.sub("skv1/manifest/00000000000000000000.manifest"), "x");
  CHECK(detect_migration_source(dir.sub("skv1")).value() == MigrationSource::SurrealKv);
  fs::create_directories(dir.sub("rocks"));
  write_file(dir.sub("rocks/CURRENT"), "MANIFEST-000005\n");
  CHECK(detect_migration_source(dir.sub("rocks")).value() == MigrationSource::RocksDb);

  Tree tree = open_or_fail(TreeBuilder().with_path(dir.sub("ours")));
  require_ok(tree.set("a", "1"));
  require_ok(tree.close());
  auto ours = detect_migration_source(dir.sub("ours"));
  CHECK(ours.status().code() == Code::InvalidArgument);
  CHECK(ours.status().message().find("already an skv database") != std::string::npos);

  write_file(dir.sub("text"), "hello");
  CHECK(detect_migration_source(dir.sub("text")).status().code() == Code::InvalidArgument);
  fs::create_directories(dir.sub("empty"));
  CHECK(detect_migration_source(dir.sub("empty")).status().code() == Code::InvalidArgument);
  CHECK(detect_migration_source(dir.sub("missing")).status().code() == Code::NotFound);
  CHECK(migration_source_name(MigrationSource::RocksDb) == "rocksdb");
  CHECK(migration_source_name(MigrationSource::IndexedDbDump) == "indexeddb-dump");
}
