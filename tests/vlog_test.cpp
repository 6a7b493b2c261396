// skv-test-modules: util vlog memory fault
// The value log (core/src/vlog): entries written by VlogWriter come back through point reads
// (VlogReader) and a scan (VlogScanner) on the in-memory platform; a failed append or sync is
// sticky over the fault wrapper; cuts at every byte of the last entry are torn tails; a flipped
// bit anywhere in an entry, a bad header, a short or missing file and a pointer that does not
// match its entry are Corruption naming the file and the offset; and the value pointer codec
// accepts exactly the canonical encodings of valid pointers.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "format/file_header.h"
#include "format/file_names.h"
#include "platform/fault/fault_platform.h"
#include "platform/memory/memory_platform.h"
#include "skv/options.h"
#include "support/storage_helpers.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_format.h"
#include "vlog/vlog_reader.h"
#include "vlog/vlog_scanner.h"
#include "vlog/vlog_writer.h"

using namespace skv;
using namespace skv::vlog;
using namespace skv::testing;

namespace {

constexpr uint64_t kNumber = 9;
const std::string kName = vlog_file_name(kNumber);  // "000009.vlog"

struct Db {
  std::shared_ptr<MemoryPlatform> memory = std::make_shared<MemoryPlatform>();
  std::unique_ptr<Storage> storage = open_db(*memory);

  std::unique_ptr<VlogWriter> writer(uint64_t number = kNumber) {
    auto f = storage->logs().create(vlog_file_name(number));
    REQUIRE(f.ok());
    return std::make_unique<VlogWriter>(std::move(*f), number);
  }
  // Replaces file `name` with `bytes`.
  void put(const std::string& bytes, const std::string& name = kName) {
    auto f = create_log(*storage, name, bytes, false);
    REQUIRE(f->close().ok());
  }
  std::string bytes(const std::string& name = kName) {
    auto b = memory->read_file("db", name);
    REQUIRE(b.ok());
    return *b;
  }
  std::unique_ptr<VlogReader> reader(uint64_t number = kNumber) {
    auto r = VlogReader::open(storage->logs(), number);
    INFO(r.status().to_string());
    REQUIRE(r.ok());
    return std::move(*r);
  }
};

struct Scan {
  std::vector<VlogEntry> entries;
  Status status;
  bool torn = false;
  uint64_t valid_end = 0;
};

Scan scan(Db& db, const std::string& name = kName, uint64_t number = kNumber) {
  auto f = db.storage->logs().open(name);
  REQUIRE(f.ok());
  VlogScanner scanner(f->get(), number);
  Scan out;
  while (true) {
    VlogEntry e;
    Result<bool> r = scanner.next(&e);
    if (!r.ok()) {
      out.status = r.status();
      // The position does not move: the same error again.
      Result<bool> again = scanner.next(&e);
      CHECK((!again.ok() && again.status().message() == r.status().message()));
      break;
    }
    if (!*r) {
      Result<bool> again = scanner.next(&e);
      CHECK((again.ok() && !*again));
      break;
    }
    out.entries.push_back(std::move(e));
  }
  out.torn = scanner.torn_tail();
  out.valid_end = scanner.valid_end();
  return out;
}

Scan scan_bytes(Db& db, const std::string& bytes) {
  db.put(bytes);
  return scan(db);
}

std::string random_bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  // Never ends in a zero byte, so an entry's end is never mistaken for unwritten sectors.
  if (n > 0 && s.back() == 0) s.back() = 'z';
  return s;
}

struct Written {
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::vector<ValuePointer> pointers;
};

// Writes one entry per (key size, value size) pair to kName.
Written write_entries(Db& db, const std::vector<std::pair<size_t, size_t>>& sizes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Written w;
  auto writer = db.writer();
  for (auto [k, v] : sizes) {
    w.keys.push_back(random_bytes(rng, k));
    w.values.push_back(random_bytes(rng, v));
    auto p = writer->add(w.keys.back(), w.values.back());
    INFO(p.status().to_string());
    REQUIRE(p.ok());
    w.pointers.push_back(*p);
  }
  REQUIRE(writer->sync().ok());
  return w;
}

// A LogFile whose size() stays what it was when it was wrapped, as a POSIX handle's does while
// another handle appends.
class FrozenSizeFile final : public LogFile {
 public:
  explicit FrozenSizeFile(std::unique_ptr<LogFile> f) : f_(std::move(f)), size_(f_->size()) {}
  const std::string& name() const override { return f_->name(); }
  Status append(std::string_view d) override { return f_->append(d); }
  Status sync() override { return f_->sync(); }
  uint64_t size() const override { return size_; }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    return f_->read_at(offset, n, scratch, result);
  }
  Status truncate(uint64_t n) override { return f_->truncate(n); }
  Status close() override { return f_->close(); }

 private:
  std::unique_ptr<LogFile> f_;
  const uint64_t size_;
};

bool names_file_and_offset(const Status& s, uint64_t offset) {
  return s.message().find(kName) != std::string::npos &&
         s.message().find("offset " + std::to_string(offset)) != std::string::npos;
}

}  // namespace

TEST_CASE("entries round-trip through point reads and a scan", "[vlog]") {
  const uint64_t seed = 20261204;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::vector<std::pair<size_t, size_t>> sizes;
  for (size_t v : {0, 1, 2, 3, 100, 499, 500, 511, 512, 513, 4096, 65536}) sizes.push_back({1, v});
  for (int i = 0; i < 200; ++i) sizes.push_back({1 + rng() % 40, rng() % 3000});
  sizes.push_back({kMaxKeySize, 0});
  sizes.push_back({kMaxKeySize, 777});
  sizes.push_back({16, (256 << 10) - kEntryHeaderSize - 16});  // exactly one read window
  sizes.push_back({16, (256 << 10) + 1});                      // larger than a read window
  sizes.push_back({kMaxKeySize, 3 << 20});
  sizes.push_back({5, 0});
  Db db;
  Written w = write_entries(db, sizes, seed);
  const std::string bytes = db.bytes();

  // Back to back after the header; each pointer's size is its entry's.
  uint64_t expected = kFileHeaderSize;
  for (size_t i = 0; i < sizes.size(); ++i) {
    CHECK(w.pointers[i].file_number == kNumber);
    CHECK(w.pointers[i].offset == expected);
    CHECK(w.pointers[i].size == entry_size(w.keys[i].size(), w.values[i].size()));
    expected += w.pointers[i].size;
  }
  CHECK(bytes.size() == expected);
  // The header is ours.
  auto h = decode_file_header(bytes, FileKind::ValueLog, kName);
  REQUIRE(h.ok());
  CHECK(h->file_number == kNumber);

  auto reader = db.reader();
  for (size_t i = 0; i < sizes.size(); ++i) {
    INFO("entry " << i);
    std::string value = "stale";
    REQUIRE(reader->get(w.pointers[i], w.keys[i], &value).ok());
    CHECK(value == w.values[i]);
    // Through the pointer's encoding, and without a kept reader.
    std::string encoded;
    encode_value_pointer(w.pointers[i], &encoded);
    auto decoded = decode_value_pointer(encoded);
    REQUIRE(decoded.ok());
    CHECK(*decoded == w.pointers[i]);
    std::string again;
    REQUIRE(read_value(db.storage->logs(), *decoded, w.keys[i], &again).ok());
    CHECK(again == w.values[i]);
  }

  Scan s = scan(db);
  REQUIRE(s.status.ok());
  CHECK_FALSE(s.torn);
  CHECK(s.valid_end == bytes.size());
  REQUIRE(s.entries.size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    CHECK(s.entries[i].pointer == w.pointers[i]);
    CHECK(s.entries[i].key == w.keys[i]);
    CHECK(s.entries[i].value == w.values[i]);
  }
}

TEST_CASE("the entry encoding is the documented one", "[vlog]") {
  std::string e;
  encode_entry("k", "v", &e);
  REQUIRE(e.size() == 14);
  CHECK(decode_fixed32(e.data() + 4) == 1);
  CHECK(decode_fixed32(e.data() + 8) == 1);
  CHECK(e.substr(12) == "kv");
  // The checksum covers key_len ‖ value_len ‖ key ‖ value, masked.
  CHECK(crc32c::unmask(decode_fixed32(e.data())) == crc32c::value(e.data() + 4, 10));
  CHECK(decode_fixed32(e.data()) == entry_crc(1, 1, "kv"));
}

TEST_CASE("the example of docs/vlog.md, byte for byte", "[vlog]") {
  Db db;
  auto w = db.writer(12);
  auto apple = w->add("apple", "red");
  auto fig = w->add("fig", "");
  REQUIRE(apple.ok());
  REQUIRE(fig.ok());
  CHECK(*apple == ValuePointer{12, 64, 20});
  CHECK(*fig == ValuePointer{12, 84, 15});
  auto hex = [](std::string_view b) {
    std::string out;
    char buf[4];
    for (unsigned char c : b) {
      std::snprintf(buf, sizeof(buf), "%02x", c);
      out += buf;
    }
    return out;
  };
  const std::string bytes = db.bytes(vlog_file_name(12));
  REQUIRE(bytes.size() == 99);
  CHECK(hex(bytes.substr(0, 16)) == "534b5631020004000c00000000000000");
  CHECK(bytes.substr(16, 44) == std::string(44, '\0'));
  CHECK(hex(bytes.substr(60)) ==
        "24297fa7"  // header crc
        "25a081e5"
        "05000000"
        "03000000"
        "6170706c65"
        "726564"  // apple = red
        "0b9f235c"
        "03000000"
        "00000000"
        "666967");  // fig = ""
  std::string p1, p2;
  encode_value_pointer(*apple, &p1);
  encode_value_pointer(*fig, &p2);
  CHECK(hex(p1) == "0c4014");
  CHECK(hex(p2) == "0c540f");
}

TEST_CASE("a value of the largest size round-trips, one byte more is refused", "[vlog]") {
  Db db;
  auto w = db.writer();
  std::string big(kMaxValueSize, 'x');
  big.back() = 'y';
  const std::string key(kMaxKeySize, 'k');
  auto p = w->add(key, big);
  REQUIRE(p.ok());
  CHECK(p->size == kMaxEntrySize - kSealOverhead);  // the largest plaintext entry
  big.push_back('z');
  auto refused = w->add("k", big);
  CHECK(refused.status().code() == Code::InvalidArgument);
  big.pop_back();
  std::string value;
  REQUIRE(db.reader()->get(*p, key, &value).ok());
  CHECK(value == big);
  Scan s = scan(db);
  REQUIRE(s.status.ok());
  REQUIRE(s.entries.size() == 1);
  CHECK(s.entries[0].value == big);
}

TEST_CASE("the writer refuses bad entries, writes nothing and stays usable", "[vlog]") {
  Db db;
  auto w = db.writer();
  CHECK(w->size() == 0);  // the header waits for the first entry
  CHECK(w->add("", "v").status().code() == Code::InvalidArgument);
  CHECK(w->add(std::string(kMaxKeySize + 1, 'k'), "v").status().code() == Code::InvalidArgument);
  CHECK(w->add("k", std::string(kMaxValueSize + 1, 'v')).status().code() == Code::InvalidArgument);
  CHECK(db.bytes().empty());
  CHECK(w->status().ok());
  auto p = w->add("k", "v");
  REQUIRE(p.ok());
  CHECK(p->offset == kFileHeaderSize);
  CHECK(w->size() == kFileHeaderSize + 14);
  CHECK(w->file_number() == kNumber);
  CHECK(w->name() == kName);
}

TEST_CASE("a writer on a non-empty file appends after it without a second header", "[vlog]") {
  Db db;
  Written first = write_entries(db, {{3, 10}, {4, 20}}, 1);
  const uint64_t end = db.bytes().size();
  auto f = db.storage->logs().open(kName);
  REQUIRE(f.ok());
  VlogWriter w(std::move(*f), kNumber);
  auto p = w.add("again", "value");
  REQUIRE(p.ok());
  CHECK(p->offset == end);
  Scan s = scan(db);
  REQUIRE(s.status.ok());
  REQUIRE(s.entries.size() == 3);
  CHECK(s.entries[2].key == "again");
  CHECK(s.entries[2].value == "value");
}

TEST_CASE("a failed append or sync is sticky", "[vlog]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  auto storage = open_db(*fault);
  auto f = storage->logs().create(kName);
  REQUIRE(f.ok());
  VlogWriter w(std::move(*f), kNumber);

  SECTION("append") {
    REQUIRE(w.add("a", "1").ok());
    const uint64_t writes = fault->call_count(FaultOp::Write);
    FaultPolicy policy;
    policy.rules.push_back(FaultRule::nth_call(FaultOp::Write, 1));
    fault->set_fault_policy(policy);
    auto failed = w.add("b", "2");
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.status().is_io_error());
    CHECK(failed.status().message().find(kName) != std::string::npos);
    fault->clear_faults();
    // Every later call returns the same error and reaches no file.
    auto later = w.add("c", "3");
    REQUIRE_FALSE(later.ok());
    CHECK(later.status().message() == failed.status().message());
    Status sync = w.sync();
    CHECK(sync.message() == failed.status().message());
    CHECK(w.status().message() == failed.status().message());
    CHECK(fault->call_count(FaultOp::Write) == writes + 1);
    CHECK(fault->call_count(FaultOp::Sync) == 0);
  }
  SECTION("sync") {
    REQUIRE(w.add("a", "1").ok());
    FaultPolicy policy;
    policy.rules.push_back(FaultRule::nth_call(FaultOp::Sync, 1));
    fault->set_fault_policy(policy);
    Status failed = w.sync();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.message().find(kName) != std::string::npos);
    fault->clear_faults();
    const uint64_t writes = fault->call_count(FaultOp::Write);
    auto later = w.add("b", "2");
    REQUIRE_FALSE(later.ok());
    CHECK(later.status().message() == failed.message());
    CHECK(w.sync().message() == failed.message());
    CHECK(fault->call_count(FaultOp::Write) == writes);
    CHECK(fault->call_count(FaultOp::Sync) == 1);
  }
  // Whatever failed, the first entry is in the file and reads back.
  auto bytes = memory->read_file("db", kName);
  REQUIRE(bytes.ok());
  CHECK(bytes->size() == kFileHeaderSize + 14);
}

TEST_CASE("a failed read is the platform's error and can be retried at the same place", "[vlog]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  auto storage = open_db(*fault);
  std::vector<std::string> values;
  std::vector<ValuePointer> pointers;
  {
    auto f = storage->logs().create(kName);
    REQUIRE(f.ok());
    VlogWriter w(std::move(*f), kNumber);
    std::mt19937_64 rng(21);
    for (int i = 0; i < 6; ++i) {  // several read windows
      values.push_back(random_bytes(rng, 100000));
      auto p = w.add("key" + std::to_string(i), values.back());
      REQUIRE(p.ok());
      pointers.push_back(*p);
    }
  }
  auto f = storage->logs().open(kName);
  REQUIRE(f.ok());
  // Point reads.
  auto reader = VlogReader::open(storage->logs(), kNumber);
  REQUIRE(reader.ok());
  FaultPolicy policy;
  policy.rules.push_back(FaultRule::nth_call(FaultOp::Read, 1));
  fault->set_fault_policy(policy);
  std::string value;
  Status s = (*reader)->get(pointers[2], "key2", &value);
  CHECK(s.is_io_error());
  CHECK(s.message().find(kName) != std::string::npos);
  REQUIRE((*reader)->get(pointers[2], "key2", &value).ok());
  CHECK(value == values[2]);
  // The scan: the first read of every second call fails; a failure loses nothing and the call
  // after it reads the same entry.
  VlogScanner scanner(f->get(), kNumber);
  std::vector<VlogEntry> got;
  int failures = 0;
  for (int calls = 0; calls < 100; ++calls) {
    if (calls % 2 == 0) {
      policy.rules.assign(1, FaultRule::nth_call(FaultOp::Read, 1));
      fault->set_fault_policy(policy);
    } else {
      fault->clear_faults();
    }
    VlogEntry e;
    Result<bool> r = scanner.next(&e);
    if (!r.ok()) {
      CHECK(r.status().is_io_error());
      ++failures;
      continue;
    }
    if (!*r) break;
    got.push_back(std::move(e));
  }
  fault->clear_faults();
  CHECK(failures > 0);
  CHECK_FALSE(scanner.torn_tail());
  REQUIRE(got.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    CHECK(got[i].pointer == pointers[i]);
    CHECK(got[i].key == "key" + std::to_string(i));
    CHECK(got[i].value == values[i]);
  }
}

TEST_CASE("the header goes out with the first entry, an empty file is a torn tail at 0", "[vlog]") {
  Db db;
  auto w = db.writer();
  CHECK(db.bytes().empty());
  Scan s = scan(db);
  CHECK(s.status.ok());
  CHECK(s.torn);
  CHECK(s.valid_end == 0);
  CHECK(s.entries.empty());
  // A pointer never names a file with no header: opening one for reads is corruption.
  auto r = VlogReader::open(db.storage->logs(), kNumber);
  CHECK(r.status().is_corruption());
  CHECK(r.status().message().find(kName) != std::string::npos);
  // A file of just the header is a clean, empty log.
  std::string header;
  FileHeader h;
  h.kind = FileKind::ValueLog;
  h.file_number = kNumber;
  encode_file_header(h, &header);
  Scan only = scan_bytes(db, header);
  CHECK(only.status.ok());
  CHECK_FALSE(only.torn);
  CHECK(only.valid_end == kFileHeaderSize);
}

TEST_CASE("a cut at every byte of the last entry, or of the header, is a torn tail", "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 300}, {12, 1500}}, 7);
  const std::string full = db.bytes();
  const uint64_t last = w.pointers.back().offset;
  for (uint64_t cut = 0; cut < full.size(); ++cut) {
    if (cut > kFileHeaderSize && cut < last) continue;  // the middle is covered below
    INFO("cut at " << cut);
    Scan s = scan_bytes(db, full.substr(0, cut));
    REQUIRE(s.status.ok());
    if (cut < kFileHeaderSize) {
      CHECK(s.torn);
      CHECK(s.valid_end == 0);
      CHECK(s.entries.empty());
    } else if (cut == kFileHeaderSize || cut == last) {
      CHECK_FALSE(s.torn);  // a clean end between entries
      CHECK(s.valid_end == cut);
    } else {
      CHECK(s.torn);
      CHECK(s.valid_end == last);
      CHECK(s.entries.size() == 2);
    }
  }
  // A cut between any two entries is a clean end after the ones before it.
  for (size_t i = 0; i < w.pointers.size(); ++i) {
    Scan s = scan_bytes(db, full.substr(0, w.pointers[i].offset));
    REQUIRE(s.status.ok());
    CHECK_FALSE(s.torn);
    CHECK(s.entries.size() == i);
  }
}

TEST_CASE("cutting a torn tail to valid_end and appending gives a clean log", "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 300}}, 15);
  const std::string full = db.bytes();
  for (uint64_t cut :
       {uint64_t{0}, uint64_t{30}, w.pointers[1].offset + 7, uint64_t{full.size() - 1}}) {
    INFO("cut at " << cut);
    db.put(full.substr(0, cut));
    Scan torn = scan(db);
    REQUIRE(torn.status.ok());
    REQUIRE(torn.torn);
    auto f = db.storage->logs().open(kName);
    REQUIRE(f.ok());
    REQUIRE((*f)->truncate(torn.valid_end).ok());
    VlogWriter writer(std::move(*f), kNumber);
    auto p = writer.add("new", "entry");
    REQUIRE(p.ok());
    CHECK(p->offset == std::max<uint64_t>(torn.valid_end, kFileHeaderSize));
    Scan clean = scan(db);
    REQUIRE(clean.status.ok());
    CHECK_FALSE(clean.torn);
    REQUIRE(clean.entries.size() == torn.entries.size() + 1);
    CHECK(clean.entries.back().key == "new");
    CHECK(clean.entries.back().value == "entry");
    std::string value;
    REQUIRE(db.reader()->get(*p, "new", &value).ok());
    CHECK(value == "entry");
  }
}

TEST_CASE("an end of unwritten sectors is a torn tail", "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 3000}}, 8);
  const std::string full = db.bytes();
  const uint64_t last = w.pointers.back().offset;
  // Zero from every sector boundary inside the last entry to the end (its length is kept, and
  // more zero bytes may follow).
  for (uint64_t b = (last / kSectorSize + 1) * kSectorSize; b < full.size(); b += kSectorSize) {
    for (size_t extra : {size_t{0}, size_t{100}}) {
      INFO("zero from " << b << ", " << extra << " more zero bytes");
      std::string bytes = full.substr(0, b) + std::string(full.size() - b + extra, '\0');
      Scan s = scan_bytes(db, bytes);
      REQUIRE(s.status.ok());
      CHECK(s.torn);
      CHECK(s.valid_end == last);
      CHECK(s.entries.size() == 1);
    }
  }
  // Zero sectors that are not the end: a non-zero byte after them makes them damage.
  for (uint64_t b = (last / kSectorSize + 1) * kSectorSize; b < full.size(); b += kSectorSize) {
    INFO("zero from " << b << ", then a byte");
    std::string bytes = full.substr(0, b) + std::string(full.size() - b, '\0') + "j";
    Scan s = scan_bytes(db, bytes);
    CHECK(s.status.is_corruption());
    CHECK(names_file_and_offset(s.status, last));
  }
  // Zero bytes after the last whole entry (a file grown but never written).
  for (size_t n : {1, 11, 12, 13, 600}) {
    INFO(n << " zero bytes after the last entry");
    Scan s = scan_bytes(db, full + std::string(n, '\0'));
    REQUIRE(s.status.ok());
    CHECK(s.torn);
    CHECK(s.valid_end == full.size());
    CHECK(s.entries.size() == 2);
  }
  // The same zero run inside a middle entry, with a whole entry after it, is corruption.
  Written w2 = write_entries(db, {{5, 40}, {9, 3000}, {4, 60}}, 9);
  std::string bytes = db.bytes();
  const uint64_t mid = w2.pointers[1].offset;
  const uint64_t b = (mid / kSectorSize + 2) * kSectorSize;
  for (uint64_t i = b; i < mid + w2.pointers[1].size; ++i) bytes[i] = 0;
  Scan s = scan_bytes(db, bytes);
  CHECK(s.status.is_corruption());
  CHECK(names_file_and_offset(s.status, mid));
}

TEST_CASE("a flipped bit in any byte of an entry is corruption naming the file and offset",
          "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 300}, {7, 200}}, 11);
  const std::string full = db.bytes();
  for (size_t target : {size_t{1}, size_t{2}}) {  // a middle entry and the last one
    const ValuePointer p = w.pointers[target];
    for (uint64_t i = p.offset; i < p.offset + p.size; ++i) {
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x10}, uint8_t{0x80}}) {
        INFO("entry " << target << ", byte " << i - p.offset << ", mask " << int{mask});
        std::string bytes = full;
        bytes[i] = static_cast<char>(bytes[i] ^ mask);
        Scan s = scan_bytes(db, bytes);
        CHECK(s.status.is_corruption());
        CHECK(names_file_and_offset(s.status, p.offset));
        CHECK(s.entries.size() == target);
        std::string value;
        Status got = db.reader()->get(p, w.keys[target], &value);
        CHECK(got.is_corruption());
        CHECK(names_file_and_offset(got, p.offset));
        // The entries before it still read.
        REQUIRE(db.reader()->get(w.pointers[0], w.keys[0], &value).ok());
        CHECK(value == w.values[0]);
      }
    }
  }
}

TEST_CASE("a damaged length or a bad file header is corruption", "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 300}}, 12);
  const std::string full = db.bytes();
  auto with_fixed32 = [&](uint64_t at, uint32_t v) {
    std::string b = full;
    encode_fixed32(b.data() + at, v);
    return b;
  };
  const uint64_t last = w.pointers[1].offset;
  struct Case {
    const char* what;
    std::string bytes;
    const char* reason;
  };
  const Case cases[] = {
      {"zero key length", with_fixed32(last + 4, 0), "zero key length"},
      {"key too long", with_fixed32(last + 4, kMaxKeySize + 1), "exceeds the maximum"},
      {"value too long", with_fixed32(last + 8, kMaxValueSize + 1), "exceeds the maximum"},
      {"value length past the end", with_fixed32(last + 8, 301), "damaged"},
      {"key length past the end", with_fixed32(last + 4, 10), "damaged"},
      {"first entry past the end", with_fixed32(w.pointers[0].offset + 8, 1000),
       "intact entries follow"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Scan s = scan_bytes(db, c.bytes);
    CHECK(s.status.is_corruption());
    CHECK(s.status.message().find(c.reason) != std::string::npos);
  }

  // Every byte of the header.
  for (size_t i = 0; i < kFileHeaderSize; ++i) {
    INFO("header byte " << i);
    std::string bytes = full;
    bytes[i] = static_cast<char>(bytes[i] ^ 0x04);
    Scan s = scan_bytes(db, bytes);
    CHECK(s.status.is_corruption());
    CHECK(s.status.message().find(kName + ": bad file header at offset 0") != std::string::npos);
    CHECK(VlogReader::open(db.storage->logs(), kNumber).status().is_corruption());
  }
  // Another kind, another number, an encrypted file.
  auto with_header = [&](FileHeader h) {
    std::string b;
    encode_file_header(h, &b);
    return b + full.substr(kFileHeaderSize);
  };
  FileHeader wal;
  wal.kind = FileKind::Wal;
  wal.file_number = kNumber;
  FileHeader other;
  other.kind = FileKind::ValueLog;
  other.file_number = kNumber + 1;
  FileHeader encrypted;
  encrypted.kind = FileKind::ValueLog;
  encrypted.file_number = kNumber;
  encrypted.cipher = 1;
  CHECK(scan_bytes(db, with_header(wal)).status.is_corruption());
  CHECK(VlogReader::open(db.storage->logs(), kNumber).status().is_corruption());
  Scan s = scan_bytes(db, with_header(other));
  CHECK(s.status.is_corruption());
  CHECK(s.status.message().find("file number 10") != std::string::npos);
  CHECK(VlogReader::open(db.storage->logs(), kNumber).status().is_corruption());
  // An encrypted file read with no CipherSource (log_encryption_test.cpp has the rest).
  CHECK(scan_bytes(db, with_header(encrypted)).status.encryption_error() ==
        EncryptionError::NotConfigured);
  CHECK(VlogReader::open(db.storage->logs(), kNumber).status().encryption_error() ==
        EncryptionError::NotConfigured);
}

TEST_CASE("short and missing files are corruption naming the file and offset", "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 300}}, 13);
  const ValuePointer p = w.pointers[1];
  auto reader = db.reader();  // opened before the file shrinks
  std::string value;
  for (uint64_t size : {p.offset + p.size - 1, p.offset + 1, p.offset, uint64_t{kFileHeaderSize}}) {
    INFO("file cut to " << size);
    REQUIRE(db.memory->truncate_file("db", kName, size).ok());
    Status s = reader->get(p, w.keys[1], &value);
    CHECK(s.is_corruption());
    CHECK(names_file_and_offset(s, p.offset));
    CHECK(s.message().find("past the end of the file") != std::string::npos);
    s = read_value(db.storage->logs(), p, w.keys[1], &value);
    CHECK(s.is_corruption());
    CHECK(names_file_and_offset(s, p.offset));
  }
  REQUIRE(db.memory->truncate_file("db", kName, 10).ok());
  auto shorter = VlogReader::open(db.storage->logs(), kNumber);
  CHECK(shorter.status().is_corruption());
  CHECK(shorter.status().message().find(kName) != std::string::npos);

  REQUIRE(db.storage->logs().remove(kName).ok());
  auto missing = VlogReader::open(db.storage->logs(), kNumber);
  CHECK(missing.status().is_corruption());
  CHECK(missing.status().message().find(kName + ": value log file is missing") !=
        std::string::npos);
  Status s = read_value(db.storage->logs(), p, w.keys[1], &value);
  CHECK(s.is_corruption());
  CHECK(names_file_and_offset(s, p.offset));
}

TEST_CASE("a point read checks the pointer and the key against the entry", "[vlog]") {
  Db db;
  Written w = write_entries(db, {{5, 40}, {9, 300}, {9, 0}}, 14);
  auto reader = db.reader();
  const ValuePointer p = w.pointers[1];
  std::string value;
  auto expect_corruption = [&](ValuePointer q, const std::string& key, const char* reason) {
    INFO(reason);
    Status s = reader->get(q, key, &value);
    CHECK(s.is_corruption());
    CHECK(names_file_and_offset(s, q.offset));
    CHECK(s.message().find(reason) != std::string::npos);
  };
  std::string other_key = w.keys[1];
  other_key[0] = static_cast<char>(other_key[0] ^ 1);
  expect_corruption(p, other_key, "different key");
  // The third entry has a key of the same length; its pointer with the second's key.
  expect_corruption(w.pointers[2], w.keys[1], "different key");
  expect_corruption({kNumber, p.offset, p.size + 1}, w.keys[1], "do not match");
  expect_corruption({kNumber, p.offset, p.size - 1}, w.keys[1], "do not match");
  expect_corruption({kNumber, p.offset + 1, p.size}, w.keys[1], "");
  expect_corruption({kNumber, p.offset, 0}, w.keys[1], "zero size");
  expect_corruption({kNumber, 10, p.size}, w.keys[1], "inside the file header");
  expect_corruption({kNumber, p.offset, kMaxEntrySize + 1}, w.keys[1], "largest entry");
  expect_corruption({kNumber, p.offset, kEntryHeaderSize + 3}, w.keys[1], "too small for a key");
  // Caller mistakes.
  CHECK(reader->get({kNumber + 1, p.offset, p.size}, w.keys[1], &value).code() ==
        Code::InvalidArgument);
  CHECK(reader->get(p, "", &value).code() == Code::InvalidArgument);
  CHECK(reader->get(p, std::string(kMaxKeySize + 1, 'k'), &value).code() == Code::InvalidArgument);
  // And the right ones still read.
  REQUIRE(reader->get(p, w.keys[1], &value).ok());
  CHECK(value == w.values[1]);
  REQUIRE(reader->get(w.pointers[2], w.keys[2], &value).ok());
  CHECK(value.empty());
}

TEST_CASE("a reader whose handle lags the writer still reads the newer entries", "[vlog]") {
  Db db;
  auto w = db.writer();
  auto a = w->add("a", "first");
  REQUIRE(a.ok());
  auto f = db.storage->logs().open(kName);
  REQUIRE(f.ok());
  auto opened = VlogReader::open(std::make_unique<FrozenSizeFile>(std::move(*f)), kNumber);
  REQUIRE(opened.ok());
  const VlogReader& reader = **opened;
  auto b = w->add("b", std::string(5000, 'b'));
  auto c = w->add("c", "third");
  REQUIRE(b.ok());
  REQUIRE(c.ok());
  std::string value;
  REQUIRE(reader.get(*b, "b", &value).ok());
  CHECK(value == std::string(5000, 'b'));
  REQUIRE(reader.get(*c, "c", &value).ok());
  CHECK(value == "third");
  REQUIRE(reader.get(*a, "a", &value).ok());
  CHECK(value == "first");
  // Past the real end, or not agreeing with the entry there: corruption, as before.
  const uint64_t end = w->size();
  Status s = reader.get({kNumber, end, 20}, "c", &value);
  CHECK(s.is_corruption());
  CHECK(s.message().find("past the end of the file") != std::string::npos);
  s = reader.get({kNumber, end - 5, 20}, "c", &value);
  CHECK(s.is_corruption());
  CHECK(names_file_and_offset(s, end - 5));
  s = reader.get({kNumber, b->offset, kMaxEntrySize}, "b", &value);
  CHECK(s.is_corruption());
  CHECK(s.message().find("do not match") != std::string::npos);
  s = reader.get({kNumber, c->offset, c->size + 1}, "c", &value);
  CHECK(s.is_corruption());
  CHECK(s.message().find("do not match") != std::string::npos);
}

TEST_CASE("value pointers encode canonically and decode strictly", "[vlog]") {
  auto encode = [](ValuePointer p) {
    std::string s;
    encode_value_pointer(p, &s);
    return s;
  };
  // The documented example: file 7, offset 64, size 13.
  CHECK(encode({7, 64, 13}) == std::string("\x07\x40\x0d", 3));
  const ValuePointer edges[] = {
      {0, kFileHeaderSize, kMinEntrySize},
      {kMaxFileNumber - 1, kFileHeaderSize, kMaxEntrySize},
      {1, kMaxValueLogOffset - kMaxEntrySize, kMaxEntrySize},
      {127, 127, 127},
      {128, 128, 128},
      {1, kMaxValueLogOffset - kMinEntrySize, kMinEntrySize},
  };
  for (const ValuePointer& p : edges) {
    INFO(p.file_number << " " << p.offset << " " << p.size);
    REQUIRE(check_value_pointer(p).ok());
    const std::string e = encode(p);
    CHECK(e.size() <= kMaxValuePointerSize);
    auto d = decode_value_pointer(e);
    REQUIRE(d.ok());
    CHECK(*d == p);
    // Every proper prefix is truncated; any byte after it is refused.
    for (size_t n = 0; n < e.size(); ++n) {
      CHECK(decode_value_pointer(e.substr(0, n)).status().is_corruption());
    }
    CHECK(decode_value_pointer(e + std::string(1, '\0')).status().is_corruption());
    CHECK(decode_value_pointer(e + "x").status().is_corruption());
  }
  CHECK(encode({kMaxFileNumber - 1, kMaxValueLogOffset - kMaxEntrySize, kMaxEntrySize}).size() ==
        kMaxValuePointerSize);

  // Seeded round trips.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 10000; ++i) {
    ValuePointer p;
    p.file_number = rng() >> (8 + rng() % 56);
    p.size = kMinEntrySize + rng() % (kMaxEntrySize - kMinEntrySize + 1);
    p.offset = kFileHeaderSize + (rng() >> (1 + rng() % 63)) % (kMaxValueLogOffset - p.size);
    REQUIRE(check_value_pointer(p).ok());
    auto d = decode_value_pointer(encode(p));
    REQUIRE(d.ok());
    CHECK(*d == p);
  }

  auto varint = [](uint64_t v) {
    std::string s;
    put_varint64(&s, v);
    return s;
  };
  const std::string f = varint(7), o = varint(64), z = varint(13);
  struct Bad {
    const char* what;
    std::string bytes;
  };
  const Bad bad[] = {
      {"empty", ""},
      {"over-long file number", std::string("\x87\x00", 2) + o + z},
      {"over-long offset", f + std::string("\xc0\x00", 2) + z},
      {"over-long size", f + o + std::string("\x8d\x00", 2)},
      {"file number overflows 64 bits", std::string(10, '\xff') + "\x01" + o + z},
      {"file number of 10 bytes above 2^64", std::string(9, '\xff') + "\x02" + o + z},
      {"offset overflows", f + std::string(10, '\xff') + "\x01" + z},
      {"file number at the bound", varint(kMaxFileNumber) + o + z},
      {"offset inside the header", f + varint(63) + z},
      {"zero size", f + o + varint(0)},
      {"size below the smallest entry", f + o + varint(kMinEntrySize - 1)},
      {"size above the largest entry", f + o + varint(kMaxEntrySize + 1)},
      {"size beyond 32 bits", f + o + varint(uint64_t{1} << 32 | 13)},
      {"offset + size past the bound", f + varint(kMaxValueLogOffset - 12) + z},
      {"offset at the bound", f + varint(kMaxValueLogOffset) + z},
      {"trailing byte", f + o + z + "\x01"},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    auto d = decode_value_pointer(b.bytes);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().is_corruption());
    CHECK(d.status().message().find("bad value pointer") != std::string::npos);
  }
  CHECK(decode_value_pointer(f + o + z).ok());  // the same fields, well formed
}
