// skv-test-modules: util migrate engine native
// skv-test-wasm: off
// skv-test-fixture: rocksdb
//
// The RocksDB reader against databases Debian's RocksDB wrote (tests/rocksdb_fixture/, run as
// the ctest fixture step): the records must equal RocksDB's own iteration, damaged copies must
// give named errors (never other data), and the source must stay byte-identical.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "native/migrate/rocksdb/manifest.h"
#include "native/migrate/rocksdb/table_reader.h"
#include "native/migrate/source.h"
#include "skv/migrate.h"
#include "skv/skv.h"
#include "support/dir_snapshot.h"
#include "support/temp_dir.h"
#include "util/crc32c.h"

namespace fs = std::filesystem;
using skv::Status;
using namespace skv::migration;

namespace {

const std::string kFixtures = SKV_ROCKSDB_FIXTURES;

std::string hex(std::string_view s) {
  static const char* d = "0123456789ABCDEF";
  std::string o;
  for (unsigned char c : s) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Collects records as dump lines.
class LineSink : public RecordSink {
 public:
  explicit LineSink(bool versions) : versions_(versions) {}
  Status put(const SourceRecord& r) override {
    if (versions_) {
      lines.push_back(hex(r.key) + "\t" + std::to_string(r.timestamp) + "\t" +
                      (r.tombstone ? "T" : "V") + "\t" + hex(r.value));
    } else {
      lines.push_back(std::string(r.family) + "\t" + hex(r.key) + "\t" + hex(r.value));
    }
    return Status::OK();
  }
  std::vector<std::string> lines;

 private:
  bool versions_;
};

struct ReadResult {
  Status status;
  std::vector<std::string> lines;
};

ReadResult read_db(const std::string& dir, const std::vector<std::string>& families,
                   bool versions = false) {
  ReadResult out;
  auto r = open_rocksdb(dir);
  if (!r.ok()) {
    out.status = r.status();
    return out;
  }
  SourceReadOptions o;
  o.families = families;
  o.versions = versions;
  LineSink sink(versions);
  out.status = (*r)->read(o, sink);
  out.lines = std::move(sink.lines);
  return out;
}

// Reports the first differing lines, so a failure says where.
void require_same(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  INFO("first difference at line " << i << ": got '" << (i < got.size() ? got[i] : "<end>")
                                   << "', RocksDB '" << (i < want.size() ? want[i] : "<end>")
                                   << "'");
  REQUIRE(got.size() == want.size());
  REQUIRE(i == got.size());
}

std::string file_name(uint64_t n, const char* ext) {
  char b[32];
  std::snprintf(b, sizeof b, "%06llu.%s", static_cast<unsigned long long>(n), ext);
  return b;
}

void flip_bit(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x10);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

// Copies the fixture database `name` into a fresh directory.
std::string copy_db(const skv::testing::TempDir& tmp, const std::string& name) {
  std::string dst = tmp.sub(name);
  fs::copy(kFixtures + "/" + name, dst, fs::copy_options::recursive);
  return dst;
}

// A damaged copy either reads exactly as the original (the damage hit bytes no read needs) or
// fails with Corruption/NotSupported naming the file; returns whether it failed.
bool damaged_read_is_safe(const std::string& dir, const std::vector<std::string>& families,
                          const std::vector<std::string>& want, const std::string& file) {
  ReadResult r = read_db(dir, families);
  if (r.status.ok()) {
    require_same(r.lines, want);
    return false;
  }
  INFO(r.status.to_string());
  REQUIRE((r.status.code() == skv::Code::Corruption || r.status.code() == skv::Code::NotSupported));
  REQUIRE(r.status.message().find(file) != std::string::npos);
  return true;
}

}  // namespace

TEST_CASE("every family reads as RocksDB's own iterator sees it") {
  std::vector<std::string> fams = lines_of(kFixtures + "/families.txt");
  auto reader = open_rocksdb(kFixtures + "/all");
  REQUIRE(reader.ok());
  std::vector<std::string> have = (*reader)->families();
  REQUIRE(have == fams);  // "dropped" is gone; default first
  REQUIRE((*reader)->has_versions());
  std::string before = skv::testing::dir_snapshot(kFixtures + "/all");
  ReadResult r = read_db(kFixtures + "/all", fams);
  INFO(r.status.to_string());
  REQUIRE(r.status.ok());
  require_same(r.lines, lines_of(kFixtures + "/all.latest.tsv"));
  REQUIRE(skv::testing::dir_snapshot(kFixtures + "/all") == before);
}

TEST_CASE("every version of a u64ts family, with its time in nanoseconds") {
  ReadResult r = read_db(kFixtures + "/all", {"hlc_u64ts"}, true);
  INFO(r.status.to_string());
  REQUIRE(r.status.ok());
  std::vector<std::string> want = lines_of(kFixtures + "/all.versions.tsv");
  REQUIRE(want.size() > 100);
  require_same(r.lines, want);
}

TEST_CASE("recyclable and zstd-compressed WALs") {
  for (const char* name : {"recycle", "zstdwal"}) {
    INFO(name);
    ReadResult r = read_db(kFixtures + "/" + name, {});
    INFO(r.status.to_string());
    REQUIRE(r.status.ok());
    require_same(r.lines, lines_of(kFixtures + "/" + std::string(name) + ".latest.tsv"));
  }
}

TEST_CASE("merge operands are refused, naming the key") {
  ReadResult r = read_db(kFixtures + "/merge", {});
  REQUIRE(r.status.code() == skv::Code::NotSupported);
  REQUIRE(r.status.message().find("merge") != std::string::npos);
  REQUIRE(r.status.message().find("6d6b6579") != std::string::npos);  // "mkey"
}

TEST_CASE("an unknown family is InvalidArgument and a missing source NotFound") {
  ReadResult r = read_db(kFixtures + "/all", {"no-such-family"});
  REQUIRE(r.status.code() == skv::Code::InvalidArgument);
  auto missing = open_rocksdb(kFixtures + "/does-not-exist");
  REQUIRE(missing.status().is_not_found());
}

TEST_CASE("bit flips in a table, a blob file, the manifest and an older WAL give named errors") {
  auto st = skv::migration::rocksdb::replay_manifest(kFixtures + "/all");
  REQUIRE(st.ok());
  std::vector<std::string> fams = lines_of(kFixtures + "/families.txt");
  std::vector<std::string> want = lines_of(kFixtures + "/all.latest.tsv");
  std::vector<std::string> targets;
  for (const auto& [id, cf] : st->families) {
    if (cf.dropped) continue;
    // Tables of checksummed families (lz4hc is written without checksums).
    if (cf.name == "zstd_part" || cf.name == "lz4_fv1" || cf.name == "none_fv0" ||
        cf.name == "lz4_fv4_r4") {
      REQUIRE(!cf.tables.empty());
      targets.push_back(file_name(cf.tables.begin()->first, "sst"));
    }
    if (cf.name == "blob_zstd") {
      REQUIRE(!cf.blob_files.empty());
      targets.push_back(file_name(*cf.blob_files.begin(), "blob"));
    }
  }
  targets.push_back(st->manifest_name);
  {
    std::vector<uint64_t> wals;
    for (const auto& e : fs::directory_iterator(kFixtures + "/all")) {
      std::string n = e.path().filename().string();
      if (n.size() > 4 && n.substr(n.size() - 4) == ".log") wals.push_back(std::stoull(n));
    }
    std::sort(wals.begin(), wals.end());
    REQUIRE(wals.size() >= 2);
    targets.push_back(file_name(wals[wals.size() - 2], "log"));
  }
  for (const std::string& target : targets) {
    uint64_t size = fs::file_size(kFixtures + "/all/" + target);
    int failed = 0, tried = 0;
    for (uint64_t off = 0; off < size; off += std::max<uint64_t>(1, size / 40)) {
      skv::testing::TempDir tmp;
      std::string dir = copy_db(tmp, "all");
      flip_bit(dir + "/" + target, off);
      INFO(target << " bit flipped at " << off);
      failed += damaged_read_is_safe(dir, fams, want, target) ? 1 : 0;
      ++tried;
    }
    INFO(target);
    REQUIRE(failed > tried / 2);  // most of every file is checked bytes
  }
}

TEST_CASE("truncated files give named errors, and a torn tail of the newest WAL is ignored") {
  auto st = skv::migration::rocksdb::replay_manifest(kFixtures + "/recycle");
  REQUIRE(st.ok());
  const auto& def = st->families.at(0);
  REQUIRE(!def.tables.empty());
  std::string sst = file_name(def.tables.begin()->first, "sst");
  {
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "recycle");
    fs::resize_file(dir + "/" + sst, fs::file_size(dir + "/" + sst) - 10);
    ReadResult r = read_db(dir, {});
    REQUIRE(!r.status.ok());
    REQUIRE(r.status.message().find(sst) != std::string::npos);
  }
  {
    // The newest WAL cut in its last record: that record is lost, as RocksDB's point-in-time
    // recovery loses it, and everything before it reads.
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "zstdwal");
    std::string newest;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string n = e.path().filename().string();
      if (n.size() > 4 && n.substr(n.size() - 4) == ".log" && n > newest) newest = n;
    }
    REQUIRE(!newest.empty());
    // Cut in the middle: the records after the cut are lost (those of round 3, the only ones
    // not yet flushed), everything before it and every table still reads.
    fs::resize_file(dir + "/" + newest, fs::file_size(dir + "/" + newest) / 2);
    ReadResult r = read_db(dir, {});
    INFO(r.status.to_string());
    REQUIRE(r.status.ok());
    std::vector<std::string> want = lines_of(kFixtures + "/zstdwal.latest.tsv");
    REQUIRE(r.lines.size() < want.size());
    std::vector<std::string> missing;
    std::set_difference(want.begin(), want.end(), r.lines.begin(), r.lines.end(),
                        std::back_inserter(missing));
    REQUIRE(missing.size() == want.size() - r.lines.size());  // nothing read that is not there
    for (const std::string& l : missing) REQUIRE(l.rfind("default\t" + hex("r3-"), 0) == 0);
  }
}

TEST_CASE("an unsupported compression and other table types are NotSupported by name") {
  auto st = skv::migration::rocksdb::replay_manifest(kFixtures + "/all");
  REQUIRE(st.ok());
  uint64_t table = 0, other = 0;
  for (const auto& [id, cf] : st->families) {
    if (cf.name == "none_fv0") table = cf.tables.begin()->first;
    if (cf.name == "lz4_fv3") other = cf.tables.begin()->first;
  }
  REQUIRE(table != 0);
  REQUIRE(other != 0);
  {
    // The first data block of a CRC32C table relabelled as XPRESS, its checksum recomputed: the
    // reader gets past the checksum and must name the compression it does not decode.
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "all");
    std::string path = dir + "/" + file_name(table, "sst");
    skv::migration::rocksdb::BlockHandle first;
    {
      auto f = SourceFile::open(path);
      REQUIRE(f.ok());
      auto t = skv::migration::rocksdb::TableReader::open(std::move(*f), 0);
      REQUIRE(t.ok());
      REQUIRE((*t)->blocks().checksum_type == 1);
      first = (*t)->data_blocks().at(0);
    }
    std::string block(static_cast<size_t>(first.size) + 1, '\0');
    {
      std::ifstream in(path, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(first.offset));
      in.read(block.data(), static_cast<std::streamsize>(first.size));
    }
    block.back() = 6;
    uint32_t crc = skv::crc32c::mask(skv::crc32c::value(block.data(), block.size()));
    {
      std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
      out.seekp(static_cast<std::streamoff>(first.offset + first.size));
      out.put(6);
      for (int i = 0; i < 4; ++i) out.put(static_cast<char>(crc >> (8 * i)));
    }
    ReadResult r = read_db(dir, {"none_fv0"});
    INFO(r.status.to_string());
    REQUIRE(r.status.code() == skv::Code::NotSupported);
    REQUIRE(r.status.message().find("xpress") != std::string::npos);
    REQUIRE(r.status.message().find(file_name(table, "sst") + ": ") != std::string::npos);
    REQUIRE(r.status.message().find("offset " + std::to_string(first.offset)) != std::string::npos);
  }
  for (const auto& [magic, name] :
       {std::pair<uint64_t, std::string>{0x8242229663bf9564ull, "PlainTable"},
        std::pair<uint64_t, std::string>{0x926789d0c5f17873ull, "CuckooTable"}}) {
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "all");
    std::string path = dir + "/" + file_name(other, "sst");
    uint64_t size = fs::file_size(path);
    {
      std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
      out.seekp(static_cast<std::streamoff>(size - 8));
      for (int i = 0; i < 8; ++i) out.put(static_cast<char>(magic >> (8 * i)));
    }
    ReadResult r = read_db(dir, {"lz4_fv3"});
    INFO(r.status.to_string());
    REQUIRE(r.status.code() == skv::Code::NotSupported);
    REQUIRE(r.status.message().find(name) != std::string::npos);
  }
}

TEST_CASE("progress reports bytes of live files, ending at the total") {
  auto reader = open_rocksdb(kFixtures + "/all");
  REQUIRE(reader.ok());
  uint64_t total = (*reader)->total_bytes();
  REQUIRE(total > 0);
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  SourceReadOptions o;
  o.families = lines_of(kFixtures + "/families.txt");
  o.progress = [&](uint64_t done, uint64_t all) { calls.emplace_back(done, all); };
  LineSink sink(false);
  REQUIRE((*reader)->read(o, sink).ok());
  REQUIRE(!calls.empty());
  for (size_t i = 0; i < calls.size(); ++i) {
    REQUIRE(calls[i].second == total);
    REQUIRE(calls[i].first <= total);
    if (i > 0) REQUIRE(calls[i].first >= calls[i - 1].first);
  }
  REQUIRE(calls.back().first == total);
}

TEST_CASE("a checksum failure followed by valid records in the newest WAL is Corruption") {
  skv::testing::TempDir tmp;
  std::string dir = copy_db(tmp, "recycle");
  std::string newest;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() > 4 && n.substr(n.size() - 4) == ".log" && n > newest) newest = n;
  }
  REQUIRE(!newest.empty());
  // A byte of the first record's payload (after its 11-byte recyclable header and the batch's
  // 12-byte header): many records follow it.
  flip_bit(dir + "/" + newest, 11 + 14);
  ReadResult r = read_db(dir, {});
  INFO(r.status.to_string());
  REQUIRE(r.status.code() == skv::Code::Corruption);
  REQUIRE(r.status.message().find(newest + ": ") != std::string::npos);
  REQUIRE(r.status.message().find("at offset 0") != std::string::npos);
}

namespace {

// Appends one version edit (`payload`) to the manifest of `dir` as a legacy FULL log record.
void append_manifest_record(const std::string& dir, const std::string& payload) {
  auto st = skv::migration::rocksdb::replay_manifest(dir);
  REQUIRE(st.ok());
  std::string path = dir + "/" + st->manifest_name;
  REQUIRE(fs::file_size(path) % 32768 + 7 + payload.size() <= 32768);
  std::string rec(7, '\0');
  rec[4] = static_cast<char>(payload.size() & 0xff);
  rec[5] = static_cast<char>(payload.size() >> 8);
  rec[6] = 1;
  rec += payload;
  uint32_t crc = skv::crc32c::mask(skv::crc32c::value(rec.data() + 6, 1 + payload.size()));
  for (int i = 0; i < 4; ++i) rec[static_cast<size_t>(i)] = static_cast<char>(crc >> (8 * i));
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(rec.data(), static_cast<std::streamsize>(rec.size()));
}

}  // namespace

TEST_CASE("manifest tags: unknown ones are NotSupported unless marked ignorable") {
  std::vector<std::string> want = lines_of(kFixtures + "/zstdwal.latest.tsv");
  {
    // Tag 42 without the ignorable bit: the reader cannot know what it changes.
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "zstdwal");
    append_manifest_record(dir, std::string("\x2a\x01", 2));
    ReadResult r = read_db(dir, {});
    INFO(r.status.to_string());
    REQUIRE(r.status.code() == skv::Code::NotSupported);
    REQUIRE(r.status.message().find("MANIFEST-") != std::string::npos);
    REQUIRE(r.status.message().find("tag 42") != std::string::npos);
  }
  {
    // Tag 8201 (ignorable bit set) with a length-prefixed payload: skipped.
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "zstdwal");
    append_manifest_record(dir, std::string("\x89\x40\x03xyz", 6));
    ReadResult r = read_db(dir, {});
    INFO(r.status.to_string());
    REQUIRE(r.status.ok());
    require_same(r.lines, want);
  }
  {
    // A last record cut short by the end of the file is a torn write: ignored.
    skv::testing::TempDir tmp;
    std::string dir = copy_db(tmp, "zstdwal");
    append_manifest_record(dir, std::string("\x2a\x01", 2));
    auto st = skv::migration::rocksdb::replay_manifest(kFixtures + "/zstdwal");
    REQUIRE(st.ok());
    std::string path = dir + "/" + st->manifest_name;
    fs::resize_file(path, fs::file_size(path) - 1);
    ReadResult r = read_db(dir, {});
    INFO(r.status.to_string());
    REQUIRE(r.status.ok());
    require_same(r.lines, want);
  }
}

TEST_CASE("skv::migrate() of every family holds RocksDB's iteration under family prefixes") {
  skv::testing::TempDir tmp("rocks-migrate");
  std::vector<std::string> want = lines_of(kFixtures + "/all.latest.tsv");
  skv::MigrateOptions o;
  o.all_column_families = true;
  o.versions = false;
  auto summary = skv::migrate(kFixtures + "/all", tmp.sub("db"), o);
  INFO(summary.status().to_string());
  REQUIRE(summary.ok());
  CHECK(summary->source == skv::MigrationSource::RocksDb);
  CHECK_FALSE(summary->versioned);
  CHECK(summary->keys == want.size());
  auto tree = skv::TreeBuilder().with_path(tmp.sub("db")).with_create_if_missing(false).build();
  REQUIRE(tree.ok());
  auto tx = tree->begin_with_mode(skv::Mode::ReadOnly);
  REQUIRE(tx.ok());
  auto it = tx->range("", "");
  REQUIRE(it.ok());
  std::vector<std::string> got;
  for (it->seek_first(); it->valid(); it->next()) {
    const std::string_view k = it->key();
    const size_t zero = k.find('\0');
    REQUIRE(zero != std::string_view::npos);
    got.push_back(std::string(k.substr(0, zero)) + "\t" + hex(k.substr(zero + 1)) + "\t" +
                  hex(it->value().value()));
  }
  REQUIRE(it->status().ok());
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  require_same(got, want);
  REQUIRE(tree->close().ok());
}

TEST_CASE("skv::migrate() of a u64ts family keeps every version with its time") {
  skv::testing::TempDir tmp("rocks-migrate-v");
  skv::MigrateOptions o;
  o.column_families = {"hlc_u64ts"};
  auto summary = skv::migrate(kFixtures + "/all", tmp.sub("db"), o);
  INFO(summary.status().to_string());
  REQUIRE(summary.ok());
  CHECK(summary->versioned);
  auto tree = skv::TreeBuilder().with_path(tmp.sub("db")).with_create_if_missing(false).build();
  REQUIRE(tree.ok());
  auto tx = tree->begin_with_mode(skv::Mode::ReadOnly);
  REQUIRE(tx.ok());
  skv::HistoryOptions all;
  all.include_tombstones = true;
  auto it = tx->history_range("", "", all);
  REQUIRE(it.ok());
  std::vector<std::string> got;
  for (it->seek_first(); it->valid(); it->next()) {
    got.push_back(hex(it->key()) + "\t" + std::to_string(it->timestamp()) + "\t" +
                  (it->is_tombstone() ? "T" : "V") + "\t" +
                  (it->is_tombstone() ? "" : hex(it->value().value())));
  }
  REQUIRE(it->status().ok());
  require_same(got, lines_of(kFixtures + "/all.versions.tsv"));
  REQUIRE(tree->close().ok());
}
