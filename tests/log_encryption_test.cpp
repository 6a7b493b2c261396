// skv-test-modules: util crypto wal vlog memory
// Sealed log records (WAL segments, manifests) and sealed value log entries, on real bytes in the
// in-memory platform: they round-trip (several records per append, small and large), no
// plaintext reaches the file, plaintext files keep their exact bytes, and every kind of tampering
// is refused by name and never returned as data: bit flips anywhere (caught by the checksum, or,
// with the checksum fixed up, by authentication), records swapped, a record copied from another
// file of the same database, from another database under the same key, or from an older file of
// the same number. A cut tail is still a torn tail, as in a plaintext file; a missing, wrong or
// unknown key is refused by name before any record is read.

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "crypto/cipher_source.h"
#include "crypto/file_cipher.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "platform/memory/memory_platform.h"
#include "skv/encryption.h"
#include "support/storage_helpers.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "vlog/vlog_format.h"
#include "vlog/vlog_reader.h"
#include "vlog/vlog_scanner.h"
#include "vlog/vlog_writer.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

using namespace skv;
using namespace skv::testing;
using crypto::CipherSource;
using crypto::DatabaseId;
using crypto::FileCipher;
using crypto::Keyring;

namespace {

DatabaseId database(uint8_t fill) {
  DatabaseId id;
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(fill + i);
  return id;
}

std::shared_ptr<SoftwareKeyManager> manager(uint8_t fill, uint32_t id = 1) {
  auto m = SoftwareKeyManager::from_bytes(std::string(32, static_cast<char>(fill)), id);
  REQUIRE(m.ok());
  return *m;
}

// The keyring of a database `db` whose key is 32 bytes of `fill`, under key id `id`.
std::unique_ptr<Keyring> keyring(uint8_t fill = 1, uint32_t id = 1, DatabaseId db = database(1)) {
  auto ring = std::make_unique<Keyring>(manager(fill, id), CipherSuite::XChaCha20Poly1305, db);
  REQUIRE(ring->prepare({}).ok());
  return ring;
}

struct Mem {
  std::shared_ptr<MemoryPlatform> memory = std::make_shared<MemoryPlatform>();
  std::unique_ptr<Storage> storage = open_db(*memory);

  std::unique_ptr<LogFile> create(const std::string& name) {
    auto f = storage->logs().create(name);
    REQUIRE(f.ok());
    return std::move(*f);
  }
  void put(const std::string& name, const std::string& bytes) {
    auto f = create_log(*storage, name, bytes, false);
    REQUIRE(f->close().ok());
  }
  std::string bytes(const std::string& name) {
    auto b = memory->read_file("db", name);
    REQUIRE(b.ok());
    return *b;
  }
};

// A recognisable plaintext of `n` bytes (never ending in a zero byte).
std::string plaintext(size_t n, int tag) {
  std::string s;
  while (s.size() < n) s += "PLAINTEXT-" + std::to_string(tag) + "-secret;";
  s.resize(n);
  return s;
}

// Whether any 12-byte run of any of `texts` appears in `bytes`. The texts repeat a short pattern,
// so each distinct run is searched for once (searching for every run of megabytes of text was
// quadratic: minutes under ASan and in wasm).
bool leaks(const std::string& bytes, const std::vector<std::string>& texts) {
  std::unordered_set<std::string_view> runs;
  for (const std::string& t : texts) {
    for (size_t i = 0; i + 12 <= t.size(); i += 6) runs.insert(std::string_view(t).substr(i, 12));
  }
  for (std::string_view run : runs) {
    if (bytes.find(run) != std::string::npos) return true;
  }
  return false;
}

// ---- log files ----------------------------------------------------------------------------------

struct LogRead {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;
  Status status;
  bool torn = false;
  uint64_t valid_end = 0;
};

// Writes `groups` (each one add_records call, so one append) to a new log file, sealed when
// `ring` is given.
void write_log(Mem& m, CipherSource* ring, const std::string& name, FileKind kind, uint64_t number,
               const std::vector<std::vector<std::string>>& groups) {
  std::shared_ptr<const FileCipher> cipher;
  if (ring != nullptr) {
    auto c = ring->for_new_file(kind, number, name);
    REQUIRE(c.ok());
    cipher = *c;
  }
  FileHeader h;
  h.kind = kind;
  h.file_number = number;
  log::Writer w(m.create(name), h, cipher);
  for (const auto& g : groups) {
    std::vector<std::string_view> views(g.begin(), g.end());
    REQUIRE(w.add_records(views).ok());
  }
  REQUIRE(w.sync().ok());
  REQUIRE(w.close().ok());
}

LogRead read_log(Mem& m, const std::string& name, FileKind kind, CipherSource* ring) {
  auto f = m.storage->logs().open(name);
  REQUIRE(f.ok());
  log::Reader reader(f->get(), kind, ring);
  LogRead out;
  while (true) {
    std::string record = "sentinel";
    uint64_t offset = 0;
    Result<bool> more = reader.read_record(&record, &offset);
    if (!more.ok()) {
      out.status = more.status();
      CHECK((record.empty() || record == "sentinel"));  // nothing that failed is handed out
      Result<bool> again = reader.read_record(&record, &offset);
      CHECK((!again.ok() && again.status().message() == more.status().message()));
      break;
    }
    if (!*more) break;
    out.records.push_back(record);
    out.offsets.push_back(offset);
  }
  out.torn = reader.torn_tail();
  out.valid_end = reader.valid_end();
  return out;
}

// Rewrites the checksum of the record at `offset` so that it matches the bytes stored there.
void fix_record_crc(std::string* bytes, uint64_t offset) {
  const uint32_t length = decode_fixed32(bytes->data() + offset + 4);
  const uint32_t crc = crc32c::value(bytes->data() + offset + 4, 4 + size_t{length});
  encode_fixed32(bytes->data() + offset, crc32c::mask(crc));
}

// The records the sweeps use: small and large, in appends of one and of several records.
std::vector<std::vector<std::string>> small_groups() {
  return {{plaintext(1, 0)},
          {plaintext(5, 1), plaintext(40, 2), plaintext(200, 3)},
          {plaintext(700, 4)}};
}

std::vector<std::string> flatten(const std::vector<std::vector<std::string>>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

bool fails_authentication_at(const Status& s, uint64_t offset) {
  return s.code() == Code::Corruption &&
         s.message().find("fails authentication") != std::string::npos &&
         s.message().find("offset " + std::to_string(offset)) != std::string::npos;
}

// The records read are the first ones written, unchanged.
void check_prefix(const LogRead& r, const std::vector<std::string>& written, size_t at_most) {
  CHECK(r.records.size() <= at_most);
  for (size_t i = 0; i < r.records.size() && i < written.size(); ++i) {
    CHECK(r.records[i] == written[i]);
  }
}

// ---- value logs ---------------------------------------------------------------------------------

struct Entry {
  std::string key;
  std::string value;
};

std::vector<Entry> small_entries() {
  return {{"key-000", ""},
          {"key-001", plaintext(3, 11)},
          {"key-002", plaintext(50, 12)},
          {"key-003", plaintext(700, 13)}};
}

std::vector<vlog::ValuePointer> write_vlog(Mem& m, CipherSource* ring, uint64_t number,
                                           const std::vector<Entry>& entries) {
  std::shared_ptr<const FileCipher> cipher;
  if (ring != nullptr) {
    auto c = ring->for_new_file(FileKind::ValueLog, number, vlog_file_name(number));
    REQUIRE(c.ok());
    cipher = *c;
  }
  vlog::VlogWriter w(m.create(vlog_file_name(number)), number, cipher);
  std::vector<vlog::ValuePointer> out;
  for (const Entry& e : entries) {
    auto p = w.add(e.key, e.value);
    REQUIRE(p.ok());
    out.push_back(*p);
  }
  REQUIRE(w.sync().ok());
  REQUIRE(w.close().ok());
  return out;
}

struct VlogScan {
  std::vector<vlog::VlogEntry> entries;
  Status status;
  bool torn = false;
  uint64_t valid_end = 0;
};

VlogScan scan_vlog(Mem& m, uint64_t number, CipherSource* ring) {
  auto f = m.storage->logs().open(vlog_file_name(number));
  REQUIRE(f.ok());
  vlog::VlogScanner scanner(f->get(), number, ring);
  VlogScan out;
  while (true) {
    vlog::VlogEntry e;
    e.value = "sentinel";
    Result<bool> more = scanner.next(&e);
    if (!more.ok()) {
      out.status = more.status();
      CHECK((e.value.empty() || e.value == "sentinel"));
      CHECK(e.key.empty());
      Result<bool> again = scanner.next(&e);
      CHECK((!again.ok() && again.status().message() == more.status().message()));
      break;
    }
    if (!*more) break;
    out.entries.push_back(e);
  }
  out.torn = scanner.torn_tail();
  out.valid_end = scanner.valid_end();
  return out;
}

// Reads the entry `p` points at through a fresh reader; the value read, or the error.
Result<std::string> get_value(Mem& m, CipherSource* ring, const vlog::ValuePointer& p,
                              const std::string& key) {
  std::string value = "sentinel";
  Status s = vlog::read_value(m.storage->logs(), p, key, &value, ring);
  if (!s.ok()) {
    // A sealed file hands out no opened bytes on failure (a plaintext one leaves what it read).
    if (ring != nullptr) CHECK(value.find("PLAINTEXT") == std::string::npos);
    return s;
  }
  return value;
}

void fix_entry_crc(std::string* bytes, const vlog::ValuePointer& p) {
  char* e = bytes->data() + p.offset;
  const uint32_t key_len = decode_fixed32(e + 4);
  const uint32_t value_len = decode_fixed32(e + 8);
  const std::string_view body(e + vlog::kEntryHeaderSize, p.size - vlog::kEntryHeaderSize);
  encode_fixed32(e, vlog::entry_crc(key_len, value_len, body));
}

void check_scan_prefix(const VlogScan& s, const std::vector<Entry>& written, size_t at_most) {
  CHECK(s.entries.size() <= at_most);
  for (size_t i = 0; i < s.entries.size() && i < written.size(); ++i) {
    CHECK(s.entries[i].key == written[i].key);
    CHECK(s.entries[i].value == written[i].value);
  }
}

}  // namespace

// ================================================================================================
// Log records
// ================================================================================================

TEST_CASE("sealed log records round-trip, several per append, small and large", "[encryption]") {
  for (FileKind kind : {FileKind::Wal, FileKind::Manifest}) {
    const bool wal = kind == FileKind::Wal;
    INFO((wal ? "WAL segment" : "manifest"));
    Mem m;
    auto ring = keyring();
    const std::string name = wal ? wal_file_name(5) : manifest_file_name(5);
    const std::vector<std::vector<std::string>> groups = {
        {plaintext(1, 0)},
        {plaintext(17, 1), plaintext(511, 2), plaintext(513, 3), plaintext(4096, 4)},
        {plaintext(300000, 5)},  // larger than the reader's window
        {plaintext(2, 6), plaintext(70000, 7)},
        // A group of more than a MiB goes out in stretches: each sealed at its own offset too.
        {plaintext(600000, 8), plaintext(600000, 9), plaintext(1200000, 10), plaintext(5, 11)}};
    const std::vector<std::string> written = flatten(groups);
    write_log(m, ring.get(), name, kind, 5, groups);

    const std::string bytes = m.bytes(name);
    uint64_t expected_size = kFileHeaderSize;
    for (const auto& r : written) {
      expected_size += log::kRecordHeaderSize + r.size() + FileCipher::kOverhead;
    }
    CHECK(bytes.size() == expected_size);
    CHECK_FALSE(leaks(bytes, written));
    auto header = decode_file_header(bytes, kind, name);
    REQUIRE(header.ok());
    CHECK(header->cipher == static_cast<uint8_t>(CipherSuite::XChaCha20Poly1305));
    CHECK(header->key_id == 1);
    CHECK(header->db_id == database(1));

    LogRead r = read_log(m, name, kind, ring.get());
    INFO(r.status.to_string());
    REQUIRE(r.status.ok());
    CHECK_FALSE(r.torn);
    CHECK(r.valid_end == bytes.size());
    CHECK(r.records == written);
    // Each record was sealed at its own offset, also inside one append.
    uint64_t at = kFileHeaderSize;
    for (size_t i = 0; i < written.size(); ++i) {
      CHECK(r.offsets[i] == at);
      at += log::kRecordHeaderSize + written[i].size() + FileCipher::kOverhead;
    }
  }
}

TEST_CASE("plaintext log files keep their exact bytes", "[encryption]") {
  Mem m;
  const auto groups = small_groups();
  write_log(m, nullptr, wal_file_name(5), FileKind::Wal, 5, groups);
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 5;
  std::string expected;
  encode_file_header(h, &expected);
  for (const std::string& r : flatten(groups)) {
    char frame[log::kRecordHeaderSize];
    encode_fixed32(frame + 4, static_cast<uint32_t>(r.size()));
    const uint32_t crc = crc32c::extend(crc32c::value(frame + 4, 4), r.data(), r.size());
    encode_fixed32(frame, crc32c::mask(crc));
    expected.append(frame, sizeof(frame));
    expected += r;
  }
  CHECK(m.bytes(wal_file_name(5)) == expected);
  CHECK(leaks(m.bytes(wal_file_name(5)), flatten(groups)));  // the detector sees plaintext
  LogRead r = read_log(m, wal_file_name(5), FileKind::Wal, nullptr);
  CHECK(r.status.ok());
  CHECK(r.records == flatten(groups));
}

TEST_CASE("a bit flip anywhere in a sealed log is refused and never returned", "[encryption]") {
  Mem m;
  auto ring = keyring();
  const std::string name = wal_file_name(5);
  const auto written = flatten(small_groups());
  write_log(m, ring.get(), name, FileKind::Wal, 5, small_groups());
  const std::string clean = m.bytes(name);
  LogRead good = read_log(m, name, FileKind::Wal, ring.get());
  REQUIRE(good.status.ok());
  REQUIRE(good.records == written);

  // The record holding byte i (records.size() for the file header: nothing may be read).
  auto record_of = [&](uint64_t i) -> size_t {
    if (i < kFileHeaderSize) return 0;
    size_t k = 0;
    while (k + 1 < good.offsets.size() && good.offsets[k + 1] <= i) ++k;
    return k;
  };
  size_t refused = 0;
  for (uint64_t i = 0; i < clean.size(); ++i) {
    std::string bytes = clean;
    bytes[i] = static_cast<char>(bytes[i] ^ (1 << (i % 8)));
    m.put(name, bytes);
    LogRead r = read_log(m, name, FileKind::Wal, ring.get());
    INFO("byte " << i << ": " << r.status.to_string());
    CHECK(r.status.code() == Code::Corruption);
    check_prefix(r, written, record_of(i));
    refused += r.status.code() == Code::Corruption ? 1 : 0;
  }
  CHECK(refused == clean.size());

  // The same flips inside each sealed payload with the checksum made to match: authentication
  // refuses the record at its offset.
  for (size_t k = 0; k < good.offsets.size(); ++k) {
    const uint64_t o = good.offsets[k];
    const uint64_t end = o + log::kRecordHeaderSize + written[k].size() + FileCipher::kOverhead;
    for (uint64_t i = o + log::kRecordHeaderSize; i < end; ++i) {
      std::string bytes = clean;
      bytes[i] = static_cast<char>(bytes[i] ^ (1 << (i % 8)));
      fix_record_crc(&bytes, o);
      m.put(name, bytes);
      LogRead r = read_log(m, name, FileKind::Wal, ring.get());
      INFO("record " << k << ", byte " << i << ": " << r.status.to_string());
      CHECK(fails_authentication_at(r.status, o));
      CHECK(r.status.message().find(name) != std::string::npos);
      check_prefix(r, written, k);
      CHECK(r.records.size() == k);
    }
  }
}

TEST_CASE("sealed log records moved, swapped, copied or replayed are refused", "[encryption]") {
  Mem m;
  auto ring = keyring();
  const std::string name = wal_file_name(5);
  const auto groups = small_groups();
  const auto written = flatten(groups);
  write_log(m, ring.get(), name, FileKind::Wal, 5, groups);
  const std::string clean = m.bytes(name);
  const LogRead good = read_log(m, name, FileKind::Wal, ring.get());
  REQUIRE(good.status.ok());
  auto record_bytes = [&](const std::string& file, size_t k) {
    const uint64_t o = good.offsets[k];
    return file.substr(o, log::kRecordHeaderSize + written[k].size() + FileCipher::kOverhead);
  };
  auto expect_refused_at = [&](const std::string& bytes, size_t k, const char* what) {
    m.put(name, bytes);
    LogRead r = read_log(m, name, FileKind::Wal, ring.get());
    INFO(what << ": " << r.status.to_string());
    CHECK(fails_authentication_at(r.status, good.offsets[k]));
    CHECK(r.records.size() == k);
    check_prefix(r, written, k);
  };

  SECTION("two records swapped") {
    // Records 2 and 3 (40 and 200 bytes) trade places: each keeps a valid frame and checksum.
    std::string bytes = clean.substr(0, good.offsets[2]) + record_bytes(clean, 3) +
                        record_bytes(clean, 2) + clean.substr(good.offsets[4]);
    REQUIRE(bytes.size() == clean.size());
    expect_refused_at(bytes, 2, "swapped");
  }

  // Another file with the same layout, whose record 3 is spliced in at the same offset.
  auto splice_from = [&](CipherSource* other_ring, FileKind kind, uint64_t number,
                         const char* what) {
    const std::string other = kind == FileKind::Wal ? wal_file_name(number) : "other";
    write_log(m, other_ring, other, kind, number, groups);
    const std::string donor = m.bytes(other);
    std::string bytes = clean;
    bytes.replace(good.offsets[3], record_bytes(clean, 3).size(), record_bytes(donor, 3));
    REQUIRE(bytes != clean);
    expect_refused_at(bytes, 3, what);
  };
  SECTION("a record from another file of the same database") {
    splice_from(ring.get(), FileKind::Wal, 6, "another file");
  }
  SECTION("a record from a manifest of the same number") {
    splice_from(ring.get(), FileKind::Manifest, 5, "another kind");
  }
  SECTION("a record from another database under the same key") {
    auto other_db = keyring(1, 1, database(2));
    Mem elsewhere;
    write_log(elsewhere, other_db.get(), name, FileKind::Wal, 5, groups);
    const std::string donor = elsewhere.bytes(name);
    std::string bytes = clean;
    bytes.replace(good.offsets[3], record_bytes(clean, 3).size(), record_bytes(donor, 3));
    expect_refused_at(bytes, 3, "another database");
    // Its whole header too: the keyring refuses the file before any record.
    std::string header_swapped = donor.substr(0, kFileHeaderSize) + clean.substr(kFileHeaderSize);
    m.put(name, header_swapped);
    LogRead r = read_log(m, name, FileKind::Wal, ring.get());
    CHECK(r.status.code() == Code::Corruption);
    CHECK(r.status.message().find("another database") != std::string::npos);
    CHECK(r.records.empty());
  }
  SECTION("a record replayed from an older file of the same number") {
    std::string older_bytes;
    {
      Mem older;
      write_log(older, ring.get(), name, FileKind::Wal, 5, groups);  // another salt
      older_bytes = older.bytes(name);
    }
    REQUIRE(older_bytes.substr(0, kFileHeaderSize) != clean.substr(0, kFileHeaderSize));
    std::string bytes = clean;
    bytes.replace(good.offsets[3], record_bytes(clean, 3).size(), record_bytes(older_bytes, 3));
    expect_refused_at(bytes, 3, "older file");
    // Each record of the older file is refused at its offset under the newer header.
    for (size_t k = 0; k < written.size(); ++k) {
      std::string mixed = clean.substr(0, good.offsets[k]) + older_bytes.substr(good.offsets[k]);
      expect_refused_at(mixed, k, "older tail");
    }
  }
  SECTION("a record moved to another offset") {
    // Record 0 written again where record 1 was, and the rest shifted to follow it: every frame
    // is valid, but record 0 does not open at record 1's offset.
    std::string bytes =
        clean.substr(0, good.offsets[1]) + record_bytes(clean, 0) + clean.substr(good.offsets[1]);
    expect_refused_at(bytes, 1, "moved");
  }
}

TEST_CASE("a cut sealed log is a torn tail exactly where a plaintext one is", "[encryption]") {
  const auto groups = small_groups();
  const auto written = flatten(groups);
  auto ring = keyring();
  for (bool sealed : {false, true}) {
    INFO((sealed ? "sealed" : "plaintext"));
    Mem m;
    CipherSource* source = sealed ? ring.get() : nullptr;
    const std::string name = wal_file_name(5);
    write_log(m, source, name, FileKind::Wal, 5, groups);
    const std::string clean = m.bytes(name);
    const LogRead good = read_log(m, name, FileKind::Wal, source);
    REQUIRE(good.status.ok());
    const uint64_t last = good.offsets.back();
    for (uint64_t cut = last + 1; cut < clean.size(); ++cut) {
      m.put(name, clean.substr(0, cut));
      LogRead r = read_log(m, name, FileKind::Wal, source);
      INFO("cut at " << cut << ": " << r.status.to_string());
      REQUIRE(r.status.ok());
      CHECK(r.torn);
      CHECK(r.valid_end == last);
      CHECK(r.records.size() == written.size() - 1);
      check_prefix(r, written, written.size() - 1);
    }
    // The last record's tail never reached the disk: zero from a sector boundary inside it.
    std::string unwritten = clean;
    const uint64_t boundary = (last + log::kRecordHeaderSize + 511) / 512 * 512;
    REQUIRE(boundary < clean.size());
    for (uint64_t i = boundary; i < clean.size(); ++i) unwritten[i] = 0;
    m.put(name, unwritten);
    LogRead r = read_log(m, name, FileKind::Wal, source);
    CHECK(r.status.ok());
    CHECK(r.torn);
    CHECK(r.valid_end == last);
    // Cut inside the file header: a torn tail at offset 0.
    m.put(name, clean.substr(0, 30));
    r = read_log(m, name, FileKind::Wal, source);
    CHECK(r.status.ok());
    CHECK(r.torn);
    CHECK(r.valid_end == 0);
  }
}

TEST_CASE("a sealed log opens only with its database's key", "[encryption]") {
  Mem m;
  auto ring = keyring();
  const std::string name = wal_file_name(5);
  write_log(m, ring.get(), name, FileKind::Wal, 5, small_groups());

  LogRead none = read_log(m, name, FileKind::Wal, nullptr);
  CHECK(none.status.encryption_error() == EncryptionError::NotConfigured);
  CHECK(none.status.message().find(name) != std::string::npos);
  CHECK(none.records.empty());

  auto wrong = keyring(2);
  LogRead wrong_key = read_log(m, name, FileKind::Wal, wrong.get());
  CHECK(wrong_key.status.encryption_error() == EncryptionError::WrongKey);
  CHECK(wrong_key.records.empty());

  auto other_id = keyring(1, 2);
  LogRead unknown = read_log(m, name, FileKind::Wal, other_id.get());
  CHECK(unknown.status.encryption_error() == EncryptionError::UnknownKeyId);
  CHECK(unknown.records.empty());

  // read_header reports the same error, and keeps reporting it.
  auto f = m.storage->logs().open(name);
  REQUIRE(f.ok());
  log::Reader reader(f->get(), FileKind::Wal, wrong.get());
  FileHeader h;
  CHECK(reader.read_header(&h).encryption_error() == EncryptionError::WrongKey);
  CHECK(reader.read_header(&h).encryption_error() == EncryptionError::WrongKey);
  CHECK(reader.cipher() == nullptr);

  // A plaintext file in an encrypted database is corruption.
  write_log(m, nullptr, wal_file_name(6), FileKind::Wal, 6, small_groups());
  LogRead plain = read_log(m, wal_file_name(6), FileKind::Wal, ring.get());
  CHECK(plain.status.code() == Code::Corruption);
  CHECK(plain.status.message().find("plaintext") != std::string::npos);
}

TEST_CASE("a sealing log writer only writes a new file", "[encryption]") {
  Mem m;
  auto ring = keyring();
  auto existing = create_log(*m.storage, wal_file_name(5), "old bytes", false);
  auto cipher = ring->for_new_file(FileKind::Wal, 5, wal_file_name(5));
  REQUIRE(cipher.ok());
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 5;
  log::Writer w(std::move(existing), h, *cipher);
  CHECK(w.add_record("x").code() == Code::InvalidArgument);
  CHECK(w.add_records({"x", "y"}).code() == Code::InvalidArgument);
  CHECK(w.sync().code() == Code::InvalidArgument);
  CHECK(m.bytes(wal_file_name(5)) == "old bytes");
}

// ================================================================================================
// Value log entries
// ================================================================================================

TEST_CASE("sealed value log entries round-trip by pointer and by scan", "[encryption]") {
  Mem m;
  auto ring = keyring();
  const std::vector<Entry> entries = {{"key-000", ""},
                                      {"key-001", plaintext(1, 21)},
                                      {"key-002", plaintext(600, 22)},
                                      {std::string(300, 'k'), plaintext(300000, 23)},
                                      {"key-004", plaintext(70000, 24)}};
  const auto pointers = write_vlog(m, ring.get(), 9, entries);
  const std::string bytes = m.bytes(vlog_file_name(9));
  std::vector<std::string> texts;
  uint64_t at = kFileHeaderSize;
  for (size_t i = 0; i < entries.size(); ++i) {
    CHECK(pointers[i].offset == at);
    CHECK(pointers[i].size ==
          vlog::entry_size(entries[i].key.size(), entries[i].value.size()) + vlog::kSealOverhead);
    at += pointers[i].size;
    texts.push_back(entries[i].value);
  }
  texts.push_back(entries[3].key);
  CHECK(bytes.size() == at);
  CHECK_FALSE(leaks(bytes, texts));
  CHECK(bytes.find("key-00") == std::string::npos);

  for (size_t i = 0; i < entries.size(); ++i) {
    auto v = get_value(m, ring.get(), pointers[i], entries[i].key);
    INFO(i << ": " << v.status().to_string());
    REQUIRE(v.ok());
    CHECK(*v == entries[i].value);
  }
  auto reader = vlog::VlogReader::open(m.storage->logs(), 9, ring.get());
  REQUIRE(reader.ok());
  CHECK((*reader)->encrypted());
  std::string value;
  Status other_key = (*reader)->get(pointers[1], "key-002", &value);
  CHECK(other_key.code() == Code::Corruption);
  CHECK(other_key.message().find("different key") != std::string::npos);

  VlogScan s = scan_vlog(m, 9, ring.get());
  REQUIRE(s.status.ok());
  CHECK_FALSE(s.torn);
  REQUIRE(s.entries.size() == entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    CHECK(s.entries[i].key == entries[i].key);
    CHECK(s.entries[i].value == entries[i].value);
    CHECK(s.entries[i].pointer == pointers[i]);
  }
}

TEST_CASE("plaintext value logs keep their exact bytes", "[encryption]") {
  Mem m;
  const auto entries = small_entries();
  write_vlog(m, nullptr, 9, entries);
  FileHeader h;
  h.kind = FileKind::ValueLog;
  h.file_number = 9;
  std::string expected;
  encode_file_header(h, &expected);
  for (const Entry& e : entries) vlog::encode_entry(e.key, e.value, &expected);
  CHECK(m.bytes(vlog_file_name(9)) == expected);
}

TEST_CASE("a bit flip anywhere in a sealed value log is refused and never returned",
          "[encryption]") {
  Mem m;
  auto ring = keyring();
  const auto entries = small_entries();
  const auto pointers = write_vlog(m, ring.get(), 9, entries);
  const std::string name = vlog_file_name(9);
  const std::string clean = m.bytes(name);

  auto entry_of = [&](uint64_t i) -> size_t {
    size_t k = 0;
    while (k + 1 < pointers.size() && pointers[k + 1].offset <= i) ++k;
    return k;
  };
  for (uint64_t i = 0; i < clean.size(); ++i) {
    std::string bytes = clean;
    bytes[i] = static_cast<char>(bytes[i] ^ (1 << (i % 8)));
    m.put(name, bytes);
    INFO("byte " << i);
    VlogScan s = scan_vlog(m, 9, ring.get());
    CHECK(s.status.code() == Code::Corruption);
    check_scan_prefix(s, entries, i < kFileHeaderSize ? 0 : entry_of(i));
    for (size_t k = 0; k < entries.size(); ++k) {
      auto v = get_value(m, ring.get(), pointers[k], entries[k].key);
      const bool damaged = i < kFileHeaderSize || entry_of(i) == k;
      if (damaged) {
        CHECK(v.status().code() == Code::Corruption);
      } else {
        CHECK((v.ok() && *v == entries[k].value));
      }
    }
  }

  // Flips in each sealed body with the checksum made to match: authentication refuses them.
  for (size_t k = 0; k < entries.size(); ++k) {
    const vlog::ValuePointer& p = pointers[k];
    for (uint64_t i = p.offset + vlog::kEntryHeaderSize; i < p.offset + p.size; ++i) {
      std::string bytes = clean;
      bytes[i] = static_cast<char>(bytes[i] ^ (1 << (i % 8)));
      fix_entry_crc(&bytes, p);
      m.put(name, bytes);
      INFO("entry " << k << ", byte " << i);
      auto v = get_value(m, ring.get(), p, entries[k].key);
      CHECK(fails_authentication_at(v.status(), p.offset));
      VlogScan s = scan_vlog(m, 9, ring.get());
      CHECK(fails_authentication_at(s.status, p.offset));
      CHECK(s.entries.size() == k);
      check_scan_prefix(s, entries, k);
    }
  }
}

TEST_CASE("sealed value log entries swapped, copied or replayed are refused", "[encryption]") {
  Mem m;
  auto ring = keyring();
  const auto entries = small_entries();
  const auto pointers = write_vlog(m, ring.get(), 9, entries);
  const std::string name = vlog_file_name(9);
  const std::string clean = m.bytes(name);
  auto entry_bytes = [&](const std::string& file, size_t k) {
    return file.substr(pointers[k].offset, pointers[k].size);
  };
  // Entry k of `bytes` is refused at its offset, by pointer (with the key that entry holds) and
  // by the scanner, which hands out only the entries before it.
  auto expect_refused_at = [&](const std::string& bytes, size_t k, const vlog::ValuePointer& p,
                               const std::string& key, const char* what) {
    m.put(name, bytes);
    INFO(what);
    auto v = get_value(m, ring.get(), p, key);
    CHECK(fails_authentication_at(v.status(), p.offset));
    VlogScan s = scan_vlog(m, 9, ring.get());
    CHECK(fails_authentication_at(s.status, p.offset));
    CHECK(s.entries.size() == k);
    check_scan_prefix(s, entries, k);
  };

  SECTION("two entries swapped") {
    std::string bytes = clean.substr(0, pointers[1].offset) + entry_bytes(clean, 2) +
                        entry_bytes(clean, 1) + clean.substr(pointers[3].offset);
    REQUIRE(bytes.size() == clean.size());
    // Entry 2 now starts where entry 1 did.
    expect_refused_at(bytes, 1, {9, pointers[1].offset, pointers[2].size}, entries[2].key,
                      "swapped");
  }
  auto splice = [&](const std::string& donor, const char* what) {
    std::string bytes = clean;
    bytes.replace(pointers[2].offset, pointers[2].size, entry_bytes(donor, 2));
    REQUIRE(bytes != clean);
    expect_refused_at(bytes, 2, pointers[2], entries[2].key, what);
  };
  SECTION("an entry from another value log of the same database") {
    write_vlog(m, ring.get(), 10, entries);
    splice(m.bytes(vlog_file_name(10)), "another file");
  }
  SECTION("an entry from another database under the same key") {
    auto other_db = keyring(1, 1, database(2));
    Mem elsewhere;
    write_vlog(elsewhere, other_db.get(), 9, entries);
    splice(elsewhere.bytes(name), "another database");
  }
  SECTION("an entry replayed from an older file of the same number") {
    Mem older;
    write_vlog(older, ring.get(), 9, entries);  // another salt
    const std::string older_bytes = older.bytes(name);
    REQUIRE(older_bytes.substr(0, kFileHeaderSize) != clean.substr(0, kFileHeaderSize));
    splice(older_bytes, "older file");
  }
}

TEST_CASE("a cut sealed value log is a torn tail exactly where a plaintext one is",
          "[encryption]") {
  const auto entries = small_entries();
  auto ring = keyring();
  for (bool sealed : {false, true}) {
    INFO((sealed ? "sealed" : "plaintext"));
    Mem m;
    CipherSource* source = sealed ? ring.get() : nullptr;
    const auto pointers = write_vlog(m, source, 9, entries);
    const std::string name = vlog_file_name(9);
    const std::string clean = m.bytes(name);
    const uint64_t last = pointers.back().offset;
    for (uint64_t cut = last + 1; cut < clean.size(); ++cut) {
      m.put(name, clean.substr(0, cut));
      VlogScan s = scan_vlog(m, 9, source);
      INFO("cut at " << cut << ": " << s.status.to_string());
      REQUIRE(s.status.ok());
      CHECK(s.torn);
      CHECK(s.valid_end == last);
      check_scan_prefix(s, entries, entries.size() - 1);
      CHECK(s.entries.size() == entries.size() - 1);
      auto v = get_value(m, source, pointers.back(), entries.back().key);
      CHECK(v.status().code() == Code::Corruption);
      auto before = get_value(m, source, pointers[0], entries[0].key);
      CHECK(before.ok());
    }
  }
}

TEST_CASE("a sealed value log opens only with its database's key", "[encryption]") {
  Mem m;
  auto ring = keyring();
  const auto entries = small_entries();
  const auto pointers = write_vlog(m, ring.get(), 9, entries);
  const std::string name = vlog_file_name(9);

  auto open_error = [&](CipherSource* source) {
    auto r = vlog::VlogReader::open(m.storage->logs(), 9, source);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(name) != std::string::npos);
    auto v = get_value(m, source, pointers[1], entries[1].key);
    CHECK(v.status().message() == r.status().message());
    VlogScan s = scan_vlog(m, 9, source);
    CHECK(s.status.message() == r.status().message());
    CHECK(s.entries.empty());
    return r.status();
  };
  CHECK(open_error(nullptr).encryption_error() == EncryptionError::NotConfigured);
  auto wrong = keyring(2);
  CHECK(open_error(wrong.get()).encryption_error() == EncryptionError::WrongKey);
  auto other_id = keyring(1, 2);
  CHECK(open_error(other_id.get()).encryption_error() == EncryptionError::UnknownKeyId);
  auto other_db = keyring(1, 1, database(2));
  CHECK(open_error(other_db.get()).code() == Code::Corruption);

  // A plaintext value log in an encrypted database is corruption.
  write_vlog(m, nullptr, 10, entries);
  auto plain = vlog::VlogReader::open(m.storage->logs(), 10, ring.get());
  CHECK(plain.status().code() == Code::Corruption);

  // A sealing writer refuses a file that already has bytes.
  auto existing = create_log(*m.storage, vlog_file_name(11), "old", false);
  auto cipher = ring->for_new_file(FileKind::ValueLog, 11, vlog_file_name(11));
  REQUIRE(cipher.ok());
  vlog::VlogWriter w(std::move(existing), 11, *cipher);
  CHECK(w.add("k", "v").status().code() == Code::InvalidArgument);
  CHECK(m.bytes(vlog_file_name(11)) == "old");
}
