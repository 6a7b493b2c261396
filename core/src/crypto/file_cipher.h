// FileCipher: seals and opens the units of one file (docs/encryption.md, "Sealed units").
//
// Every encrypted file names, in its plaintext header, the cipher, the key id, a random salt
// drawn when the file was created, the database id and a key check value. Its key is derived
// from the root key of that key id and all of those:
//
//   file_key  = BLAKE2b-256(key = root, "skv file key v1" | db_id | kind | file_number |
//                           key_id | cipher | salt)
//
// and each unit (a table block, a log record, a value log entry) is sealed with
//
//   nonce = position (fixed64, zero-padded to the cipher's nonce size)
//   ad    = "skv unit v1" | format_version | db_id | kind | file_number | key_id | cipher |
//           position
//
// where `position` is the unit's offset in the file. A file is appended only by the writer that
// created it, never at an offset twice, and the salt makes its key unlike any other file's, so
// no (key, nonce) pair seals two plaintexts. A unit opened at another position, in another file,
// kind or database, or under another key, fails authentication.
//
// Thread safety: immutable after creation; seal and open may run on several threads at once.

#ifndef SKV_CRYPTO_FILE_CIPHER_H_
#define SKV_CRYPTO_FILE_CIPHER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "format/file_header.h"
#include "skv/encryption.h"
#include "skv/status.h"

namespace skv::crypto {

using DatabaseId = std::array<uint8_t, 16>;

// What a file header records about how the file is sealed.
struct Envelope {
  CipherSuite suite = CipherSuite::XChaCha20Poly1305;
  uint32_t key_id = 0;
  std::array<uint8_t, 16> salt{};
  DatabaseId db_id{};
  uint32_t key_check = 0;
};

// The key check value of a root key for one database: 4 bytes of a keyed hash, stored in every
// file header, so a wrong key is told apart from damaged data before any unit is opened.
uint32_t key_check_value(const SecretKey& root, const DatabaseId& db_id, uint32_t key_id);

// A 32-byte MAC, under a key derived from `root`, of `message` for database `db_id` (the content
// of CURRENT is authenticated with it).
std::array<uint8_t, 32> pointer_mac(const SecretKey& root, const DatabaseId& db_id, uint32_t key_id,
                                    std::string_view message);

class FileCipher {
 public:
  // Bytes sealing adds to a unit.
  static constexpr size_t kOverhead = kTagSize;

  // The cipher of file `number` of kind `kind`, sealed as `envelope` says under `root` (the root
  // key of envelope.key_id). `label` names the file in errors. NotSupported (by name) if the
  // cipher cannot run here.
  static Result<std::shared_ptr<const FileCipher>> create(const Envelope& envelope, FileKind kind,
                                                          uint64_t number, const SecretKey& root,
                                                          std::string label);

  // Appends the sealed form of `plaintext` (plaintext.size() + kOverhead bytes) to *out.
  void seal(uint64_t position, std::string_view plaintext, std::string* out) const;
  // Opens a sealed unit into *out (replacing its contents). Corruption naming the file and the
  // position if it fails authentication: never returns data that was not sealed there.
  Status open(uint64_t position, std::string_view sealed, std::string* out) const;
  // Opens the sealed unit of `size` bytes at `data` where it lies; on success its first
  // size - kOverhead bytes are the plaintext. The same Corruption as open() otherwise, with the
  // bytes left unspecified: `data` must be the caller's scratch copy.
  Status open_in_place(uint64_t position, char* data, size_t size) const;

  const Envelope& envelope() const { return envelope_; }
  const std::string& label() const { return label_; }

  FileCipher(const FileCipher&) = delete;
  FileCipher& operator=(const FileCipher&) = delete;
  ~FileCipher();

 private:
  FileCipher() = default;
  // The associated data of the unit at `position`, written into `out` (kMaxAdSize bytes); returns
  // its length.
  size_t ad(uint64_t position, char* out) const;
  static constexpr size_t kMaxAdSize = 64;

  Envelope envelope_;
  FileKind kind_ = FileKind::Wal;
  uint64_t number_ = 0;
  SecretKey key_;
  std::string ad_prefix_;  // every field of the associated data but the position
  std::string label_;
};

}  // namespace skv::crypto

#endif  // SKV_CRYPTO_FILE_CIPHER_H_
