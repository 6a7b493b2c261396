// Encryption at rest: the ciphers a database can be sealed with, the keys it is sealed under, and
// the key managers that hold them (docs/encryption.md).
//
// A KeyManager holds root keys by a 32-bit key id (ids start at 1). A root key never seals data
// itself: each file gets a key of its own, derived from the root key, a random salt and the file's
// identity. The database records which key id and cipher each file was written with, so a manager
// that holds an older key as DecryptOnly keeps the files written under it readable while new files
// are written under the active key.
//
// Thread safety: KeyManager implementations must be safe to call from several threads at once.
// SoftwareKeyManager is (its calls take a lock). SecretKey is a value owned by one thread.

#ifndef SKV_ENCRYPTION_H_
#define SKV_ENCRYPTION_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "skv/status.h"

namespace skv {

// The AEAD a database is sealed with. The value is stored in every file header.
enum class CipherSuite : uint8_t {
  // XChaCha20-Poly1305 (IETF): runs everywhere skv runs, natively and in the browser.
  XChaCha20Poly1305 = 1,
  // AES-256-GCM: natively on x86-64 CPUs with AES-NI and PCLMUL only. A database sealed with it
  // cannot be opened in the browser or where the CPU lacks them (refused by name, never garbled).
  Aes256Gcm = 2,
};

// A choice left to skv. Auto takes XChaCha20-Poly1305, which opens on every platform.
enum class CipherPreference : uint8_t { Auto = 0 };

// Stable lower-case name of a cipher ("xchacha20-poly1305", "aes-256-gcm").
const char* cipher_name(CipherSuite suite);

// Whether this build and this CPU can seal and open with `suite`.
bool cipher_available(CipherSuite suite);

// Whether this build has encryption compiled in (CMake option SKV_ENCRYPTION, on by default).
bool encryption_compiled();

// The size of a root key, in bytes.
constexpr size_t kRootKeySize = 32;

// A 32-byte key in memory that is wiped when released, and locked in memory (kept out of swap)
// where the platform allows it. Never printed: it has no conversion to text.
class SecretKey {
 public:
  SecretKey();
  ~SecretKey();
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;
  SecretKey(SecretKey&& other) noexcept;
  SecretKey& operator=(SecretKey&& other) noexcept;

  // Copies kRootKeySize bytes from `bytes`.
  void assign(const uint8_t* bytes);
  // REQUIRES: the key was assigned.
  const uint8_t* data() const { return bytes_; }
  bool empty() const { return !set_; }
  // Wipes the bytes; the key is empty afterwards.
  void clear();

 private:
  uint8_t* bytes_ = nullptr;  // kRootKeySize bytes from a locked, guarded allocation
  bool set_ = false;
};

// What a key manager says about a key id.
enum class KeyState : uint8_t {
  Active,       // may seal new files and open old ones
  DecryptOnly,  // opens files written under it; never seals new ones
  Unknown,      // not held
};

// The source of root keys. skv asks it for every key id the database's files name when it opens
// the database (prepare), then only from memory: sealing a new file asks for the active key.
class KeyManager {
 public:
  virtual ~KeyManager() = default;

  // The key id new files are sealed under.
  virtual uint32_t active_key_id() const = 0;
  virtual KeyState key_state(uint32_t key_id) const = 0;
  // Copies the root key of `key_id` into *out. Encryption/UnknownKeyId if the manager does not
  // hold it. Never puts key bytes in the message.
  virtual Status root_key(uint32_t key_id, SecretKey* out) const = 0;
  // Called when a database opens, with every key id its files name (and the active one): a
  // manager that fetches keys from elsewhere loads them here, so the commit path only asks from
  // memory. The default does nothing.
  virtual Status prepare(const std::vector<uint32_t>& key_ids);
};

// A key manager that holds its root keys in memory (wiped when it is destroyed).
class SoftwareKeyManager final : public KeyManager {
 public:
  SoftwareKeyManager() = default;

  // A manager holding one key, Active, from 64 hex digits (either case). InvalidArgument (the
  // message never repeats the digits) for any other text, and for a key id of 0.
  static Result<std::shared_ptr<SoftwareKeyManager>> from_hex(std::string_view hex,
                                                              uint32_t key_id = 1);
  // The same from 32 raw bytes.
  static Result<std::shared_ptr<SoftwareKeyManager>> from_bytes(std::string_view bytes,
                                                                uint32_t key_id = 1);
  // A manager holding one key, Active, read from a key file: exactly 32 raw bytes, or 64 hex
  // digits with an optional trailing newline. Natively only (defined by skv::native): on POSIX a
  // file that its group or others may read is refused with InvalidArgument, and so is anything
  // but a regular file. NotFound if there is no such file.
  static Result<std::shared_ptr<SoftwareKeyManager>> from_key_file(const std::string& path,
                                                                   uint32_t key_id = 1);

  // Adds (or replaces) a key, DecryptOnly unless it becomes the active one. `key` is 32 raw
  // bytes or 64 hex digits. The first key added becomes the active one.
  Status add_key(uint32_t key_id, std::string_view key);
  // Makes a held key the active one (the previous one stays, DecryptOnly). UnknownKeyId if the
  // key is not held.
  Status set_active_key_id(uint32_t key_id);
  // Forgets a key and wipes it. InvalidArgument for the active key.
  Status remove_key(uint32_t key_id);

  uint32_t active_key_id() const override;
  KeyState key_state(uint32_t key_id) const override;
  Status root_key(uint32_t key_id, SecretKey* out) const override;

 private:
  mutable std::mutex mu_;
  std::map<uint32_t, SecretKey> keys_;
  uint32_t active_ = 0;
};

// Decodes a key given as text or bytes: exactly 32 raw bytes, or 64 hex digits (either case)
// with at most one trailing newline. InvalidArgument naming `what` otherwise (never the bytes).
Status decode_root_key(std::string_view text, std::string_view what, SecretKey* out);

}  // namespace skv

#endif  // SKV_ENCRYPTION_H_
