// The sealed files of encrypted_fuzz: a fixed keyring and the plaintexts the corpus generator
// seals (a WAL segment, a manifest, a value log, tables), shared by make_corpus.cpp, which writes
// them, and encrypted_fuzz.cpp, whose oracle is that a reader hands out only these plaintexts.
// Deterministic: a fixed root key, database id and per-file salt (the engine draws salts at
// random; a fixed one only makes the corpus reproducible).
//
// Thread safety: single-threaded, like the fuzz targets.

#ifndef SKV_TESTS_FUZZ_SEALED_FILES_H_
#define SKV_TESTS_FUZZ_SEALED_FILES_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crypto/cipher_source.h"
#include "crypto/file_cipher.h"
#include "format/internal_key.h"
#include "skv/encryption.h"

namespace skv::fuzz {

constexpr uint64_t kSealedWalNumber = 7;
constexpr uint64_t kSealedManifestNumber = 3;
constexpr uint64_t kSealedVlogNumber = 9;
constexpr uint64_t kSealedTableNumber = 42;

inline const std::string& sealed_root_key() {
  static const std::string key(32, '\x5c');
  return key;
}

inline crypto::DatabaseId sealed_db_id() {
  crypto::DatabaseId id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(0xa0 + i);
  return id;
}

// The keyring readers get: key 1 = sealed_root_key(), XChaCha20-Poly1305, sealed_db_id().
inline crypto::Keyring* sealed_keyring() {
  static crypto::Keyring* ring = [] {
    auto keys = SoftwareKeyManager::from_bytes(sealed_root_key(), 1);
    if (!keys.ok()) std::abort();
    auto* r = new crypto::Keyring(*keys, CipherSuite::XChaCha20Poly1305, sealed_db_id());
    if (!r->prepare({1}).ok()) std::abort();
    return r;
  }();
  return ring;
}

// A writer's cipher for file `number` of `kind`, under a salt fixed by kind and number.
inline std::shared_ptr<const crypto::FileCipher> sealed_cipher(FileKind kind, uint64_t number) {
  SecretKey root;
  root.assign(reinterpret_cast<const uint8_t*>(sealed_root_key().data()));
  crypto::Envelope e;
  e.suite = CipherSuite::XChaCha20Poly1305;
  e.key_id = 1;
  e.db_id = sealed_db_id();
  for (size_t i = 0; i < e.salt.size(); ++i) {
    e.salt[i] = static_cast<uint8_t>(number * 31 + static_cast<uint64_t>(kind) * 7 + i);
  }
  e.key_check = crypto::key_check_value(root, e.db_id, e.key_id);
  auto c = crypto::FileCipher::create(e, kind, number, root, "sealed");
  if (!c.ok()) std::abort();
  return *c;
}

inline std::string sealed_key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "skey%05d", i);
  return buf;
}

inline std::string sealed_value(int i) {
  return std::string(static_cast<size_t>(3 + (i * 37) % 300), static_cast<char>('a' + i % 26));
}

// The payloads of the sealed WAL segment and manifest (the reader returns them opened).
inline std::vector<std::string> sealed_log_records(FileKind kind) {
  std::vector<std::string> out;
  const int n = kind == FileKind::Wal ? 12 : 5;
  for (int i = 0; i < n; ++i) {
    out.push_back((kind == FileKind::Wal ? "wal-record-" : "manifest-record-") + std::to_string(i) +
                  ":" + sealed_value(i));
  }
  return out;
}

// The entries of the sealed value log.
inline std::vector<std::pair<std::string, std::string>> sealed_vlog_entries() {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < 20; ++i) out.emplace_back(sealed_key(i), sealed_value(i));
  return out;
}

// The entries (internal key, value) of the sealed tables, in order.
inline std::vector<std::pair<std::string, std::string>> sealed_table_entries() {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < 80; ++i) {
    out.emplace_back(make_internal_key(sealed_key(i), static_cast<SequenceNumber>(1000 - i),
                                       ValueKind::Value, 5000 + static_cast<uint64_t>(i)),
                     sealed_value(i));
  }
  return out;
}

}  // namespace skv::fuzz

#endif  // SKV_TESTS_FUZZ_SEALED_FILES_H_
