// skv-test-modules: util crypto
// The primitives of encryption at rest (docs/encryption.md): the AEADs with counter nonces, the
// per-file cipher and what its associated data binds (a unit opened at another position, in
// another file, kind or database, under another key or salt, is refused), key check values,
// SecretKey, SoftwareKeyManager, and a known answer shared by the native and wasm32 builds.

#include <sodium.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "crypto/aead.h"
#include "crypto/cipher_source.h"
#include "crypto/file_cipher.h"
#include "skv/encryption.h"

using namespace skv;
using namespace skv::crypto;

namespace {

std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

SecretKey key_of(uint8_t fill) {
  uint8_t bytes[kRootKeySize];
  for (size_t i = 0; i < kRootKeySize; ++i) bytes[i] = static_cast<uint8_t>(fill + i);
  SecretKey k;
  k.assign(bytes);
  return k;
}

Envelope envelope(CipherSuite suite = CipherSuite::XChaCha20Poly1305) {
  Envelope e;
  e.suite = suite;
  e.key_id = 7;
  for (size_t i = 0; i < e.salt.size(); ++i) e.salt[i] = static_cast<uint8_t>(0xa0 + i);
  for (size_t i = 0; i < e.db_id.size(); ++i) e.db_id[i] = static_cast<uint8_t>(0x10 + i);
  return e;
}

std::shared_ptr<const FileCipher> cipher(const Envelope& e, FileKind kind = FileKind::Table,
                                         uint64_t number = 12, uint8_t key = 1) {
  auto c = FileCipher::create(e, kind, number, key_of(key), "db/000012.sst");
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("the build has encryption and XChaCha20-Poly1305 everywhere", "[crypto]") {
  REQUIRE(init().ok());
  CHECK(encryption_compiled());
  CHECK(cipher_available(CipherSuite::XChaCha20Poly1305));
  CHECK(std::string(cipher_name(CipherSuite::XChaCha20Poly1305)) == "xchacha20-poly1305");
  CHECK(std::string(cipher_name(CipherSuite::Aes256Gcm)) == "aes-256-gcm");
}

TEST_CASE("known answers: the same bytes natively and in wasm32", "[crypto]") {
  // A regression vector computed once by this code; the wasm32 build runs this same test, so a
  // database sealed on one platform opens on the other. The key check value and the MAC were
  // also computed independently, with Python's hashlib.blake2b, from docs/encryption.md.
  const std::shared_ptr<const FileCipher> c = cipher(envelope());
  std::string sealed;
  c->seal(4096, "skv sealed unit", &sealed);
  CHECK(sealed.size() == 15 + FileCipher::kOverhead);
  CHECK(hex(sealed) == "9fa4222eb3a1427093826eb057286de1293201d8a82293a2b3921e8eb2b842");
  CHECK(key_check_value(key_of(1), envelope().db_id, 7) == 0x34a27fc1u);
  const auto mac = pointer_mac(key_of(1), envelope().db_id, 7, "MANIFEST-000005\n");
  CHECK(hex(std::string_view(reinterpret_cast<const char*>(mac.data()), 8)) == "b10fd2e551c1cda3");
}

TEST_CASE("seal and open make libsodium's bytes for both ciphers at every size", "[crypto]") {
  // Natively the bulk work runs through OpenSSL (docs/encryption.md, "Implementations"); the
  // bytes must be those of libsodium's own functions, which the browser build uses, or a
  // database would not move between them. Sizes around the 16- and 64-byte boundaries of GCM
  // and ChaCha20, a table block, and more than 64 KiB; counters near the top of the nonce.
  REQUIRE(init().ok());
  std::mt19937_64 rng(42);
  uint8_t key[32];
  for (auto& b : key) b = static_cast<uint8_t>(rng());
  const std::string ad = "associated data of a unit";
  for (const CipherSuite suite : {CipherSuite::XChaCha20Poly1305, CipherSuite::Aes256Gcm}) {
    if (!cipher_available(suite)) continue;
    for (const size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{63},
                           size_t{64}, size_t{65}, size_t{4096}, size_t{16411}, size_t{70001}}) {
      for (const uint64_t counter : {uint64_t{0}, uint64_t{4096}, ~uint64_t{0}}) {
        INFO(cipher_name(suite) << ", " << n << " bytes, counter " << counter);
        std::string plain(n, '\0');
        for (auto& ch : plain) ch = static_cast<char>(rng());
        std::string ours;
        seal(suite, key, counter, ad, plain, &ours);
        // libsodium's own answer, with the nonce docs/encryption.md defines: the counter
        // little-endian, then zeros.
        uint8_t nonce[24] = {};
        for (int i = 0; i < 8; ++i) nonce[i] = static_cast<uint8_t>(counter >> (8 * i));
        std::string theirs(n + kTagSize, '\0');
        unsigned long long len = 0;
        const auto* m = reinterpret_cast<const unsigned char*>(plain.data());
        const auto* a = reinterpret_cast<const unsigned char*>(ad.data());
        auto* c = reinterpret_cast<unsigned char*>(theirs.data());
        if (suite == CipherSuite::Aes256Gcm) {
          crypto_aead_aes256gcm_encrypt(c, &len, m, n, a, ad.size(), nullptr, nonce, key);
        } else {
          crypto_aead_xchacha20poly1305_ietf_encrypt(c, &len, m, n, a, ad.size(), nullptr, nonce,
                                                     key);
        }
        REQUIRE(len == n + kTagSize);
        CHECK(ours == theirs);
        std::string opened;
        CHECK(open(suite, key, counter, ad, theirs, &opened));
        CHECK(opened == plain);
        // A flipped bit anywhere is refused, and the scratch bytes keep no plaintext.
        std::string bad = theirs;
        bad[rng() % bad.size()] ^= static_cast<char>(1u << (rng() % 8));
        CHECK_FALSE(open_in_place(suite, key, counter, ad, bad.data(), bad.size()));
        if (n >= 16) CHECK(bad.find(plain.substr(0, 16)) == std::string::npos);
      }
    }
  }
}

TEST_CASE("a sealed unit opens only where and how it was sealed", "[crypto]") {
  for (CipherSuite suite : {CipherSuite::XChaCha20Poly1305, CipherSuite::Aes256Gcm}) {
    if (!cipher_available(suite)) {
      WARN("skipped: " << cipher_name(suite) << " is not available on this CPU");
      continue;
    }
    INFO(cipher_name(suite));
    const Envelope e = envelope(suite);
    const std::shared_ptr<const FileCipher> c = cipher(e);
    const std::string plain(4096, 'p');
    std::string sealed;
    c->seal(8192, plain, &sealed);
    REQUIRE(sealed.size() == plain.size() + FileCipher::kOverhead);
    CHECK(sealed.find(std::string(64, 'p')) == std::string::npos);
    std::string out;
    REQUIRE(c->open(8192, sealed, &out).ok());
    CHECK(out == plain);

    auto refused = [&](const FileCipher& other, uint64_t position, const std::string& bytes) {
      std::string got = "untouched";
      Status s = other.open(position, bytes, &got);
      CHECK(s.code() == Code::Corruption);
      CHECK(s.message().find("offset " + std::to_string(position)) != std::string::npos);
      CHECK(got.empty());
    };
    refused(*c, 4096, sealed);                                  // moved inside the file
    refused(*cipher(e, FileKind::Table, 13), 8192, sealed);     // into another file
    refused(*cipher(e, FileKind::ValueLog, 12), 8192, sealed);  // into another kind of file
    refused(*cipher(e, FileKind::Table, 12, 2), 8192, sealed);  // under another root key
    Envelope other_db = e;
    other_db.db_id[0] ^= 1;
    refused(*cipher(other_db), 8192, sealed);  // from another database
    Envelope other_key_id = e;
    other_key_id.key_id = 8;
    refused(*cipher(other_key_id), 8192, sealed);  // another key id
    Envelope other_salt = e;
    other_salt.salt[15] ^= 0x80;
    refused(*cipher(other_salt), 8192, sealed);       // a replayed older file
    for (size_t i = 0; i < sealed.size(); i += 97) {  // edited anywhere
      std::string flipped = sealed;
      flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
      refused(*c, 8192, flipped);
    }
    refused(*c, 8192, sealed.substr(0, sealed.size() - 1));  // truncated
    refused(*c, 8192, sealed.substr(0, 10));                 // shorter than a tag
    refused(*c, 8192, sealed + "x");                         // extended
  }
}

TEST_CASE("the two ciphers never open each other's units", "[crypto]") {
  if (!cipher_available(CipherSuite::Aes256Gcm)) {
    WARN("skipped: AES-256-GCM is not available on this CPU");
    return;
  }
  std::string sealed;
  cipher(envelope(CipherSuite::Aes256Gcm))->seal(0, "abc", &sealed);
  std::string out;
  CHECK(cipher(envelope())->open(0, sealed, &out).code() == Code::Corruption);
}

TEST_CASE("key check values tell keys, key ids and databases apart", "[crypto]") {
  const DatabaseId db = envelope().db_id;
  DatabaseId other = db;
  other[3] ^= 4;
  const uint32_t k = key_check_value(key_of(1), db, 7);
  CHECK(k == key_check_value(key_of(1), db, 7));
  CHECK(k != key_check_value(key_of(2), db, 7));
  CHECK(k != key_check_value(key_of(1), db, 8));
  CHECK(k != key_check_value(key_of(1), other, 7));
  CHECK(pointer_mac(key_of(1), db, 7, "MANIFEST-000005\n") !=
        pointer_mac(key_of(1), db, 7, "MANIFEST-000006\n"));
  CHECK(pointer_mac(key_of(1), db, 7, "MANIFEST-000005\n") !=
        pointer_mac(key_of(2), db, 7, "MANIFEST-000005\n"));
}

TEST_CASE("SecretKey wipes itself and moves", "[crypto]") {
  SecretKey a;
  CHECK(a.empty());
  a = key_of(5);
  REQUIRE_FALSE(a.empty());
  CHECK(a.data()[0] == 5);
  SecretKey b(std::move(a));
  CHECK(a.empty());
  CHECK(b.data()[31] == 5 + 31);
  b.clear();
  CHECK(b.empty());
}

TEST_CASE("decode_root_key takes 32 bytes or 64 hex digits and never echoes them", "[crypto]") {
  SecretKey k;
  const std::string digits = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F";
  REQUIRE(decode_root_key(digits, "key", &k).ok());
  CHECK(k.data()[0] == 0);
  CHECK(k.data()[31] == 0x1f);
  REQUIRE(decode_root_key(digits + "\n", "key", &k).ok());
  REQUIRE(decode_root_key(std::string(32, '\x7f'), "key", &k).ok());
  CHECK(k.data()[10] == 0x7f);

  std::string bad = digits;
  bad[40] = 'g';
  Status s = decode_root_key(bad, "key file x", &k);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find("position 40") != std::string::npos);
  CHECK(s.message().find("key file x") != std::string::npos);
  CHECK(s.message().find("0a0b0c") == std::string::npos);
  for (size_t n : {0, 31, 33, 63, 66}) {
    Status t = decode_root_key(std::string(n, 'a'), "key", &k);
    CHECK(t.code() == Code::InvalidArgument);
    CHECK(t.message().find(std::to_string(n) + " bytes") != std::string::npos);
  }
}

TEST_CASE("SoftwareKeyManager: active and decrypt-only keys, rotation, errors", "[crypto]") {
  const std::string k1(64, '1'), k2(64, '2');
  auto m = SoftwareKeyManager::from_hex(k1);
  REQUIRE(m.ok());
  SoftwareKeyManager& km = **m;
  CHECK(km.active_key_id() == 1);
  CHECK(km.key_state(1) == KeyState::Active);
  CHECK(km.key_state(2) == KeyState::Unknown);

  REQUIRE(km.add_key(2, k2).ok());
  CHECK(km.key_state(2) == KeyState::DecryptOnly);
  REQUIRE(km.set_active_key_id(2).ok());
  CHECK(km.active_key_id() == 2);
  CHECK(km.key_state(1) == KeyState::DecryptOnly);
  CHECK(km.key_state(2) == KeyState::Active);

  SecretKey got;
  REQUIRE(km.root_key(1, &got).ok());
  CHECK(got.data()[0] == 0x11);
  Status unknown = km.root_key(3, &got);
  CHECK(unknown.code() == Code::Encryption);
  CHECK(unknown.encryption_error() == EncryptionError::UnknownKeyId);
  CHECK(km.set_active_key_id(3).encryption_error() == EncryptionError::UnknownKeyId);
  CHECK(km.remove_key(2).code() == Code::InvalidArgument);  // the active key
  REQUIRE(km.remove_key(1).ok());
  CHECK(km.key_state(1) == KeyState::Unknown);
  CHECK(km.add_key(0, k1).code() == Code::InvalidArgument);
  CHECK(km.add_key(4, "short").code() == Code::InvalidArgument);
  CHECK(km.prepare({1, 2}).ok());

  CHECK(SoftwareKeyManager::from_hex("abc").status().code() == Code::InvalidArgument);
  CHECK(SoftwareKeyManager::from_hex(std::string(64, 'z')).status().code() ==
        Code::InvalidArgument);
  CHECK(SoftwareKeyManager::from_bytes(std::string(31, 'a')).status().code() ==
        Code::InvalidArgument);
  auto raw = SoftwareKeyManager::from_bytes(std::string(32, '\0'), 9);
  REQUIRE(raw.ok());
  CHECK((*raw)->active_key_id() == 9);
}

namespace {

std::shared_ptr<SoftwareKeyManager> manager(uint8_t fill, uint32_t id = 1) {
  auto m = SoftwareKeyManager::from_bytes(std::string(32, static_cast<char>(fill)), id);
  REQUIRE(m.ok());
  return *m;
}

// A manager whose active key is decrypt-only.
class RetiredActive final : public KeyManager {
 public:
  uint32_t active_key_id() const override { return 1; }
  KeyState key_state(uint32_t id) const override {
    return id == 1 ? KeyState::DecryptOnly : KeyState::Unknown;
  }
  Status root_key(uint32_t id, SecretKey* out) const override { return inner->root_key(id, out); }
  std::shared_ptr<SoftwareKeyManager> inner = manager(3);
};

}  // namespace

TEST_CASE("a keyring seals new files and opens them from their headers only", "[crypto]") {
  const DatabaseId db = envelope().db_id;
  Keyring ring(manager(1), CipherSuite::XChaCha20Poly1305, db);
  REQUIRE(ring.prepare({}).ok());
  auto sealing = ring.for_new_file(FileKind::Wal, 5, "db/000005.wal");
  REQUIRE(sealing.ok());
  auto again = ring.for_new_file(FileKind::Wal, 5, "db/000005.wal");
  REQUIRE(again.ok());
  CHECK((*sealing)->envelope().salt != (*again)->envelope().salt);  // a fresh salt each time

  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 5;
  fill_header((*sealing)->envelope(), &h);
  std::string encoded;
  encode_file_header(h, &encoded);
  auto decoded = decode_file_header(encoded, FileKind::Wal, "db/000005.wal");
  REQUIRE(decoded.ok());
  CHECK(decoded->db_id == db);
  CHECK(decoded->key_id == 1);

  std::string sealed, out;
  (*sealing)->seal(64, "record", &sealed);
  auto opening = ring.for_existing_file(*decoded, "db/000005.wal");
  REQUIRE(opening.ok());
  REQUIRE((*opening)->open(64, sealed, &out).ok());
  CHECK(out == "record");
  // The same file under the other salt (a replay of an older file of that number) opens nothing.
  FileHeader older = *decoded;
  fill_header((*again)->envelope(), &older);
  CHECK((*ring.for_existing_file(older, "x"))->open(64, sealed, &out).code() == Code::Corruption);

  auto error_of = [](Result<std::shared_ptr<const FileCipher>> r) {
    REQUIRE_FALSE(r.ok());
    return r.status();
  };
  Keyring wrong(manager(2), CipherSuite::XChaCha20Poly1305, db);
  CHECK(error_of(wrong.for_existing_file(*decoded, "f")).encryption_error() ==
        EncryptionError::WrongKey);
  Keyring other_id(manager(1, 2), CipherSuite::XChaCha20Poly1305, db);
  Status unknown = error_of(other_id.for_existing_file(*decoded, "db/000005.wal"));
  CHECK(unknown.encryption_error() == EncryptionError::UnknownKeyId);
  CHECK(unknown.message().find("db/000005.wal") != std::string::npos);
  DatabaseId elsewhere = db;
  elsewhere[0] ^= 0xff;
  Keyring other_db(manager(1), CipherSuite::XChaCha20Poly1305, elsewhere);
  CHECK(error_of(other_db.for_existing_file(*decoded, "f")).code() == Code::Corruption);
  FileHeader plain = *decoded;
  plain.cipher = 0;
  CHECK(error_of(ring.for_existing_file(plain, "f")).code() == Code::Corruption);
  FileHeader odd = *decoded;
  odd.cipher = 9;
  CHECK(error_of(ring.for_existing_file(odd, "f")).code() == Code::Corruption);

  CHECK(error_of(cipher_for_header(nullptr, *decoded, "f")).encryption_error() ==
        EncryptionError::NotConfigured);
  auto none = cipher_for_header(nullptr, plain, "f");
  REQUIRE(none.ok());
  CHECK(*none == nullptr);

  Keyring retired(std::make_shared<RetiredActive>(), CipherSuite::XChaCha20Poly1305, db);
  CHECK(error_of(retired.for_new_file(FileKind::Table, 9, "f")).encryption_error() ==
        EncryptionError::KeyRetired);
}
