// skv-test-modules: util crypto sstable
// Encrypted SSTables (docs/sstable.md, "Encrypted tables"), on real table bytes: a sealed table
// reads back like the model in both directions, with and without zstd and a filter, and holds
// none of its keys or values in the clear; every edit of its bytes (a flipped bit anywhere, a
// block moved or swapped inside the file, a block or footer from another table of the same
// database, from another database under the same key, or from an older table of the same number,
// a truncation at any byte) is refused by name and never yields a wrong value; and a table opened
// without a key manager, with the wrong key or without its key id fails by name before any block
// is read.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "crypto/cipher_source.h"
#include "crypto/file_cipher.h"
#include "format/file_header.h"
#include "format/internal_key.h"
#include "skv/encryption.h"
#include "sstable/block.h"
#include "sstable/block_format.h"
#include "sstable/table.h"
#include "sstable/table_builder.h"

using namespace skv;
using namespace skv::crypto;

namespace {

constexpr uint64_t kNumber = 42;

std::string name_of(uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%06llu.sst", static_cast<unsigned long long>(number));
  return buf;
}

class StringWriter final : public ObjectWriter {
 public:
  explicit StringWriter(std::string* out) : out_(out) {}
  Status append(std::string_view d) override {
    out_->append(d);
    return Status::OK();
  }
  uint64_t size() const override { return out_->size(); }
  Status finish() override { return Status::OK(); }
  void abort() override {}

 private:
  std::string* out_;
};

class StringReader final : public ObjectReader {
 public:
  StringReader(std::string data, std::string name)
      : data_(std::move(data)), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return data_.size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    if (offset >= data_.size()) {
      *result = {};
      return Status::OK();
    }
    n = std::min<size_t>(n, data_.size() - offset);
    std::memcpy(scratch, data_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return Status::OK();
  }

 private:
  std::string data_;
  std::string name_;
};

using Model = std::map<std::string, std::string, InternalKeyLess>;

// Keys and values carry marker text that must never appear in a sealed file. Values of one
// length (when `fixed`) make equal-sized data blocks, so blocks can be swapped in place.
Model make_model(std::mt19937_64& rng, size_t num_keys, bool fixed) {
  Model m;
  SequenceNumber seq = 1;
  for (size_t i = 0; i < num_keys; ++i) {
    char uk[32];
    std::snprintf(uk, sizeof(uk), "plainkey/%06zu", i * 7);
    const int versions = fixed ? 1 : 1 + static_cast<int>(rng() % 3);
    for (int v = 0; v < versions; ++v) {
      seq += fixed ? 1 : 1 + rng() % 9;
      const ValueKind kind = !fixed && rng() % 6 == 0 ? ValueKind::Delete : ValueKind::Value;
      std::string value;
      if (kind == ValueKind::Value) {
        value = "plainvalue-" + std::to_string(seq) + "-";
        const size_t pad = fixed ? 40 - value.size() : rng() % 80;
        for (size_t j = 0; j < pad; ++j) value.push_back("abcab "[j % 6]);
      }
      m.emplace(make_internal_key(uk, seq, kind, 1000 + seq), value);
    }
  }
  return m;
}

std::shared_ptr<SoftwareKeyManager> manager(uint8_t fill, uint32_t id = 1) {
  auto m = SoftwareKeyManager::from_bytes(std::string(32, static_cast<char>(fill)), id);
  REQUIRE(m.ok());
  return *m;
}

DatabaseId db_id(uint8_t fill) {
  DatabaseId id;
  id.fill(fill);
  return id;
}

std::string build(const Model& m, const TableOptions& opts, CipherSource* ring,
                  uint64_t number = kNumber) {
  std::shared_ptr<const FileCipher> cipher;
  if (ring != nullptr) {
    auto c = ring->for_new_file(FileKind::Table, number, name_of(number));
    REQUIRE(c.ok());
    cipher = *c;
  }
  std::string file;
  TableBuilder b(opts, std::make_unique<StringWriter>(&file), number, cipher);
  for (const auto& [k, v] : m) REQUIRE(b.add(k, v).ok());
  REQUIRE(b.finish().ok());
  REQUIRE(b.file_size() == file.size());
  return file;
}

Result<std::shared_ptr<Table>> open(const std::string& file, CipherSource* ring,
                                    BlockCache* cache = nullptr, uint64_t number = kNumber) {
  return Table::open(std::make_unique<StringReader>(file, name_of(number)), number, cache, ring);
}

bool names_file(const Status& s, uint64_t number = kNumber) {
  return s.message().find(name_of(number)) != std::string::npos;
}

// The layout of a sealed table, found through its own cipher: footer, metadata and data block
// handles.
struct Layout {
  TableFooter footer;
  uint64_t footer_offset = 0;
  std::vector<BlockHandle> data;
};

Layout layout_of(const std::string& file, CipherSource* ring) {
  Layout l;
  auto header = decode_file_header(std::string_view(file).substr(0, kFileHeaderSize),
                                   FileKind::Table, name_of(kNumber));
  REQUIRE(header.ok());
  auto cipher = ring->for_existing_file(*header, name_of(kNumber));
  REQUIRE(cipher.ok());
  l.footer_offset = file.size() - kSealedTableFooterSize;
  REQUIRE(decode_sealed_table_footer(std::string_view(file).substr(l.footer_offset), **cipher,
                                     l.footer_offset, file.size(), &l.footer)
              .ok());
  StringReader reader(file, name_of(kNumber));
  auto index = read_block(reader, l.footer.index, kMaxBlockSize, cipher->get());
  REQUIRE(index.ok());
  auto block = Block::create(std::move(index).value(), name_of(kNumber), l.footer.index.offset);
  REQUIRE(block.ok());
  BlockIterator it(*block, name_of(kNumber), l.footer.index.offset);
  for (it.seek_first(); it.valid(); it.next()) {
    std::string_view v = it.value();
    BlockHandle h;
    REQUIRE(decode_block_handle(&v, &h));
    l.data.push_back(h);
  }
  REQUIRE(it.status().ok());
  return l;
}

// The newest version of user_key with seq <= snapshot, from the model.
bool model_get(const Model& m, const std::string& uk, SequenceNumber snapshot,
               Table::GetResult* out) {
  auto it = m.lower_bound(make_seek_key(uk, snapshot));
  if (it == m.end()) return false;
  ParsedInternalKey p;
  REQUIRE(parse_internal_key(it->first, &p));
  if (p.user_key != uk) return false;
  out->found = true;
  out->kind = p.kind;
  out->value = it->second;
  out->sequence = p.sequence;
  out->timestamp = p.timestamp;
  return true;
}

std::vector<std::string> user_keys(const Model& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) {
    std::string uk(extract_user_key(k));
    if (keys.empty() || keys.back() != uk) keys.push_back(uk);
  }
  return keys;
}

// Reads everything the (possibly damaged) file holds: open, a full scan each way (forwards as a
// sweep that reads ahead) and a point read of every key. Every entry returned must be the
// model's; the first error is returned (OK if none was seen).
Status read_everything(const std::string& file, CipherSource* ring, const Model& m) {
  auto opened = open(file, ring);
  if (!opened.ok()) return opened.status();
  auto table = *opened;
  Status first;
  TableReadOptions sweep;
  sweep.fill_cache = false;
  sweep.readahead = true;
  auto it = table->new_iterator(sweep);
  auto pos = m.begin();
  for (it->seek_first(); it->valid(); it->next(), ++pos) {
    REQUIRE(pos != m.end());
    REQUIRE(it->key() == pos->first);
    REQUIRE(it->value() == pos->second);
  }
  if (!it->status().ok()) {
    first = it->status();
  } else {
    REQUIRE(pos == m.end());
  }
  auto rpos = m.rbegin();
  auto back = table->new_iterator();
  for (back->seek_last(); back->valid(); back->prev(), ++rpos) {
    REQUIRE(rpos != m.rend());
    REQUIRE(back->key() == rpos->first);
    REQUIRE(back->value() == rpos->second);
  }
  if (!back->status().ok() && first.ok()) first = back->status();
  for (const std::string& uk : user_keys(m)) {
    Table::GetResult got;
    Status s = table->get(uk, kMaxSequenceNumber, &got);
    if (!s.ok()) {
      if (first.ok()) first = s;
      continue;
    }
    Table::GetResult want;
    REQUIRE(model_get(m, uk, kMaxSequenceNumber, &want));
    REQUIRE(got.found);
    REQUIRE(got.kind == want.kind);
    REQUIRE(got.value == want.value);
    REQUIRE(got.sequence == want.sequence);
  }
  return first;
}

// `why`, when given, is a phrase the error must contain.
void expect_refused(const std::string& file, CipherSource* ring, const Model& m,
                    std::string_view why = {}) {
  Status s = read_everything(file, ring, m);
  REQUIRE_FALSE(s.ok());
  REQUIRE(s.is_corruption());
  REQUIRE(names_file(s));
  if (!why.empty()) REQUIRE(s.message().find(why) != std::string::npos);
}

// What FileCipher::open says when a unit fails authentication.
constexpr std::string_view kUnauthentic = "fails authentication";

// Copies the stored bytes of block `h` (a sealed block) from `from` over the same range of `to`.
void copy_block(const std::string& from, std::string* to, const BlockHandle& h) {
  const size_t n = h.size + kSealedBlockTrailerSize;
  to->replace(h.offset, n, from.substr(h.offset, n));
}

}  // namespace

TEST_CASE("an encrypted table reads back like the model and hides its keys and values",
          "[table][encryption]") {
  const bool zstd = GENERATE(false, true);
  const int bloom = GENERATE(0, 10);
  const bool with_cache = GENERATE(false, true);
  INFO("zstd " << zstd << " bloom " << bloom << " cache " << with_cache);
  std::vector<CipherSuite> suites = {CipherSuite::XChaCha20Poly1305};
  if (cipher_available(CipherSuite::Aes256Gcm)) suites.push_back(CipherSuite::Aes256Gcm);
  for (CipherSuite suite : suites) {
    INFO(cipher_name(suite));
    std::mt19937_64 rng(9100 + (zstd ? 1 : 0) + static_cast<uint64_t>(bloom));
    const Model m = make_model(rng, 300, false);
    TableOptions opts;
    opts.block_size = 512;
    opts.compression = zstd ? Compression::Zstd : Compression::None;
    opts.bloom_bits_per_key = bloom;
    Keyring ring(manager(1), suite, db_id(0x11));
    const std::string file = build(m, opts, &ring);
    const std::string plain = build(m, opts, nullptr);

    // The header names the envelope; no key or value is in the clear.
    auto header = decode_file_header(std::string_view(file).substr(0, kFileHeaderSize),
                                     FileKind::Table, name_of(kNumber));
    REQUIRE(header.ok());
    CHECK(header->cipher == static_cast<uint8_t>(suite));
    CHECK(header->key_id == 1);
    CHECK(header->db_id == db_id(0x11));
    CHECK(file.find("plainkey") == std::string::npos);
    CHECK(file.find("plainvalue") == std::string::npos);
    CHECK(file.find("abcab") == std::string::npos);
    if (!zstd) CHECK(plain.find("plainvalue") != std::string::npos);

    // The layout: the same blocks as the plaintext table, each 16 bytes longer, and a footer
    // 16 bytes longer.
    const Layout l = layout_of(file, &ring);
    CHECK(l.data.size() > 10);
    CHECK(l.data.front().offset == kFileHeaderSize);
    for (size_t i = 0; i + 1 < l.data.size(); ++i) {
      CHECK(l.data[i].end(kSealedBlockTrailerSize) == l.data[i + 1].offset);
    }
    CHECK((bloom > 0) == (l.footer.filter.size > 0));
    CHECK(l.footer.properties.end(kSealedBlockTrailerSize) == l.footer_offset);

    BlockCache cache(1 << 20);
    auto opened = open(file, &ring, with_cache ? &cache : nullptr);
    REQUIRE(opened.ok());
    auto table = *opened;
    CHECK(table->properties().num_entries == m.size());
    CHECK(table->file_size() == file.size());

    auto it = table->new_iterator();
    auto pos = m.begin();
    for (it->seek_first(); it->valid(); it->next(), ++pos) {
      REQUIRE(pos != m.end());
      REQUIRE(it->key() == pos->first);
      REQUIRE(it->value() == pos->second);
    }
    CHECK(pos == m.end());
    auto rpos = m.rbegin();
    for (it->seek_last(); it->valid(); it->prev(), ++rpos) {
      REQUIRE(rpos != m.rend());
      REQUIRE(it->key() == rpos->first);
      REQUIRE(it->value() == rpos->second);
    }
    CHECK(rpos == m.rend());
    CHECK(it->status().ok());
    if (with_cache) CHECK(cache.usage() > 0);

    // Point reads at several snapshots, and keys that are absent.
    const std::vector<std::string> keys = user_keys(m);
    for (const std::string& uk : keys) {
      for (SequenceNumber snap : {SequenceNumber{5}, SequenceNumber{300}, kMaxSequenceNumber}) {
        Table::GetResult got;
        REQUIRE(table->get(uk, snap, &got).ok());
        Table::GetResult want;
        const bool present = model_get(m, uk, snap, &want);
        REQUIRE(got.found == present);
        if (!present) continue;
        REQUIRE(got.kind == want.kind);
        REQUIRE(got.value == want.value);
        REQUIRE(got.sequence == want.sequence);
        REQUIRE(got.timestamp == want.timestamp);
      }
      Table::GetResult missing;
      REQUIRE(table->get(uk + "x", kMaxSequenceNumber, &missing).ok());
      REQUIRE_FALSE(missing.found);
    }
  }
}

TEST_CASE("plaintext tables stay plaintext and refuse a key manager", "[table][encryption]") {
  std::mt19937_64 rng(9200);
  const Model m = make_model(rng, 50, false);
  const std::string plain = build(m, TableOptions{}, nullptr);
  CHECK(plain == build(m, TableOptions{}, nullptr));
  auto header = decode_file_header(std::string_view(plain).substr(0, kFileHeaderSize),
                                   FileKind::Table, name_of(kNumber));
  REQUIRE(header.ok());
  CHECK(header->cipher == 0);
  REQUIRE(read_everything(plain, nullptr, m).ok());
  // Every file of an encrypted database is sealed: a plaintext table there is corruption.
  Keyring ring(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  auto r = open(plain, &ring);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().is_corruption());
  CHECK(names_file(r.status()));
}

TEST_CASE("an encrypted table needs its key manager, key and key id", "[table][encryption]") {
  std::mt19937_64 rng(9300);
  const Model m = make_model(rng, 50, false);
  Keyring ring(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  const std::string file = build(m, TableOptions{}, &ring);

  auto none = open(file, nullptr);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == Code::Encryption);
  CHECK(none.status().encryption_error() == EncryptionError::NotConfigured);
  CHECK(names_file(none.status()));

  Keyring wrong(manager(2), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  auto w = open(file, &wrong);
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().encryption_error() == EncryptionError::WrongKey);
  CHECK(names_file(w.status()));

  Keyring other_id(manager(1, 2), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  auto u = open(file, &other_id);
  REQUIRE_FALSE(u.ok());
  CHECK(u.status().encryption_error() == EncryptionError::UnknownKeyId);
  CHECK(names_file(u.status()));

  // The same key in another database: the header names another database.
  Keyring other_db(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x22));
  auto d = open(file, &other_db);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().is_corruption());
  CHECK(names_file(d.status()));

  // A table opened under another number is refused before its cipher is made.
  auto n = open(file, &ring, nullptr, kNumber + 1);
  REQUIRE_FALSE(n.ok());
  CHECK(n.status().is_corruption());

  // And with everything right it opens.
  REQUIRE(read_everything(file, &ring, m).ok());
}

TEST_CASE("a flipped bit anywhere in an encrypted table is refused by name",
          "[table][encryption][corruption]") {
  const bool zstd = GENERATE(false, true);
  INFO("zstd " << zstd);
  std::mt19937_64 rng(9400 + (zstd ? 1 : 0));
  const Model m = make_model(rng, 60, false);
  TableOptions opts;
  opts.block_size = 256;
  opts.bloom_bits_per_key = 10;
  opts.compression = zstd ? Compression::Zstd : Compression::None;
  Keyring ring(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  const std::string good = build(m, opts, &ring);
  REQUIRE(read_everything(good, &ring, m).ok());
  const Layout l = layout_of(good, &ring);

  // Every 7th byte, and the first and last bytes of every block and of the footer.
  std::vector<size_t> at;
  for (size_t i = 0; i < good.size(); i += 7) at.push_back(i);
  std::vector<BlockHandle> blocks = l.data;
  blocks.push_back(l.footer.index);
  blocks.push_back(l.footer.filter);
  blocks.push_back(l.footer.properties);
  for (const BlockHandle& h : blocks) {
    at.push_back(h.offset);
    at.push_back(h.offset + h.size);                       // compression type
    at.push_back(h.offset + h.size + 1);                   // tag
    at.push_back(h.end(kSealedBlockTrailerSize) - 1);      // crc
    at.push_back(h.end(kSealedBlockTrailerSize) - 4 - 1);  // last tag byte
  }
  for (size_t i = l.footer_offset; i < good.size(); ++i) at.push_back(i);
  for (size_t i : at) {
    std::string bad = good;
    bad[i] ^= static_cast<char>(1 << (rng() % 8));
    INFO("flipped byte " << i << " of " << good.size());
    expect_refused(bad, &ring, m);
  }
}

TEST_CASE("blocks moved, swapped or copied into an encrypted table are refused",
          "[table][encryption][corruption]") {
  std::mt19937_64 rng(9500);
  // One version per key and values of one length: data blocks of equal size, at the same
  // offsets in every table built from this model, so each can be put in another's place with
  // its checksum intact (only the AEAD can tell).
  const Model m = make_model(rng, 200, true);
  TableOptions opts;
  opts.block_size = 512;
  opts.bloom_bits_per_key = 10;
  Keyring ring(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  const std::string good = build(m, opts, &ring);
  const Layout l = layout_of(good, &ring);
  REQUIRE(l.data.size() > 4);

  SECTION("two data blocks of equal size swapped, or one copied over another") {
    int swaps = 0;
    for (size_t i = 0; i < l.data.size(); ++i) {
      for (size_t j = i + 1; j < l.data.size(); ++j) {
        if (l.data[i].size != l.data[j].size) continue;
        INFO("blocks at " << l.data[i].offset << " and " << l.data[j].offset);
        const size_t n = l.data[i].size + kSealedBlockTrailerSize;
        std::string swapped = good;
        swapped.replace(l.data[i].offset, n, good.substr(l.data[j].offset, n));
        swapped.replace(l.data[j].offset, n, good.substr(l.data[i].offset, n));
        expect_refused(swapped, &ring, m, kUnauthentic);
        std::string moved = good;
        moved.replace(l.data[j].offset, n, good.substr(l.data[i].offset, n));
        expect_refused(moved, &ring, m, kUnauthentic);
        ++swaps;
      }
    }
    CHECK(swaps > 0);
  }

  SECTION("blocks and footers from other tables, each into its own offset") {
    // Another table of the same database; another database under the same key; an older table
    // of the same number (another salt). Each has the same layout as `good`.
    Keyring other_db(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x22));
    const std::string same_db = build(m, opts, &ring, kNumber + 1);
    const std::string elsewhere = build(m, opts, &other_db);
    const std::string older = build(m, opts, &ring);
    for (const std::string* from : {&same_db, &elsewhere, &older}) {
      REQUIRE(from->size() == good.size());
      REQUIRE(*from != good);
      std::vector<BlockHandle> blocks = l.data;
      blocks.push_back(l.footer.index);
      blocks.push_back(l.footer.filter);
      blocks.push_back(l.footer.properties);
      for (const BlockHandle& h : blocks) {
        INFO("block at " << h.offset);
        std::string bad = good;
        copy_block(*from, &bad, h);
        expect_refused(bad, &ring, m, kUnauthentic);
      }
      std::string footer = good;
      footer.replace(l.footer_offset, kSealedTableFooterSize, from->substr(l.footer_offset));
      expect_refused(footer, &ring, m, kUnauthentic);
      // Its header with this table's body: a header of another number or database is refused
      // by name; one of another salt makes every unit fail.
      std::string header = good;
      header.replace(0, kFileHeaderSize, from->substr(0, kFileHeaderSize));
      expect_refused(header, &ring, m);
    }
  }
}

TEST_CASE("an encrypted table truncated or extended at any byte is refused",
          "[table][encryption][corruption]") {
  std::mt19937_64 rng(9600);
  const Model m = make_model(rng, 40, false);
  TableOptions opts;
  opts.block_size = 256;
  opts.bloom_bits_per_key = 10;
  Keyring ring(manager(1), CipherSuite::XChaCha20Poly1305, db_id(0x11));
  const std::string good = build(m, opts, &ring);
  const Layout l = layout_of(good, &ring);
  for (size_t len = 0; len < good.size(); ++len) {
    INFO("length " << len << " of " << good.size());
    auto r = open(good.substr(0, len), &ring);
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.status().is_corruption());
    REQUIRE(names_file(r.status()));
  }
  // Cut at a block boundary, with the sealed footer put back at the new end.
  for (const BlockHandle& h : l.data) {
    std::string cut = good.substr(0, h.end(kSealedBlockTrailerSize));
    cut += good.substr(l.footer_offset);
    expect_refused(cut, &ring, m, kUnauthentic);
  }
  expect_refused(good + "x", &ring, m);
  expect_refused(good + std::string(kSealedTableFooterSize, '\0'), &ring, m);
}
