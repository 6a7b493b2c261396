// skv-test-modules: migrate util engine native
// skv-test-wasm: off
//
// The SurrealKV 0.20/0.21 reader against directories written by tests/support/surrealkv_fixture.h
// from the format description (no real SurrealKV files could be produced here): the records read
// must equal the model the writer was fed, in both modes; damaged, truncated or unknown bytes
// must give a named error, never different data; the source must be left byte for byte as it was.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "native/migrate/source.h"
#include "native/migrate/surrealkv/table_reader.h"
#include "skv/migrate.h"
#include "skv/skv.h"
#include "support/dir_snapshot.h"
#include "support/surrealkv_fixture.h"
#include "support/temp_dir.h"

namespace {

using skv::Status;
using skv::migration::open_surrealkv;
using skv::migration::RecordSink;
using skv::migration::SourceReadOptions;
using skv::migration::SourceRecord;
using namespace skv::testing::skvfix;  // NOLINT: the fixture's vocabulary

struct Rec {
  std::string key;
  std::string value;
  uint64_t ts = 0;
  bool tombstone = false;
  bool operator==(const Rec& o) const {
    return key == o.key && value == o.value && ts == o.ts && tombstone == o.tombstone;
  }
};

class CollectSink : public RecordSink {
 public:
  Status put(const SourceRecord& r) override {
    if (!r.family.empty()) return Status::invalid_argument("unexpected family");
    recs.push_back(Rec{std::string(r.key), std::string(r.value), r.timestamp, r.tombstone});
    return Status::OK();
  }
  std::vector<Rec> recs;
};

// What the reader must return for `ops`: keys ascending, versions newest first; a hard delete
// and a replace hide everything older; without versions the newest live value, time 0.
std::vector<Rec> model(const std::vector<Op>& ops, bool versions) {
  std::map<std::string, std::vector<const Op*>> by_key;
  for (const Op& op : ops) by_key[op.key].push_back(&op);
  std::vector<Rec> out;
  for (auto& [key, vs] : by_key) {
    std::sort(vs.begin(), vs.end(), [](const Op* a, const Op* b) { return a->seq > b->seq; });
    for (const Op* op : vs) {
      bool tomb = op->kind == kDelete || op->kind == kSoftDelete;
      if (!versions) {
        if (!tomb) out.push_back(Rec{key, op->value, 0, false});
        break;
      }
      out.push_back(Rec{key, tomb ? "" : op->value, op->ts, tomb});
      if (op->kind == kDelete || op->kind == kReplace) break;
    }
  }
  return out;
}

struct Fixture {
  std::vector<Op> ops;          // everything the directory holds (the model)
  uint64_t last_table_seq = 0;  // the tables hold seqs 1..last_table_seq, the WAL the rest
  std::vector<Op> wal4_tail;    // the ops of the last batch of wal segment 4
  std::string wal3_path;
  std::vector<size_t> wal3_ends;  // record ends in segment 3
  std::string wal4_path;
  std::vector<size_t> wal4_ends;  // record ends in segment 4 (the compression record's too)
};

// A database with three levels (L0: three tables, L1: two, L2: one), two value logs, a stale
// WAL segment below log_number, an uncompressed segment with a record spanning three 32 KiB
// blocks, and an LZ4 segment.
Fixture build(const std::string& dir, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Fixture fx;
  std::vector<std::string> keys;
  for (int i = 0; i < 120; ++i) {
    std::string k = "key/" + std::to_string(1000 + i);
    if (i % 7 == 0) k += std::string("\xff\x00\x01", 3);
    if (i % 11 == 0) k += std::string(30, 'p');
    keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());
  uint64_t seq = 0;
  auto make = [&](const std::string& key) {
    Op op;
    op.key = key;
    op.seq = ++seq;
    op.ts = 1700000000000000000ull + op.seq * 1000 + rng() % 500;
    int r = static_cast<int>(rng() % 10);
    op.kind = r < 6 ? kSet : r == 6 ? kSoftDelete : r == 7 ? kDelete : kReplace;
    if (op.kind == kSet || op.kind == kReplace) {
      int sz = static_cast<int>(rng() % 10);
      size_t n = sz < 6 ? rng() % 40 : sz < 9 ? 40 + rng() % 160 : 1100 + rng() % 1400;
      for (size_t j = 0; j < n; ++j) op.value.push_back(static_cast<char>('a' + rng() % 26));
    }
    return op;
  };
  auto batch_of = [&](size_t n, size_t lo, size_t hi) {
    std::vector<Op> v;
    for (size_t i = 0; i < n; ++i) v.push_back(make(keys[lo + rng() % (hi - lo)]));
    return v;
  };
  VLogBuilder vlog1(1), vlog2(2);
  TableOptions plain;
  plain.vlog_threshold = 1024;
  TableOptions snappy = plain;
  snappy.snappy = true;
  snappy.restart_interval = 3;
  snappy.block_size = 300;
  auto table = [&](uint64_t id, std::vector<Op> ops, const TableOptions& o, VLogBuilder* vlog) {
    fx.ops.insert(fx.ops.end(), ops.begin(), ops.end());
    TableWriter::write(dir, id, std::move(ops), o, vlog);
  };
  table(1, batch_of(150, 0, 120), plain, &vlog1);  // L2
  table(2, batch_of(90, 0, 60), snappy, &vlog1);   // L1, keys below key 60
  table(3, batch_of(90, 60, 120), plain, &vlog1);  // L1, keys from key 60
  table(4, batch_of(80, 0, 120), snappy, &vlog2);  // L0, oldest
  table(5, batch_of(80, 0, 120), plain, &vlog2);   // L0
  table(6, batch_of(80, 0, 120), snappy, &vlog2);  // L0, newest
  uint64_t last_sequence = seq;
  fx.last_table_seq = seq;
  vlog1.write(dir);
  vlog2.write(dir);
  // A table the manifest no longer names: never opened.
  write_file(dir + "/sstables/" + numbered(7, "sst"), "obsolete table");
  write_file(dir + "/manifest/00000000000000000000.manifest",
             manifest(8, 3, last_sequence, {{6, 5, 4}, {2, 3}, {1}}, {last_sequence - 5}));
  write_file(dir + "/LOCK", "4242\n");
  // WAL: segment 2 is below log_number (already flushed): never read.
  write_file(dir + "/wal/" + numbered(2, "wal"), "stale segment, not a WAL");
  WalBuilder w3;
  for (int b = 0; b < 5; ++b) {
    std::vector<Op> ops = batch_of(1 + rng() % 6, 0, 120);
    fx.ops.insert(fx.ops.end(), ops.begin(), ops.end());
    w3.add_record(encode_batch(ops));
  }
  {
    // One batch of about 70 KiB: a first, a middle and a last fragment.
    std::vector<Op> big;
    for (int i = 0; i < 35; ++i) {
      Op op = make(keys[rng() % 120]);
      op.kind = kSet;
      op.value.assign(2000, static_cast<char>('A' + i % 26));
      big.push_back(op);
    }
    fx.ops.insert(fx.ops.end(), big.begin(), big.end());
    w3.add_record(encode_batch(big));
    std::vector<Op> after = batch_of(3, 0, 120);
    fx.ops.insert(fx.ops.end(), after.begin(), after.end());
    w3.add_record(encode_batch(after));
  }
  fx.wal3_path = dir + "/wal/" + numbered(3, "wal");
  fx.wal3_ends = w3.record_ends;
  write_file(fx.wal3_path, w3.bytes());
  WalBuilder w4(1);
  for (int b = 0; b < 6; ++b) {
    std::vector<Op> ops = batch_of(1 + rng() % 8, 0, 120);
    if (b == 2) ops[0].value.assign(3000, 'z');  // compresses well
    fx.ops.insert(fx.ops.end(), ops.begin(), ops.end());
    w4.add_record(encode_batch(ops));
    if (b == 5) fx.wal4_tail = ops;
  }
  fx.wal4_path = dir + "/wal/" + numbered(4, "wal");
  fx.wal4_ends = w4.record_ends;
  write_file(fx.wal4_path, w4.bytes());
  return fx;
}

struct ReadResult {
  Status status;
  std::vector<Rec> recs;
};

ReadResult read_dir(const std::string& dir, bool versions) {
  ReadResult r;
  auto reader = open_surrealkv(dir);
  if (!reader.ok()) {
    r.status = reader.status();
    return r;
  }
  CollectSink sink;
  SourceReadOptions o;
  o.versions = versions;
  r.status = reader.value()->read(o, sink);
  r.recs = std::move(sink.recs);
  return r;
}

size_t differences(const std::vector<Rec>& a, const std::vector<Rec>& b) {
  size_t n = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] == b[i] ? 0 : 1;
  return n;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Replaces the contents of an existing file in place: never truncated to zero first, which on
// ext4 makes every close flush to disk (seconds over a few thousand rewrites).
void overwrite(const std::string& path, const std::string& bytes) {
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(f.good());
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::filesystem::resize_file(path, bytes.size());
}

bool every_byte() {
  const char* e = std::getenv("SKV_SURREALKV_EVERY_BYTE");
  return e != nullptr && std::string(e) == "1";
}

// The lengths a WAL segment may be cut to without a trace: after a record, or inside the zero
// padding that follows one at the end of a block.
std::vector<size_t> wal_boundaries(const std::vector<size_t>& ends) {
  std::vector<size_t> out;
  for (size_t e : ends) {
    out.push_back(e);
    size_t left = 32768 - e % 32768;
    if (left < 7) {
      for (size_t i = 1; i <= left; ++i) out.push_back(e + i);
    }
  }
  return out;
}

std::vector<std::string> data_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("surrealkv reader returns exactly the model with and without versions") {
  skv::testing::TempDir tmp("skvr");
  Fixture fx = build(tmp.path, 1);
  std::string before = skv::testing::dir_snapshot(tmp.path);

  auto reader = open_surrealkv(tmp.path);
  REQUIRE(reader.ok());
  CHECK(reader.value()->kind() == skv::MigrationSource::SurrealKv);
  CHECK(reader.value()->has_versions());
  CHECK(reader.value()->families() == std::vector<std::string>{""});
  CHECK(reader.value()->total_bytes() > 0);

  for (bool versions : {true, false}) {
    CAPTURE(versions);
    CollectSink sink;
    SourceReadOptions o;
    o.versions = versions;
    uint64_t last_done = 0;
    int calls = 0;
    o.progress = [&](uint64_t done, uint64_t total) {
      CHECK(done >= last_done);
      CHECK(total == reader.value()->total_bytes());
      last_done = done;
      ++calls;
    };
    REQUIRE(reader.value()->read(o, sink).ok());
    std::vector<Rec> want = model(fx.ops, versions);
    CHECK(want.size() > 50);
    CHECK(differences(sink.recs, want) == 0);
    CHECK(calls >= 1);
  }
  // The model holds every kind of version the reader must tell apart.
  std::vector<Rec> all = model(fx.ops, true);
  CHECK(std::count_if(all.begin(), all.end(), [](const Rec& r) { return r.tombstone; }) > 5);
  CHECK(std::count_if(all.begin(), all.end(), [](const Rec& r) { return r.value.size() > 1024; }) >
        5);
  // The fixture has the shapes the reader must handle: tables of several data blocks and index
  // partitions, and a WAL record in three fragments (it ends past the second 32 KiB block).
  for (uint64_t id = 1; id <= 6; ++id) {
    auto t = skv::migration::surrealkv::TableReader::open(
        tmp.path + "/sstables/" + numbered(id, "sst"), id);
    REQUIRE(t.ok());
    CHECK(t.value()->meta().num_data_blocks >= 4);
    CHECK(t.value()->meta().index_partitions >= 2);
  }
  CHECK(std::any_of(fx.wal3_ends.begin() + 1, fx.wal3_ends.end(), [&](size_t e) {
    size_t prev = *(std::find(fx.wal3_ends.begin(), fx.wal3_ends.end(), e) - 1);
    return prev < 32768 && e > 2 * 32768;
  }));
  CHECK(skv::testing::dir_snapshot(tmp.path) == before);
}

TEST_CASE("surrealkv reader refuses a family it does not have") {
  skv::testing::TempDir tmp("skvr");
  build(tmp.path, 2);
  auto reader = open_surrealkv(tmp.path);
  REQUIRE(reader.ok());
  CollectSink sink;
  SourceReadOptions o;
  o.families = {"default"};
  CHECK(reader.value()->read(o, sink).code() == skv::Code::InvalidArgument);
}

TEST_CASE("surrealkv reader: every flipped byte gives a named error or exactly the model") {
  skv::testing::TempDir tmp("skvr");
  Fixture fx = build(tmp.path, 3);
  std::vector<Rec> want = model(fx.ops, true);
  std::map<std::string, int> caught, same;
  for (const std::string& path : data_files(tmp.path)) {
    if (path.ends_with("/LOCK")) continue;
    const std::string original = slurp(path);
    // The first and last 256 bytes (headers, footers, tails), and about 1000 positions spread
    // over the rest; SKV_SURREALKV_EVERY_BYTE=1 flips every byte (minutes on a busy machine).
    size_t stride = every_byte() ? 1 : std::max<size_t>(1, original.size() / 1000);
    for (size_t i = 0; i < original.size(); ++i) {
      bool edge = i < 256 || i + 256 >= original.size();
      if (!edge && i % stride != 0) continue;
      std::string damaged = original;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << (i % 8)));
      overwrite(path, damaged);
      ReadResult r = read_dir(tmp.path, true);
      if (r.status.ok()) {
        INFO(path << " byte " << i << " flipped: read succeeded");
        REQUIRE(differences(r.recs, want) == 0);
        ++same[path];
      } else {
        INFO(path << " byte " << i << ": " << r.status.to_string());
        REQUIRE((r.status.is_corruption() || r.status.code() == skv::Code::NotSupported));
        // Named: the message names a file of the database.
        REQUIRE(r.status.message().find(tmp.path) != std::string::npos);
        ++caught[path];
      }
    }
    overwrite(path, original);
  }
  // Flips in checked data (tables, WAL records, the manifest) are caught, not just tolerated.
  for (const std::string& path : data_files(tmp.path)) {
    if (path.ends_with(".sst") && !path.ends_with(numbered(7, "sst"))) CHECK(caught[path] > 0);
    if (path.ends_with(numbered(3, "wal")) || path.ends_with(numbered(4, "wal"))) {
      CHECK(same[path] == 0);
    }
  }
  CHECK(caught[tmp.path + "/manifest/00000000000000000000.manifest"] > 0);
}

TEST_CASE("surrealkv reader: truncated files give named errors") {
  skv::testing::TempDir tmp("skvr");
  Fixture fx = build(tmp.path, 4);
  std::vector<Rec> want = model(fx.ops, true);
  for (const std::string& path : data_files(tmp.path)) {
    if (path.ends_with("/LOCK") || path.ends_with(numbered(7, "sst")) ||
        path.ends_with(numbered(2, "wal"))) {
      continue;  // files the reader never opens
    }
    const std::string original = slurp(path);
    bool wal = path.ends_with(".wal");
    bool vlog = path.ends_with(".vlog");
    std::vector<size_t> ends = wal_boundaries(path == fx.wal3_path   ? fx.wal3_ends
                                              : path == fx.wal4_path ? fx.wal4_ends
                                                                     : std::vector<size_t>{});
    size_t stride = every_byte() ? 1 : std::max<size_t>(1, original.size() / 250);
    for (size_t len = 0; len < original.size(); len += (len < 64 ? 1 : stride)) {
      if (std::count(ends.begin(), ends.end(), len) > 0) continue;  // see the next test
      std::filesystem::resize_file(path, len);
      ReadResult r = read_dir(tmp.path, true);
      INFO(path << " cut to " << len << " bytes: " << r.status.to_string());
      if (vlog && r.status.ok()) {
        // Only values hidden behind a delete or a replace are never read.
        REQUIRE(differences(r.recs, want) == 0);
      } else if (wal && len == 0) {
        // An empty segment holds no record (a fresh segment looks like this).
        REQUIRE(r.status.ok());
      } else {
        REQUIRE(!r.status.ok());
        REQUIRE(r.status.message().find(tmp.path) != std::string::npos);
      }
      overwrite(path, original);
    }
  }
}

TEST_CASE("surrealkv reader: a WAL cut at a record boundary reads as the batches before it") {
  skv::testing::TempDir tmp("skvr");
  Fixture fx = build(tmp.path, 5);
  // Drop segment 4's last batch: the reader cannot tell (nothing records how many batches a
  // segment holds) and must return exactly the model without those entries.
  std::string w4 = tmp.path + "/wal/" + numbered(4, "wal");
  std::string bytes = slurp(w4);
  std::vector<Op> kept;
  for (const Op& op : fx.ops) {
    bool in_tail = false;
    for (const Op& t : fx.wal4_tail) in_tail = in_tail || t.seq == op.seq;
    if (!in_tail) kept.push_back(op);
  }
  REQUIRE(kept.size() + fx.wal4_tail.size() == fx.ops.size());
  REQUIRE(fx.wal4_ends.size() >= 2);
  REQUIRE(fx.wal4_ends.back() == bytes.size());
  std::filesystem::resize_file(w4, fx.wal4_ends[fx.wal4_ends.size() - 2]);
  ReadResult r = read_dir(tmp.path, true);
  REQUIRE(r.status.ok());
  CHECK(differences(r.recs, model(kept, true)) == 0);
}

TEST_CASE("surrealkv reader names unknown field values") {
  skv::testing::TempDir tmp("skvr");
  build(tmp.path, 6);
  auto expect = [&](skv::Code code, const std::string& file, const std::string& text) {
    ReadResult r = read_dir(tmp.path, true);
    INFO(r.status.to_string());
    CHECK(r.status.code() == code);
    CHECK(r.status.message().find(file) != std::string::npos);
    CHECK(r.status.message().find("offset") != std::string::npos);
    CHECK(r.status.message().find(text) != std::string::npos);
  };
  auto patch = [&](const std::string& path, size_t at, char byte) {
    std::string b = slurp(path);
    std::string original = b;
    b[at] = byte;
    write_file(path, b);
    return original;
  };
  std::string sst = tmp.path + "/sstables/" + numbered(5, "sst");
  size_t size = std::filesystem::file_size(sst);
  std::string orig = patch(sst, size - 50, 2);
  expect(skv::Code::NotSupported, sst, "unknown table format 2");
  write_file(sst, orig);
  patch(sst, size - 49, 3);
  expect(skv::Code::NotSupported, sst, "unknown checksum type 3");
  write_file(sst, orig);

  std::string vlog = tmp.path + "/vlog/" + numbered(1, "vlog");
  orig = patch(vlog, 5, 2);
  expect(skv::Code::NotSupported, vlog, "value log of unknown version 2");
  write_file(vlog, orig);

  std::string wal = tmp.path + "/wal/" + numbered(3, "wal");
  std::string wal_orig = slurp(wal);
  {
    WalBuilder w(7);  // a compression byte 0.21 does not know
    write_file(wal, w.bytes());
    expect(skv::Code::NotSupported, wal, "unknown WAL compression 7");
  }
  {
    WalBuilder w;
    Op op{"k", 900000, kSet, 1, "v"};
    w.add_record(encode_batch({op}, 2));
    write_file(wal, w.bytes());
    expect(skv::Code::NotSupported, wal, "batch of unknown version 2");
  }
  {
    WalBuilder w;
    Op op{"k", 900000, 3, 1, "v"};  // Merge
    w.add_record(encode_batch({op}));
    write_file(wal, w.bytes());
    expect(skv::Code::NotSupported, wal, "Merge");
    Op bad{"k", 900001, 42, 1, "v"};
    WalBuilder w2;
    w2.add_record(encode_batch({bad}));
    write_file(wal, w2.bytes());
    expect(skv::Code::Corruption, wal, "unknown entry kind 42");
  }
  write_file(wal, wal_orig);

  std::string mf = tmp.path + "/manifest/00000000000000000000.manifest";
  orig = patch(mf, 1, 2);
  expect(skv::Code::NotSupported, mf, "unknown manifest version 2");
  write_file(mf, orig);
  CHECK(read_dir(tmp.path, true).status.ok());
}

TEST_CASE("surrealkv reader: WAL entries repeating a table's entry are kept once if they agree") {
  skv::testing::TempDir tmp("skvr");
  Fixture fx = build(tmp.path, 7);
  // The newest table entry of some key, repeated in a WAL segment.
  const Op* dup = nullptr;
  for (const Op& op : fx.ops) {
    // Small values are stored inline in the table, as the WAL stores them.
    if (op.seq <= fx.last_table_seq && op.kind == kSet && op.value.size() < 100) dup = &op;
  }
  REQUIRE(dup != nullptr);
  std::string wal = tmp.path + "/wal/" + numbered(5, "wal");
  WalBuilder w;
  w.add_record(encode_batch({*dup}));
  write_file(wal, w.bytes());
  ReadResult r = read_dir(tmp.path, true);
  REQUIRE(r.status.ok());
  CHECK(differences(r.recs, model(fx.ops, true)) == 0);

  Op changed = *dup;
  changed.value += "!";
  WalBuilder w2;
  w2.add_record(encode_batch({changed}));
  write_file(wal, w2.bytes());
  r = read_dir(tmp.path, true);
  CHECK(r.status.is_corruption());
  CHECK(r.status.message().find(wal) != std::string::npos);
}

TEST_CASE("surrealkv reader refuses a held LOCK and a missing directory and repair leftovers") {
  skv::testing::TempDir tmp("skvr");
  build(tmp.path, 8);
  {
    int fd = ::open((tmp.path + "/LOCK").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    auto r = open_surrealkv(tmp.path);
    CHECK(r.status().code() == skv::Code::Busy);
    ::close(fd);
  }
  CHECK(open_surrealkv(tmp.path).ok());
  CHECK(open_surrealkv(tmp.path + "/nope").status().is_not_found());
  write_file(tmp.path + "/wal/" + numbered(3, "wal") + ".repair", "x");
  auto r = open_surrealkv(tmp.path);
  CHECK(r.status().code() == skv::Code::NotSupported);
  CHECK(r.status().message().find(".wal.repair") != std::string::npos);
}

TEST_CASE("surrealkv: skv::migrate() builds a versioned database answering as the source") {
  skv::testing::TempDir tmp("skvr-migrate");
  const std::string src = tmp.path + "/src";
  std::filesystem::create_directories(src);
  Fixture fx = build(src, 3);
  const std::string before = skv::testing::dir_snapshot(src);

  auto summary = skv::migrate(src, tmp.path + "/db");
  REQUIRE(summary.ok());
  CHECK(summary->source == skv::MigrationSource::SurrealKv);
  CHECK(summary->versioned);
  std::vector<Rec> versions = model(fx.ops, true);
  CHECK(summary->versions == versions.size());

  // skv orders a key's versions by time (newest first; of equal times the later commit, which
  // is the later sequence number of the source, first).
  std::vector<std::pair<size_t, Rec>> order;
  for (size_t i = 0; i < versions.size(); ++i) order.emplace_back(i, versions[i]);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.second.key != b.second.key) return a.second.key < b.second.key;
    return a.second.ts > b.second.ts;
  });
  std::vector<Rec> want;
  for (const auto& [i, r] : order) want.push_back(r);

  auto tree = skv::TreeBuilder().with_path(tmp.path + "/db").with_create_if_missing(false).build();
  REQUIRE(tree.ok());
  CHECK(tree->versioning().enabled);
  auto tx = tree->begin_with_mode(skv::Mode::ReadOnly);
  REQUIRE(tx.ok());
  skv::HistoryOptions all;
  all.include_tombstones = true;
  auto it = tx->history_range("", "", all);
  REQUIRE(it.ok());
  std::vector<Rec> got;
  for (it->seek_first(); it->valid(); it->next()) {
    Rec r{std::string(it->key()), "", it->timestamp(), it->is_tombstone()};
    if (!r.tombstone) r.value = std::string(it->value().value());
    got.push_back(std::move(r));
  }
  REQUIRE(it->status().ok());
  CHECK(differences(got, want) == 0);

  // A plain read answers the newest version the source has, as the source does.
  std::vector<Rec> live = model(fx.ops, false);
  auto range = tx->range("", "");
  REQUIRE(range.ok());
  std::vector<Rec> plain;
  for (range->seek_first(); range->valid(); range->next()) {
    plain.push_back(Rec{std::string(range->key()), std::string(range->value().value()), 0, false});
  }
  CHECK(differences(plain, live) == 0);
  REQUIRE(tree->close().ok());
  CHECK(skv::testing::dir_snapshot(src) == before);
}
