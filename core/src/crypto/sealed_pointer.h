// The authenticated content of CURRENT in an encrypted database (docs/encryption.md).
//
//   CURRENT := manifest_line                                   a plaintext database
//            | manifest_line seal_line                         an encrypted one
//   manifest_line := "MANIFEST-" number "\n"
//   seal_line     := "sealed v1 cipher=" id " key=" key_id " db=" hex32 " mac=" hex64 "\n"
//
// The MAC (crypto::pointer_mac, under the root key of key_id) covers manifest_line and the seal
// line up to " mac=", so neither the manifest it names nor the envelope can change without the
// key. The seal line also tells an opener, before it reads any other file, that the database is
// encrypted, with which cipher, and its id.
//
// Thread safety: pure functions (the Keyring is thread-safe).

#ifndef SKV_CRYPTO_SEALED_POINTER_H_
#define SKV_CRYPTO_SEALED_POINTER_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "crypto/cipher_source.h"
#include "skv/status.h"

namespace skv::crypto {

struct PointerSeal {
  CipherSuite suite = CipherSuite::XChaCha20Poly1305;
  uint32_t key_id = 0;
  DatabaseId db_id{};
  std::array<uint8_t, 32> mac{};
};

// Splits CURRENT's contents into its first line (newline included) and the seal of its second
// line, if there is one. Corruption naming `label` for a second line that is not a well-formed
// seal line, or for anything after it.
Status split_pointer(std::string_view contents, const std::string& label,
                     std::string_view* first_line, std::optional<PointerSeal>* seal);

// The contents of CURRENT naming `first_line`, sealed under the keyring's active key.
Result<std::string> seal_pointer(Keyring& ring, std::string_view first_line);

// Checks a seal against the keyring: the same database and cipher (Corruption otherwise), a key
// the manager holds (UnknownKeyId), and the MAC (Corruption: "fails authentication").
Status verify_pointer(Keyring& ring, std::string_view first_line, const PointerSeal& seal,
                      const std::string& label);

}  // namespace skv::crypto

#endif  // SKV_CRYPTO_SEALED_POINTER_H_
