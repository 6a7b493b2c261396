// CipherSource: where the file formats get the FileCipher of a file (docs/encryption.md). The
// tree holds one for an encrypted database (a Keyring) and none for a plaintext one; writers ask
// it for a new file's cipher, readers for the cipher a file's header names.
//
// Thread safety: implementations are safe to call from several threads at once.

#ifndef SKV_CRYPTO_CIPHER_SOURCE_H_
#define SKV_CRYPTO_CIPHER_SOURCE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crypto/file_cipher.h"
#include "format/file_header.h"
#include "skv/encryption.h"
#include "skv/status.h"

namespace skv::crypto {

class CipherSource {
 public:
  virtual ~CipherSource() = default;

  // The cipher of a new file: the active key, a fresh random salt. Its envelope() fills the
  // file's header (fill_header). Encryption/KeyRetired if the active key may not seal.
  virtual Result<std::shared_ptr<const FileCipher>> for_new_file(FileKind kind, uint64_t number,
                                                                 std::string label) = 0;
  // The cipher of an existing file from its decoded header. Errors, by name, before any unit is
  // opened: Corruption if the header is plaintext, or names another database; UnknownKeyId or
  // KeyRetired for a key id the manager cannot open; WrongKey if the key check value differs;
  // NotSupported for a cipher this build or CPU cannot run.
  virtual Result<std::shared_ptr<const FileCipher>> for_existing_file(const FileHeader& header,
                                                                      std::string label) = 0;
};

// Copies a cipher's envelope into a header (kind and number stay the caller's).
void fill_header(const Envelope& envelope, FileHeader* header);

// For readers of a database that may be plaintext: the cipher of a file whose header was just
// decoded. With no source a sealed header is Encryption/NotConfigured; with a source a plaintext
// header is Corruption (every file of an encrypted database is sealed). Null when the file is
// plaintext and the database is too.
Result<std::shared_ptr<const FileCipher>> cipher_for_header(CipherSource* source,
                                                            const FileHeader& header,
                                                            const std::string& label);

// The CipherSource of one encrypted database: its id and cipher, and a key manager.
class Keyring final : public CipherSource {
 public:
  Keyring(std::shared_ptr<KeyManager> keys, CipherSuite suite, const DatabaseId& db_id);

  // Loads every key id in `key_ids` and the active one through KeyManager::prepare and
  // root_key, so later calls answer from memory. Errors as for_existing_file.
  Status prepare(std::vector<uint32_t> key_ids);

  Result<std::shared_ptr<const FileCipher>> for_new_file(FileKind kind, uint64_t number,
                                                         std::string label) override;
  Result<std::shared_ptr<const FileCipher>> for_existing_file(const FileHeader& header,
                                                              std::string label) override;

  CipherSuite suite() const { return suite_; }
  const DatabaseId& db_id() const { return db_id_; }
  KeyManager& keys() const { return *keys_; }
  // The key id new files are sealed under.
  uint32_t active_key_id() const { return keys_->active_key_id(); }
  // The root key of `key_id`, from memory once prepared. Errors as for_existing_file.
  Status root_key(uint32_t key_id, SecretKey* out);

 private:
  Status load(uint32_t key_id, std::string_view label);

  const std::shared_ptr<KeyManager> keys_;
  const CipherSuite suite_;
  const DatabaseId db_id_;
  std::mutex mu_;
  std::map<uint32_t, SecretKey> roots_;  // key id -> root key, as loaded
};

}  // namespace skv::crypto

#endif  // SKV_CRYPTO_CIPHER_SOURCE_H_
