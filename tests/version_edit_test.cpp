// skv-test-modules: util wal vlog sstable memtable version memory
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>

#include "format/file_names.h"
#include "format/internal_key.h"
#include "util/coding.h"
#include "version/version_edit.h"

using namespace skv;

namespace {

FileMetaData make_file(uint64_t number, const std::string& lo, const std::string& hi,
                       SequenceNumber s1, SequenceNumber s2) {
  FileMetaData m;
  m.number = number;
  m.file_size = 1000 + number;
  m.smallest = make_internal_key(lo, s2, ValueKind::Value, 7);
  m.largest = make_internal_key(hi, s1, ValueKind::Delete, 9);
  m.smallest_seq = s1;
  m.largest_seq = s2;
  m.num_entries = 10 * number;
  return m;
}

VersionEdit full_edit() {
  VersionEdit e;
  e.set_log_number(12);
  e.set_next_file_number(345);
  e.set_last_sequence(kMaxSequenceNumber - 1);
  e.set_last_timestamp(kMaxTimestamp);
  e.set_versioning(Versioning{true, 86'400'000'000'000ull});
  e.set_compact_pointer(2, make_internal_key("ptr", 5, ValueKind::Value, 0));
  e.delete_file(1, 77);
  e.delete_file(0, 78);
  e.add_file(0, make_file(100, "a", "m", 3, 9));
  e.add_file(3, make_file(101, std::string("\x00\xff", 2), "zz", 1, 1));
  return e;
}

void require_same(const VersionEdit& a, const VersionEdit& b) {
  std::string ea, eb;
  a.encode_to(&ea);
  b.encode_to(&eb);
  REQUIRE(ea == eb);
  REQUIRE(a.debug_string() == b.debug_string());
}

}  // namespace

TEST_CASE("version edit round trips every field", "[version_edit]") {
  VersionEdit e = full_edit();
  std::string enc;
  e.encode_to(&enc);

  VersionEdit d;
  REQUIRE(d.decode_from(enc).ok());
  REQUIRE(d.log_number() == std::optional<uint64_t>(12));
  REQUIRE(d.next_file_number() == std::optional<uint64_t>(345));
  REQUIRE(d.last_sequence() == std::optional<SequenceNumber>(kMaxSequenceNumber - 1));
  REQUIRE(d.last_timestamp() == std::optional<uint64_t>(kMaxTimestamp));
  REQUIRE(d.versioning() == std::optional<Versioning>(Versioning{true, 86'400'000'000'000ull}));
  REQUIRE(d.debug_string().find("versioning: on") != std::string::npos);
  REQUIRE(d.compact_pointers().size() == 1);
  REQUIRE(d.compact_pointers()[0].first == 2);
  REQUIRE(d.deleted_files().size() == 2);
  REQUIRE(d.deleted_files()[1].level == 0);
  REQUIRE(d.deleted_files()[1].number == 78);
  REQUIRE(d.new_files().size() == 2);
  const FileMetaData& m = d.new_files()[1].meta;
  REQUIRE(d.new_files()[1].level == 3);
  REQUIRE(m.number == 101);
  REQUIRE(m.file_size == 1101);
  REQUIRE(extract_user_key(m.smallest) == std::string("\x00\xff", 2));
  REQUIRE(extract_user_key(m.largest) == "zz");
  REQUIRE(m.num_entries == 1010);
  require_same(e, d);
  REQUIRE(d.debug_string().find("add: L3 #101") != std::string::npos);
}

TEST_CASE("an empty edit round trips", "[version_edit]") {
  VersionEdit e;
  std::string enc;
  e.encode_to(&enc);
  REQUIRE(enc.empty());
  VersionEdit d;
  d.set_log_number(3);
  REQUIRE(d.decode_from(enc).ok());
  REQUIRE(!d.log_number());
  REQUIRE(d.new_files().empty());
}

TEST_CASE("every prefix of an edit decodes to a prefix of it or is corruption", "[version_edit]") {
  std::string enc;
  full_edit().encode_to(&enc);
  int ok = 0;
  for (size_t n = 0; n < enc.size(); ++n) {
    std::string prefix = enc.substr(0, n);  // its own allocation: reads past it are caught
    VersionEdit d;
    Status s = d.decode_from(prefix, "MANIFEST-000009", 4096);
    if (s.ok()) {
      ++ok;
      std::string again;
      d.encode_to(&again);
      REQUIRE(again == prefix);
    } else {
      REQUIRE(s.is_corruption());
      REQUIRE(s.message().find("MANIFEST-000009") != std::string::npos);
      REQUIRE(s.message().find("offset 4096") != std::string::npos);
      REQUIRE(d.new_files().empty());  // cleared on error
    }
  }
  REQUIRE(ok == 10);  // the empty prefix and one after each of the 9 complete fields but the last
}

TEST_CASE("damaged edits never crash and are corruption or a valid edit", "[version_edit]") {
  const uint32_t seed = 20240611;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::string enc;
  full_edit().encode_to(&enc);
  int corrupt = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string bad = enc;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < flips; ++i) {
      bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    if (rng() % 4 == 0) bad.resize(rng() % bad.size());
    VersionEdit d;
    Status s = d.decode_from(bad, "m", 0);
    if (!s.ok()) {
      REQUIRE(s.is_corruption());
      ++corrupt;
      continue;
    }
    // Whatever decoded satisfies the invariants the decoder promises.
    for (const auto& nf : d.new_files()) {
      REQUIRE(nf.level < kMaxLevelCount);
      REQUIRE(nf.meta.number >= 1);
      REQUIRE(nf.meta.num_entries >= 1);
      REQUIRE(nf.meta.smallest_seq <= nf.meta.largest_seq);
      REQUIRE(compare_internal_keys(nf.meta.smallest, nf.meta.largest) <= 0);
    }
    for (const auto& df : d.deleted_files()) REQUIRE(df.level < kMaxLevelCount);
  }
  REQUIRE(corrupt > 1000);
}

TEST_CASE("specific malformed edits are corruption", "[version_edit]") {
  auto decode = [](const std::string& bytes) {
    VersionEdit d;
    return d.decode_from(bytes, "MANIFEST-000002", 64);
  };
  std::string s;

  SECTION("unknown tag") {
    put_varint32(&s, 99);
    put_varint64(&s, 1);
  }
  SECTION("repeated log number") {
    put_varint32(&s, 1);
    put_varint64(&s, 5);
    put_varint32(&s, 1);
    put_varint64(&s, 6);
  }
  SECTION("sequence beyond 56 bits") {
    put_varint32(&s, 3);
    put_varint64(&s, kMaxSequenceNumber + 1);
  }
  SECTION("timestamp beyond 63 bits") {
    put_varint32(&s, 8);
    put_varint64(&s, kMaxTimestamp + 1);
  }
  SECTION("repeated last timestamp") {
    put_varint32(&s, 8);
    put_varint64(&s, 5);
    put_varint32(&s, 8);
    put_varint64(&s, 6);
  }
  SECTION("versioning flag other than 0 or 1") {
    put_varint32(&s, 7);
    s.push_back(2);
    put_varint64(&s, 0);
  }
  SECTION("versioning cut after its flag") {
    put_varint32(&s, 7);
    s.push_back(1);
  }
  SECTION("repeated versioning") {
    put_varint32(&s, 7);
    s.push_back(1);
    put_varint64(&s, 0);
    put_varint32(&s, 7);
    s.push_back(0);
    put_varint64(&s, 0);
  }
  SECTION("level out of range") {
    put_varint32(&s, 5);
    put_varint32(&s, kMaxLevelCount);
    put_varint64(&s, 4);
  }
  SECTION("deleted file number zero") {
    put_varint32(&s, 5);
    put_varint32(&s, 1);
    put_varint64(&s, 0);
  }
  SECTION("overlong varint") {
    put_varint32(&s, 2);
    s.append(11, '\xff');
  }
  SECTION("new file whose keys are out of order") {
    VersionEdit e;
    FileMetaData m = make_file(5, "b", "a", 1, 2);
    e.add_file(1, m);
    e.encode_to(&s);
  }
  SECTION("new file whose sequences are out of order") {
    VersionEdit e;
    FileMetaData m = make_file(5, "a", "b", 1, 2);
    m.smallest_seq = 3;
    e.add_file(1, m);
    e.encode_to(&s);
  }
  SECTION("new file with no entries") {
    VersionEdit e;
    FileMetaData m = make_file(5, "a", "b", 1, 2);
    m.num_entries = 0;
    e.add_file(1, m);
    e.encode_to(&s);
  }
  SECTION("new file key too short to be an internal key") {
    put_varint32(&s, 6);
    put_varint32(&s, 1);
    put_varint64(&s, 5);
    put_varint64(&s, 100);
    put_length_prefixed(&s, "short");
    put_length_prefixed(&s, make_internal_key("b", 1, ValueKind::Value, 0));
    put_varint64(&s, 1);
    put_varint64(&s, 1);
    put_varint64(&s, 1);
  }
  SECTION("key length beyond the input") {
    put_varint32(&s, 4);
    put_varint32(&s, 1);
    put_varint64(&s, 1000);
    s += "abc";
  }
  SECTION("unknown value kind in a key") {
    put_varint32(&s, 4);
    put_varint32(&s, 1);
    std::string k = "key";
    put_fixed64(&k, (uint64_t{5} << 8) | 7);
    put_fixed64(&k, 0);
    put_length_prefixed(&s, k);
  }
  Status st = decode(s);
  REQUIRE(st.is_corruption());
  REQUIRE(st.message().find("MANIFEST-000002") != std::string::npos);
}

TEST_CASE("file numbers at the top of the number space are corruption", "[version_edit]") {
  // Found by manifest_fuzz: a next file number of 2^64 - 1 made the next number wrap to 0, so
  // the engine would have handed out numbers of files that exist. The next file number is one
  // to hand out, so it must be below the bound as well: exactly 2^56 is corrupt too.
  for (uint64_t n : {kMaxFileNumber, kMaxFileNumber + 1, UINT64_MAX}) {
    INFO("number " << n);
    VersionEdit e;
    e.set_next_file_number(n);
    std::string enc;
    e.encode_to(&enc);
    VersionEdit d;
    CHECK(d.decode_from(enc, "MANIFEST-000001", 0).is_corruption());
    VersionEdit l;
    l.set_log_number(n);
    enc.clear();
    l.encode_to(&enc);
    CHECK(d.decode_from(enc, "MANIFEST-000001", 0).is_corruption());
  }
  VersionEdit ok;
  ok.set_next_file_number(kMaxFileNumber - 1);
  ok.set_log_number(kMaxFileNumber - 2);
  std::string enc;
  ok.encode_to(&enc);
  VersionEdit d;
  CHECK(d.decode_from(enc, "MANIFEST-000001", 0).ok());
}

namespace {

// An edit with every value log field: two new value logs, a deleted one, and a table that
// points into two of them.
VersionEdit vlog_edit() {
  VersionEdit e;
  e.set_log_number(4);
  FileMetaData t = make_file(20, "a", "k", 2, 6);
  t.vlog_refs = {{7, 100}, {9, 13}};
  e.add_file(0, t);
  e.add_file(1, make_file(21, "m", "p", 1, 1));  // no pointers
  e.add_vlog_file(VlogFileMeta{7, 64 + 500, 3});
  e.add_vlog_file(VlogFileMeta{9, 64 + 13, 1});
  e.delete_vlog_file(5);
  return e;
}

}  // namespace

TEST_CASE("value log records round trip", "[version_edit][vlog]") {
  VersionEdit e = vlog_edit();
  std::string enc;
  e.encode_to(&enc);
  VersionEdit d;
  REQUIRE(d.decode_from(enc).ok());
  REQUIRE(d.new_vlog_files().size() == 2);
  CHECK(d.new_vlog_files()[0] == (VlogFileMeta{7, 564, 3}));
  CHECK(d.new_vlog_files()[1].entry_bytes() == 13);
  REQUIRE(d.deleted_vlog_files() == std::vector<uint64_t>{5});
  REQUIRE(d.new_files().size() == 2);
  CHECK(d.new_files()[0].meta.vlog_refs == (std::vector<VlogRef>{{7, 100}, {9, 13}}));
  CHECK(d.new_files()[1].meta.vlog_refs.empty());
  require_same(e, d);
  CHECK(d.debug_string().find("vlog #7:100") != std::string::npos);
  CHECK(d.debug_string().find("delete vlog: #5") != std::string::npos);

  // Every prefix is a prefix of the edit or corruption; the references alone (without their
  // table, cut off) never decode.
  for (size_t n = 0; n < enc.size(); ++n) {
    std::string prefix = enc.substr(0, n);
    VersionEdit p;
    Status s = p.decode_from(prefix, "MANIFEST-000003", 8);
    if (s.ok()) {
      std::string again;
      p.encode_to(&again);
      CHECK(again == prefix);
    } else {
      CHECK(s.is_corruption());
      CHECK(s.message().find("MANIFEST-000003") != std::string::npos);
    }
  }
}

TEST_CASE("damaged value log records are corruption or keep their invariants",
          "[version_edit][vlog]") {
  const uint32_t seed = 20250105;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::string enc;
  vlog_edit().encode_to(&enc);
  for (int round = 0; round < 5000; ++round) {
    std::string bad = enc;
    bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    if (rng() % 4 == 0) bad.resize(rng() % bad.size());
    VersionEdit d;
    Status s = d.decode_from(bad, "m", 0);
    if (!s.ok()) {
      REQUIRE(s.is_corruption());
      continue;
    }
    for (const auto& v : d.new_vlog_files()) {
      REQUIRE(v.number >= 1);
      REQUIRE(v.num_entries >= 1);
      REQUIRE(v.entry_bytes() >= 13 * v.num_entries);
    }
    for (const auto& nf : d.new_files()) {
      for (size_t i = 0; i < nf.meta.vlog_refs.size(); ++i) {
        REQUIRE(nf.meta.vlog_refs[i].bytes >= 13);
        if (i > 0) REQUIRE(nf.meta.vlog_refs[i - 1].vlog_number < nf.meta.vlog_refs[i].vlog_number);
      }
    }
  }
}

TEST_CASE("malformed value log records are corruption", "[version_edit][vlog]") {
  std::string s;
  auto table_refs = [&s](uint64_t table, std::vector<std::pair<uint64_t, uint64_t>> refs) {
    put_varint32(&s, 11);
    put_varint64(&s, table);
    put_varint32(&s, static_cast<uint32_t>(refs.size()));
    for (auto [n, b] : refs) {
      put_varint64(&s, n);
      put_varint64(&s, b);
    }
  };
  auto new_table = [&s](uint64_t number) {
    VersionEdit e;
    e.add_file(0, make_file(number, "a", "b", 1, 1));
    e.encode_to(&s);
  };
  auto new_vlog = [&s](uint64_t number, uint64_t size, uint64_t entries) {
    put_varint32(&s, 9);
    put_varint64(&s, number);
    put_varint64(&s, size);
    put_varint64(&s, entries);
  };

  SECTION("value log with no entries") { new_vlog(3, 100, 0); }
  SECTION("value log with nothing after its header") { new_vlog(3, 64, 1); }
  SECTION("value log too small for its entries") { new_vlog(3, 64 + 25, 2); }
  SECTION("value log number zero") { new_vlog(0, 100, 1); }
  SECTION("value log number beyond 2^56") { new_vlog(kMaxFileNumber, 100, 1); }
  SECTION("value log beyond 2^63 bytes") { new_vlog(3, (uint64_t{1} << 63) + 1, 1); }
  SECTION("truncated value log") {
    new_vlog(3, 100, 1);
    s.pop_back();
  }
  SECTION("deleted value log number zero") {
    put_varint32(&s, 10);
    put_varint64(&s, 0);
  }
  SECTION("references for a table the edit does not add") {
    new_table(5);
    table_refs(6, {{3, 13}});
  }
  SECTION("references given twice for one table") {
    new_table(5);
    table_refs(5, {{3, 13}});
    table_refs(5, {{4, 13}});
  }
  SECTION("no references") {
    new_table(5);
    table_refs(5, {});
  }
  SECTION("references out of order") {
    new_table(5);
    table_refs(5, {{4, 13}, {3, 13}});
  }
  SECTION("a repeated value log") {
    new_table(5);
    table_refs(5, {{3, 13}, {3, 13}});
  }
  SECTION("fewer bytes than one entry") {
    new_table(5);
    table_refs(5, {{3, 12}});
  }
  SECTION("a reference count beyond the input") {
    new_table(5);
    put_varint32(&s, 11);
    put_varint64(&s, 5);
    put_varint32(&s, 1000000);
    put_varint64(&s, 3);
  }
  VersionEdit d;
  Status st = d.decode_from(s, "MANIFEST-000002", 64);
  INFO(st.to_string());
  REQUIRE(st.is_corruption());
  REQUIRE(st.message().find("MANIFEST-000002") != std::string::npos);
  REQUIRE(st.message().find("offset 64") != std::string::npos);
  REQUIRE(d.new_files().empty());
}
