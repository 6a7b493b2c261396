// skv-test-modules: util wal
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "format/file_header.h"
#include "skv/platform.h"
#include "util/coding.h"
#include "util/log_appender.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

using namespace skv;

namespace {

// The bytes of one fake file, shared between the writer's LogFile and the test.
struct FakeFileState {
  std::string data;
  int appends = 0;
  int reads = 0;
  bool fail_appends = false;
  bool fail_syncs = false;
  int syncs = 0;
  bool serve_views = false;        // read_at returns views into `data` instead of filling scratch
  std::vector<uint64_t> reserves;  // every reserve() call's size
  bool fail_reserves = false;
  int truncates = 0;
};

// A LogFile over a std::string (the in-memory platform is not used here on purpose: this test
// needs to cut and damage bytes directly).
class FakeLogFile final : public LogFile {
 public:
  FakeLogFile(std::string name, std::shared_ptr<FakeFileState> state)
      : name_(std::move(name)), state_(std::move(state)) {}
  const std::string& name() const override { return name_; }
  Status append(std::string_view data) override {
    if (state_->fail_appends) {
      // A failed append that still leaves part of its bytes behind.
      state_->data.append(data.substr(0, data.size() / 2));
      return Status::io_error(name_ + ": injected append failure");
    }
    ++state_->appends;
    state_->data.append(data);
    return Status();
  }
  Status sync() override {
    if (state_->fail_syncs) return Status::io_error(name_ + ": injected sync failure");
    ++state_->syncs;
    return Status();
  }
  uint64_t size() const override { return state_->data.size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    ++state_->reads;
    if (offset >= state_->data.size()) {
      *result = {};
      return Status();
    }
    size_t len = std::min<size_t>(n, state_->data.size() - offset);
    if (state_->serve_views) {
      *result = std::string_view(state_->data).substr(offset, len);
    } else {
      std::memcpy(scratch, state_->data.data() + offset, len);
      *result = std::string_view(scratch, len);
    }
    return Status();
  }
  Status truncate(uint64_t size) override {
    ++state_->truncates;
    state_->data.resize(size);
    return Status();
  }
  Status reserve(uint64_t bytes) override {
    state_->reserves.push_back(bytes);
    if (state_->fail_reserves) return Status::quota(name_ + ": injected reserve failure");
    return Status();
  }
  Status close() override { return Status(); }

 private:
  std::string name_;
  std::shared_ptr<FakeFileState> state_;
};

constexpr const char* kName = "000007.wal";

FileHeader wal_header() {
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 7;
  return h;
}

std::unique_ptr<log::Writer> new_writer(const std::shared_ptr<FakeFileState>& st) {
  return std::make_unique<log::Writer>(std::make_unique<FakeLogFile>(kName, st), wal_header());
}

struct ReadAll {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;
  Status status;
  bool torn = false;
  bool hole = false;
  uint64_t valid_end = 0;
};

ReadAll read_all(const std::string& bytes, bool serve_views = false, FileKind kind = FileKind::Wal,
                 int* reads = nullptr) {
  auto st = std::make_shared<FakeFileState>();
  st->data = bytes;
  st->serve_views = serve_views;
  FakeLogFile file(kName, st);
  log::Reader reader(&file, kind);
  ReadAll out;
  while (true) {
    std::string rec;
    uint64_t off = 0;
    Result<bool> r = reader.read_record(&rec, &off);
    if (!r.ok()) {
      out.status = r.status();
      break;
    }
    if (!*r) break;
    out.records.push_back(rec);
    out.offsets.push_back(off);
  }
  out.torn = reader.torn_tail();
  out.hole = reader.hole();
  out.valid_end = reader.valid_end();
  if (reads != nullptr) *reads = st->reads;
  return out;
}

std::string random_payload(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// Writes `records` one add_record each; returns the file bytes and the record offsets.
std::string write_records(const std::vector<std::string>& records, std::vector<uint64_t>* offsets) {
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  for (const auto& r : records) {
    if (offsets != nullptr) offsets->push_back(std::max<uint64_t>(w->size(), kFileHeaderSize));
    REQUIRE(w->add_record(r).ok());
  }
  return st->data;
}

std::vector<std::string> small_records(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(random_payload(rng, 1 + rng() % 40));
  return v;
}

}  // namespace

TEST_CASE("records round-trip, including ones larger than the read chunk", "[wal]") {
  const uint64_t seed = 20240601;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::vector<std::string> records;
  for (int i = 0; i < 300; ++i) {
    size_t n = 1 + rng() % 2000;
    if (i % 50 == 7) n = 256 * 1024 - 8;  // exactly fills a read window with its header
    if (i % 50 == 8) n = 256 * 1024 + 1 + rng() % 300000;  // larger than a read window
    if (i == 100) n = 1 << 20;
    records.push_back(random_payload(rng, n));
  }
  std::vector<uint64_t> offsets;
  std::string bytes = write_records(records, &offsets);
  for (bool views : {false, true}) {
    ReadAll r = read_all(bytes, views);
    REQUIRE(r.status.ok());
    CHECK_FALSE(r.torn);
    CHECK(r.valid_end == bytes.size());
    REQUIRE(r.records.size() == records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      CHECK(r.records[i] == records[i]);
      CHECK(r.offsets[i] == offsets[i]);
    }
  }
}

TEST_CASE("the reader reads in large chunks, not once per record", "[wal]") {
  std::vector<std::string> records = small_records(11, 5000);
  std::string bytes = write_records(records, nullptr);
  int reads = 0;
  ReadAll r = read_all(bytes, false, FileKind::Wal, &reads);
  REQUIRE(r.status.ok());
  REQUIRE(r.records == records);
  INFO("file " << bytes.size() << " bytes, " << reads << " reads");
  CHECK(reads <= static_cast<int>(bytes.size() / (256 * 1024)) + 2);
}

TEST_CASE("add_records writes a whole group with one append", "[wal]") {
  const uint64_t seed = 99;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  std::vector<std::string> all;
  int groups = 0;
  for (int g = 0; g < 40; ++g) {
    std::vector<std::string> group;
    size_t n = 1 + rng() % 10;
    for (size_t i = 0; i < n; ++i) group.push_back(random_payload(rng, 1 + rng() % 500));
    std::vector<std::string_view> views(group.begin(), group.end());
    REQUIRE(w->add_records(views).ok());
    ++groups;
    all.insert(all.end(), group.begin(), group.end());
  }
  // The header went out with the first group.
  CHECK(st->appends == groups);
  CHECK(w->size() == st->data.size());
  CHECK(w->name() == kName);

  // An empty list writes nothing; an empty payload anywhere in a group writes nothing.
  REQUIRE(w->add_records({}).ok());
  std::vector<std::string_view> bad = {"ok", "", "also ok"};
  CHECK(w->add_records(bad).code() == Code::InvalidArgument);
  CHECK(w->add_record("").code() == Code::InvalidArgument);
  CHECK(st->appends == groups);
  REQUIRE(w->sync().ok());

  ReadAll r = read_all(st->data);
  REQUIRE(r.status.ok());
  CHECK(r.records == all);
}

TEST_CASE("room ahead: reserved in steps before appends pass it, released once", "[wal]") {
  std::mt19937_64 rng(5);
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  w->reserve_ahead(1000);
  std::vector<std::string> all;
  for (int i = 0; i < 60; ++i) {
    all.push_back(random_payload(rng, 1 + rng() % 300));
    REQUIRE(w->add_record(all.back()).ok());
    // The file always has room for what was appended: every append landed inside a reserve.
    REQUIRE_FALSE(st->reserves.empty());
    CHECK(st->reserves.back() >= st->data.size());
  }
  // One call per step passed, each asking for a step past the append that needed it.
  CHECK(st->reserves.size() >= st->data.size() / 1300);
  CHECK(st->reserves.size() < st->data.size() / 1000 + 2);
  for (size_t i = 1; i < st->reserves.size(); ++i) CHECK(st->reserves[i] > st->reserves[i - 1]);

  // Zeros after the records, as the stored file holds them after a crash: every record reads
  // back, and the zeros are a torn tail that ends where the records do.
  const std::string stored = st->data + std::string(st->reserves.back() - st->data.size(), '\0');
  ReadAll r = read_all(stored);
  REQUIRE(r.status.ok());
  CHECK(r.records == all);
  CHECK(r.torn == (stored.size() > st->data.size()));
  CHECK(r.valid_end == st->data.size());

  // release_room cuts the file at its last record and stops reserving.
  const int truncates = st->truncates;
  REQUIRE(w->release_room().ok());
  CHECK(st->truncates == truncates + 1);
  const size_t calls = st->reserves.size();
  REQUIRE(w->add_record(std::string(5000, 'x')).ok());
  CHECK(st->reserves.size() == calls);
  REQUIRE(w->release_room().ok());  // nothing reserved: no truncate
  CHECK(st->truncates == truncates + 1);
}

TEST_CASE("room ahead: a file that refuses is not asked again and appends go on", "[wal]") {
  auto st = std::make_shared<FakeFileState>();
  st->fail_reserves = true;
  auto w = new_writer(st);
  w->reserve_ahead(64);
  REQUIRE(w->add_record("one").ok());
  REQUIRE(w->add_record(std::string(200, 't')).ok());
  CHECK(st->reserves.size() == 1);
  REQUIRE(w->release_room().ok());
  CHECK(st->truncates == 0);
  ReadAll r = read_all(st->data);
  REQUIRE(r.status.ok());
  CHECK(r.records == std::vector<std::string>{"one", std::string(200, 't')});
}

TEST_CASE("a group of more than a MiB goes out in stretches of the reused buffer", "[wal]") {
  // 3 MB of 100 kB records, one record larger than a stretch in the middle, then small ones.
  std::mt19937_64 rng(7);
  std::vector<std::string> group;
  for (int i = 0; i < 15; ++i) group.push_back(random_payload(rng, 100000));
  group.push_back(random_payload(rng, LogAppender::kKeepBufferCapacity + 5));
  for (int i = 0; i < 15; ++i) group.push_back(random_payload(rng, 100000));
  for (int i = 0; i < 5; ++i) group.push_back(random_payload(rng, 1 + rng() % 100));
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  std::vector<std::string_view> views(group.begin(), group.end());
  REQUIRE(w->add_records(views).ok());
  // Stretches of up to kKeepBufferCapacity: 10 records (with the file header in front), 5 (cut
  // before the large one), the large one alone, 10, then the last 5 with the small ones.
  CHECK(st->appends == 5);
  CHECK(w->size() == st->data.size());
  REQUIRE(w->add_record("after").ok());
  group.push_back("after");
  ReadAll r = read_all(st->data);
  REQUIRE(r.status.ok());
  CHECK_FALSE(r.torn);
  CHECK(r.records == group);
}

TEST_CASE("a new file's header goes out with the first record, however large", "[wal]") {
  std::mt19937_64 rng(11);
  const std::vector<std::string> group = {random_payload(rng, LogAppender::kKeepBufferCapacity + 5),
                                          random_payload(rng, 10)};
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  std::vector<std::string_view> views(group.begin(), group.end());
  REQUIRE(w->add_records(views).ok());
  // The header and the large record in one write, the small record in the next.
  CHECK(st->appends == 2);
  ReadAll r = read_all(st->data);
  REQUIRE(r.status.ok());
  CHECK(r.records == group);
}

TEST_CASE("a writer on a non-empty file appends without a second header", "[wal]") {
  auto st = std::make_shared<FakeFileState>();
  {
    auto w = new_writer(st);
    REQUIRE(w->add_record("first").ok());
    REQUIRE(w->close().ok());
  }
  {
    auto w = new_writer(st);
    REQUIRE(w->add_record("second").ok());
  }
  ReadAll r = read_all(st->data);
  REQUIRE(r.status.ok());
  CHECK(r.records == std::vector<std::string>{"first", "second"});
}

TEST_CASE("a failed append makes the writer fail every later call", "[wal]") {
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  REQUIRE(w->add_record("good").ok());
  st->fail_appends = true;
  Status s = w->add_record("this one is torn by the failure");
  CHECK(s.is_io_error());
  st->fail_appends = false;
  CHECK(w->add_record("after").is_io_error());
  CHECK(w->add_records({"a", "b"}).is_io_error());
  CHECK(w->sync().is_io_error());
  // What reached the file reads back as the good record and a torn tail.
  ReadAll r = read_all(st->data);
  REQUIRE(r.status.ok());
  CHECK(r.records == std::vector<std::string>{"good"});
  CHECK(r.torn);
}

TEST_CASE("a failed sync makes the writer fail every later call without touching the file",
          "[wal]") {
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  REQUIRE(w->add_record("good").ok());
  st->fail_syncs = true;
  CHECK(w->sync().is_io_error());
  st->fail_syncs = false;
  const std::string before = st->data;
  // The platform may have dropped the unsynced bytes: nothing more goes to this file, and the
  // sync is never retried.
  CHECK(w->sync().is_io_error());
  CHECK(w->add_record("after").is_io_error());
  CHECK(w->add_records({"a", "b"}).is_io_error());
  CHECK(st->data == before);
  CHECK(st->syncs == 0);
}

TEST_CASE("a cut at every byte of the last record or group is a torn tail", "[wal]") {
  std::vector<std::string> records = small_records(5, 20);
  records.push_back(std::string(300, 'z'));
  std::vector<uint64_t> offsets;
  std::string bytes = write_records(records, &offsets);
  const uint64_t last = offsets.back();
  for (uint64_t cut = last; cut < bytes.size(); ++cut) {
    INFO("cut at " << cut);
    ReadAll r = read_all(bytes.substr(0, cut));
    REQUIRE(r.status.ok());
    CHECK(r.records.size() == records.size() - 1);
    CHECK(r.torn == (cut != last));
    CHECK(r.valid_end == last);
  }

  // A group written by one append, cut anywhere: exactly the complete records survive.
  auto st = std::make_shared<FakeFileState>();
  auto w = new_writer(st);
  REQUIRE(w->add_record("before the group").ok());
  const uint64_t group_start = st->data.size();
  std::vector<std::string_view> group = {"one", std::string_view(records[3]), "three!", "4"};
  REQUIRE(w->add_records(group).ok());
  for (uint64_t cut = group_start; cut <= st->data.size(); ++cut) {
    INFO("group cut at " << cut);
    ReadAll r = read_all(st->data.substr(0, cut));
    REQUIRE(r.status.ok());
    uint64_t end = group_start;
    size_t complete = 1;
    for (std::string_view g : group) {
      if (end + log::kRecordHeaderSize + g.size() > cut) break;
      end += log::kRecordHeaderSize + g.size();
      ++complete;
    }
    CHECK(r.records.size() == complete);
    CHECK(r.valid_end == end);
    CHECK(r.torn == (cut != end));
  }
}

TEST_CASE("a cut inside the file header, or an empty file, is a torn tail at 0", "[wal]") {
  std::string bytes = write_records({"x"}, nullptr);
  for (size_t cut = 0; cut < kFileHeaderSize; ++cut) {
    INFO("cut at " << cut);
    auto st = std::make_shared<FakeFileState>();
    st->data = bytes.substr(0, cut);
    FakeLogFile file(kName, st);
    log::Reader reader(&file, FileKind::Wal);
    FileHeader h;
    h.file_number = 12345;
    REQUIRE(reader.read_header(&h).ok());
    CHECK(h.file_number == 12345);  // untouched
    std::string rec;
    uint64_t off = 0;
    Result<bool> r = reader.read_record(&rec, &off);
    REQUIRE(r.ok());
    CHECK_FALSE(*r);
    CHECK(reader.torn_tail());
    CHECK(reader.valid_end() == 0);
  }
  // A header-only file is a clean, empty log.
  std::string header_only = bytes.substr(0, kFileHeaderSize);
  ReadAll r = read_all(header_only);
  REQUIRE(r.status.ok());
  CHECK(r.records.empty());
  CHECK_FALSE(r.torn);
  CHECK(r.valid_end == kFileHeaderSize);
  // A short file that cannot be the start of a header is corrupt.
  ReadAll junk = read_all("garbage");
  CHECK(junk.status.is_corruption());
  CHECK(junk.status.message().find(kName) != std::string::npos);
}

TEST_CASE("a tail of zero bytes from a sector boundary is torn", "[wal]") {
  std::vector<std::string> records = small_records(17, 10);
  records.push_back(std::string(2000, 'q'));  // spans several 512-byte sectors
  std::vector<uint64_t> offsets;
  std::string bytes = write_records(records, &offsets);
  // Zeros appended after the last good record (preallocation, a size update without data).
  for (size_t zeros : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{100}, size_t{300000}}) {
    INFO("zeros " << zeros);
    ReadAll r = read_all(bytes + std::string(zeros, '\0'));
    REQUIRE(r.status.ok());
    CHECK(r.records == records);
    CHECK(r.torn);
    CHECK(r.valid_end == bytes.size());
  }
  // The last record's payload zeroed from any byte on. Storage writes whole sectors, so a zero
  // run that covers a sector boundary is data that never reached the disk (torn); a shorter zero
  // run inside the last sector of the record is damage to written data (corruption).
  const uint64_t last = offsets.back();
  const uint64_t payload = last + log::kRecordHeaderSize;
  for (uint64_t from = payload; from < bytes.size(); ++from) {
    INFO("zeroed from " << from);
    std::string damaged = bytes;
    std::fill(damaged.begin() + static_cast<std::ptrdiff_t>(from), damaged.end(), '\0');
    ReadAll r = read_all(damaged);
    const uint64_t aligned = (from + log::kSectorSize - 1) / log::kSectorSize * log::kSectorSize;
    if (aligned < bytes.size()) {
      REQUIRE(r.status.ok());
      CHECK(r.records.size() == records.size() - 1);
      CHECK(r.torn);
      CHECK(r.valid_end == last);
    } else {
      CHECK(r.status.is_corruption());
      CHECK(r.status.message().find("offset " + std::to_string(last)) != std::string::npos);
    }
  }
  // A file of zeros only.
  ReadAll z = read_all(std::string(5000, '\0'));
  REQUIRE(z.status.ok());
  CHECK(z.torn);
  CHECK(z.valid_end == 0);
}

TEST_CASE("a hole of zero sectors with data after it ends the file at the record it hits",
          "[wal]") {
  // Pages of a write that was never synced reach storage in any order: an unwritten one reads as
  // the zeros reserved before, and written ones follow it.
  std::mt19937_64 rng(31);
  std::vector<std::string> records;
  for (int i = 0; i < 40; ++i) records.push_back(random_payload(rng, 1 + rng() % 700));
  std::vector<uint64_t> offsets;
  const std::string bytes = write_records(records, &offsets);
  const uint64_t sector = log::kSectorSize;
  for (uint64_t h = sector; h + sector < bytes.size(); h += sector) {
    for (uint64_t len : {sector, 3 * sector}) {
      if (h + len >= bytes.size()) continue;  // data must follow the hole
      INFO("zero sectors at " << h << ", " << len << " bytes");
      std::string holed = bytes;
      std::fill_n(holed.begin() + static_cast<std::ptrdiff_t>(h), len, '\0');
      ReadAll r = read_all(holed);
      // The record the hole starts in (or just after, when the hole covers the rest of one
      // record and a next header) is the first not read.
      size_t hit = 0;
      while (hit + 1 < offsets.size() && offsets[hit + 1] <= h) ++hit;
      REQUIRE(r.status.ok());
      CHECK(r.torn);
      CHECK(r.hole);
      REQUIRE(r.records.size() == hit);
      CHECK(std::equal(r.records.begin(), r.records.end(), records.begin()));
      CHECK(r.valid_end == offsets[hit]);
    }
  }
  // A new segment whose first sector (its header) never reached the disk.
  std::string headless = bytes;
  std::fill_n(headless.begin(), sector, '\0');
  ReadAll h = read_all(headless);
  REQUIRE(h.status.ok());
  CHECK(h.torn);
  CHECK(h.hole);
  CHECK(h.records.empty());
  CHECK(h.valid_end == 0);
  // Zeros that do not fill an aligned sector are damage, as is a zero length in a written
  // sector.
  const uint64_t mid = offsets[20];
  std::string short_run = bytes;
  const uint64_t aligned = (mid / sector + 1) * sector;
  std::fill(short_run.begin() + static_cast<std::ptrdiff_t>(aligned + 1),
            short_run.begin() + static_cast<std::ptrdiff_t>(aligned + sector), '\0');
  ReadAll r = read_all(short_run);
  CHECK(r.status.is_corruption());
  CHECK_FALSE(r.hole);
  size_t in_sector = 21;  // a record whose header lies inside one sector, not at its start
  while (offsets[in_sector] % sector == 0 || offsets[in_sector] % sector > sector - 8) ++in_sector;
  REQUIRE(in_sector + 1 < offsets.size());
  std::string zero_length = bytes;
  for (size_t i = 0; i < 8; ++i) zero_length[offsets[in_sector] + i] = '\0';
  ReadAll z = read_all(zero_length);
  CHECK(z.status.is_corruption());
  CHECK(z.status.message().find("zero record length") != std::string::npos);
}

TEST_CASE("a damaged byte in a middle record is corruption naming file and offset", "[wal]") {
  std::vector<std::string> records = small_records(23, 12);
  records[6] = std::string(50, 'm');
  std::vector<uint64_t> offsets;
  std::string bytes = write_records(records, &offsets);
  const uint64_t begin = offsets[6];
  const uint64_t end = offsets[7];
  for (uint64_t pos = begin; pos < end; ++pos) {
    for (int mask : {0x01, 0x10, 0x80, 0xff}) {
      INFO("byte " << pos << " xor " << mask);
      std::string damaged = bytes;
      damaged[pos] = static_cast<char>(damaged[pos] ^ mask);
      ReadAll r = read_all(damaged);
      CHECK(r.status.is_corruption());
      CHECK(r.status.message().find(kName) != std::string::npos);
      CHECK(r.status.message().find("offset " + std::to_string(begin)) != std::string::npos);
      REQUIRE(r.records.size() == 6);
      CHECK(std::equal(r.records.begin(), r.records.end(), records.begin()));
    }
  }
  // A length pointing past the end of the file while intact records follow.
  std::string damaged = bytes;
  encode_fixed32(damaged.data() + begin + 4, static_cast<uint32_t>(bytes.size()));
  ReadAll r = read_all(damaged);
  CHECK(r.status.is_corruption());
  CHECK(r.records.size() == 6);
  // Trailing bytes that cannot be a cut write: an impossible length, or a whole record with a
  // bad checksum followed by more non-zero bytes. (Garbage whose length merely runs past the end
  // of the file is indistinguishable from a cut write, and is a torn tail.)
  ReadAll tail = read_all(bytes + std::string(20, '\xff'));
  CHECK(tail.status.is_corruption());
  CHECK(tail.records == records);
  CHECK(tail.status.message().find("offset " + std::to_string(bytes.size())) != std::string::npos);
  std::string garbage = bytes;
  put_fixed32(&garbage, 0x01010101);
  put_fixed32(&garbage, 4);
  garbage += "abcd12345678";
  ReadAll bad_crc = read_all(garbage);
  CHECK(bad_crc.status.is_corruption());
  CHECK(bad_crc.records == records);
  ReadAll past_end = read_all(bytes + std::string(20, '\x01'));
  REQUIRE(past_end.status.ok());
  CHECK(past_end.torn);
  CHECK(past_end.records == records);
}

TEST_CASE("a damaged payload byte in the last record is corruption, not a torn tail", "[wal]") {
  // A crash cuts a write short or leaves whole sectors unwritten; it does not flip a bit inside
  // a complete record. Treating that as a torn tail would silently drop a synced commit.
  std::vector<std::string> records = small_records(29, 8);
  std::vector<uint64_t> offsets;
  std::string bytes = write_records(records, &offsets);
  for (uint64_t pos = offsets.back() + log::kRecordHeaderSize; pos < bytes.size(); ++pos) {
    INFO("byte " << pos);
    std::string damaged = bytes;
    damaged[pos] = static_cast<char>(damaged[pos] ^ 0x20);
    ReadAll r = read_all(damaged);
    CHECK(r.status.is_corruption());
    CHECK(r.status.message().find(kName) != std::string::npos);
    CHECK(r.status.message().find("offset " + std::to_string(offsets.back())) != std::string::npos);
    CHECK(r.records.size() == records.size() - 1);
  }
}

TEST_CASE("a bad or foreign header is corruption naming the file", "[wal]") {
  std::string bytes = write_records(small_records(31, 3), nullptr);
  for (size_t i = 0; i < kFileHeaderSize; ++i) {
    INFO("header byte " << i);
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x04);
    ReadAll r = read_all(damaged);
    CHECK(r.status.is_corruption());
    CHECK(r.status.message().find(kName) != std::string::npos);
    CHECK(r.records.empty());
  }
  ReadAll wrong_kind = read_all(bytes, false, FileKind::Manifest);
  CHECK(wrong_kind.status.is_corruption());

  // read_header reports the header, and a second call returns the same one.
  auto st = std::make_shared<FakeFileState>();
  st->data = bytes;
  FakeLogFile file(kName, st);
  log::Reader reader(&file, FileKind::Wal);
  FileHeader h;
  REQUIRE(reader.read_header(&h).ok());
  CHECK(h.file_number == 7);
  CHECK(h.kind == FileKind::Wal);
  FileHeader again;
  REQUIRE(reader.read_header(&again).ok());
  CHECK(again.file_number == 7);
  CHECK(reader.valid_end() == kFileHeaderSize);
}
