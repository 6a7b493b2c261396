// The primitives under encryption at rest (docs/encryption.md), over libsodium: the two AEADs
// with a counter nonce, keyed BLAKE2b for key derivation and MACs, and random bytes. In a build
// without encryption (SKV_ENCRYPTION=OFF) every call that needs libsodium fails with
// NotSupported and nothing links it.
//
// Thread safety: pure functions (init() runs once, guarded).

#ifndef SKV_CRYPTO_AEAD_H_
#define SKV_CRYPTO_AEAD_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "skv/encryption.h"
#include "skv/status.h"

namespace skv::crypto {

// Bytes an AEAD adds to what it seals (the Poly1305 or GCM tag).
constexpr size_t kTagSize = 16;

// Initialises libsodium once. NotSupported in a build without encryption.
Status init();

// Appends ciphertext || tag of `plaintext` to *out, sealed under `key` (32 bytes) with the nonce
// `counter` (little-endian, zero-padded to the cipher's nonce size) and associated data `ad`.
// REQUIRES: init() succeeded and cipher_available(suite). The caller guarantees that (key,
// counter) never seals two different plaintexts.
void seal(CipherSuite suite, const uint8_t* key, uint64_t counter, std::string_view ad,
          std::string_view plaintext, std::string* out);

// Opens what seal() made into *out (replacing its contents). False, with *out emptied, if the
// bytes, the key, the counter or the associated data differ from the sealing.
bool open(CipherSuite suite, const uint8_t* key, uint64_t counter, std::string_view ad,
          std::string_view sealed, std::string* out);

// Opens the `size` sealed bytes at `data` where they lie: on success the first size - kTagSize
// bytes are the plaintext. False if authentication fails or the unit is shorter than a tag; the
// bytes are then unspecified (libsodium zero-fills them), so `data` must be a scratch buffer.
bool open_in_place(CipherSuite suite, const uint8_t* key, uint64_t counter, std::string_view ad,
                   char* data, size_t size);

// Keyed BLAKE2b over the concatenation of `parts`: `out_len` (16 to 64) bytes into `out`.
// REQUIRES: init() succeeded.
void keyed_hash(uint8_t* out, size_t out_len, const uint8_t* key,
                std::initializer_list<std::string_view> parts);

// Fills `out` with bytes from the system's secure generator (crypto.getRandomValues in the
// browser). REQUIRES: init() succeeded.
void random_bytes(void* out, size_t n);

// Wipes `n` bytes at `p` in a way the compiler does not remove.
void wipe(void* p, size_t n);

}  // namespace skv::crypto

#endif  // SKV_CRYPTO_AEAD_H_
