#include "crypto/aead.h"

#include <cstring>
#include <mutex>

#if SKV_ENCRYPTION
#include <sodium.h>
#endif
#if SKV_OPENSSL
#include <openssl/evp.h>

#include <climits>
#endif

namespace skv {

const char* cipher_name(CipherSuite suite) {
  switch (suite) {
    case CipherSuite::XChaCha20Poly1305:
      return "xchacha20-poly1305";
    case CipherSuite::Aes256Gcm:
      return "aes-256-gcm";
  }
  return "unknown";
}

bool encryption_compiled() { return SKV_ENCRYPTION != 0; }

bool cipher_available(CipherSuite suite) {
#if SKV_ENCRYPTION
  if (!crypto::init().ok()) return false;
  switch (suite) {
    case CipherSuite::XChaCha20Poly1305:
      return true;
    case CipherSuite::Aes256Gcm:
      return crypto_aead_aes256gcm_is_available() == 1;
  }
#else
  (void)suite;
#endif
  return false;
}

namespace crypto {

namespace {

#if SKV_ENCRYPTION
// The nonce of `counter` for a cipher whose nonces are `size` bytes: the counter little-endian,
// then zeros.
void make_nonce(uint64_t counter, uint8_t* nonce, size_t size) {
  std::memset(nonce, 0, size);
  for (int i = 0; i < 8; ++i) nonce[i] = static_cast<uint8_t>(counter >> (8 * i));
}

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
#endif

#if SKV_OPENSSL
// Sealing and opening through OpenSSL's libcrypto (docs/encryption.md, "Implementations"). The
// constructions are libsodium's, so the bytes are the same whichever library made them:
// AES-256-GCM with a 12-byte nonce, and XChaCha20-Poly1305 as libsodium defines it, the IETF
// ChaCha20-Poly1305 under the subkey HChaCha20(key, nonce[0..16)) with the nonce
// 0x00000000 ‖ nonce[16..24).

// Below this many bytes libsodium is faster: OpenSSL's fixed cost per unit (keying a context, and
// re-keying it with zeros afterwards) is 0.7-1 µs, against 0.4-0.7 µs for all of a 512-byte
// unit in libsodium. Measured on x86-64 with AVX-512 (docs/benchmarks.md, "Encryption at rest").
constexpr size_t kOpenSslFrom = 2048;

// The cipher of `suite`, fetched once: OpenSSL 3 would otherwise look it up in its provider on
// every initialisation, which costs more than sealing a small record.
const EVP_CIPHER* evp_cipher(CipherSuite suite) {
  static EVP_CIPHER* const aes = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  static EVP_CIPHER* const chacha = EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr);
  return suite == CipherSuite::Aes256Gcm ? aes : chacha;
}

// A thread's context for one cipher and direction, set up once. A call keys it, and afterwards
// re-keys it with zeros (wipe_ctx), so no key schedule outlives the call that needed it.
EVP_CIPHER_CTX* thread_ctx(CipherSuite suite, bool encrypt) {
  struct Contexts {
    EVP_CIPHER_CTX* ctx[2][2] = {};  // [AES-256-GCM][encrypt]
    ~Contexts() {
      for (auto& row : ctx) {
        for (EVP_CIPHER_CTX* c : row) EVP_CIPHER_CTX_free(c);
      }
    }
  };
  thread_local Contexts t;
  EVP_CIPHER_CTX*& c = t.ctx[suite == CipherSuite::Aes256Gcm ? 1 : 0][encrypt ? 1 : 0];
  if (c == nullptr) {
    const EVP_CIPHER* cipher = evp_cipher(suite);
    EVP_CIPHER_CTX* made = cipher != nullptr ? EVP_CIPHER_CTX_new() : nullptr;
    if (made == nullptr ||
        EVP_CipherInit_ex(made, cipher, nullptr, nullptr, nullptr, encrypt ? 1 : 0) != 1) {
      EVP_CIPHER_CTX_free(made);
      return nullptr;
    }
    c = made;
  }
  return c;
}

void wipe_ctx(EVP_CIPHER_CTX* ctx, bool encrypt) {
  static const uint8_t kZeroKey[32] = {};
  EVP_CipherInit_ex(ctx, nullptr, nullptr, kZeroKey, nullptr, encrypt ? 1 : 0);
}

// The key and 12-byte nonce OpenSSL runs for `suite` under (key, counter). For XChaCha the
// subkey is written to `subkey`, which the caller wipes.
const uint8_t* evp_key_and_nonce(CipherSuite suite, const uint8_t* key, uint64_t counter,
                                 uint8_t subkey[32], uint8_t nonce12[12]) {
  if (suite == CipherSuite::Aes256Gcm) {
    make_nonce(counter, nonce12, 12);
    return key;
  }
  uint8_t nonce24[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
  make_nonce(counter, nonce24, sizeof(nonce24));
  crypto_core_hchacha20(subkey, nonce24, key, nullptr);
  std::memset(nonce12, 0, 4);
  std::memcpy(nonce12 + 4, nonce24 + 16, 8);
  return subkey;
}

// Seals `n` bytes at `in` to `out` (n + kTagSize bytes). False if OpenSSL fails.
// REQUIRES: ctx is thread_ctx(suite, true).
bool evp_seal(EVP_CIPHER_CTX* ctx, CipherSuite suite, const uint8_t* key, uint64_t counter,
              std::string_view ad, const unsigned char* in, size_t n, unsigned char* out) {
  if (n > INT_MAX || ad.size() > INT_MAX) return false;
  uint8_t subkey[32], nonce[12];
  const uint8_t* run_key = evp_key_and_nonce(suite, key, counter, subkey, nonce);
  int len = 0, tail = 0;
  const bool ok =
      EVP_EncryptInit_ex(ctx, nullptr, nullptr, run_key, nonce) == 1 &&
      EVP_EncryptUpdate(ctx, nullptr, &len, bytes(ad), static_cast<int>(ad.size())) == 1 &&
      EVP_EncryptUpdate(ctx, out, &len, in, static_cast<int>(n)) == 1 &&
      EVP_EncryptFinal_ex(ctx, out + len, &tail) == 1 &&
      static_cast<size_t>(len) + static_cast<size_t>(tail) == n &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagSize), out + n) == 1;
  wipe_ctx(ctx, true);
  sodium_memzero(subkey, sizeof(subkey));
  return ok;
}

// Opens the n + kTagSize sealed bytes at `data` in place. On failure the bytes are wiped:
// OpenSSL writes plaintext before it checks the tag, and none of it may outlive the refusal.
// REQUIRES: ctx is thread_ctx(suite, false).
bool evp_open_in_place(EVP_CIPHER_CTX* ctx, CipherSuite suite, const uint8_t* key, uint64_t counter,
                       std::string_view ad, unsigned char* data, size_t n) {
  if (n > INT_MAX || ad.size() > INT_MAX) return false;
  uint8_t subkey[32], nonce[12];
  const uint8_t* run_key = evp_key_and_nonce(suite, key, counter, subkey, nonce);
  uint8_t tag[kTagSize];
  std::memcpy(tag, data + n, kTagSize);
  int len = 0, tail = 0;
  const bool ok =
      EVP_DecryptInit_ex(ctx, nullptr, nullptr, run_key, nonce) == 1 &&
      EVP_DecryptUpdate(ctx, nullptr, &len, bytes(ad), static_cast<int>(ad.size())) == 1 &&
      EVP_DecryptUpdate(ctx, data, &len, data, static_cast<int>(n)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagSize), tag) == 1 &&
      EVP_DecryptFinal_ex(ctx, data + len, &tail) == 1 &&
      static_cast<size_t>(len) + static_cast<size_t>(tail) == n;
  wipe_ctx(ctx, false);
  sodium_memzero(subkey, sizeof(subkey));
  if (!ok) sodium_memzero(data, n + kTagSize);
  return ok;
}
#endif

}  // namespace

Status init() {
#if SKV_ENCRYPTION
  static const int rc = sodium_init();
  if (rc < 0) return Status::io_error("libsodium failed to initialise");
  return Status::OK();
#else
  return Status::not_supported("this build of skv has no encryption (SKV_ENCRYPTION=OFF)");
#endif
}

void seal(CipherSuite suite, const uint8_t* key, uint64_t counter, std::string_view ad,
          std::string_view plaintext, std::string* out) {
#if SKV_ENCRYPTION
  const size_t start = out->size();
  out->resize(start + plaintext.size() + kTagSize);
  auto* dst = reinterpret_cast<unsigned char*>(out->data() + start);
#if SKV_OPENSSL
  if (EVP_CIPHER_CTX* ctx = plaintext.size() >= kOpenSslFrom ? thread_ctx(suite, true) : nullptr;
      ctx != nullptr &&
      evp_seal(ctx, suite, key, counter, ad, bytes(plaintext), plaintext.size(), dst)) {
    return;
  }
  // No context (out of memory) or OpenSSL failed: libsodium below makes the same bytes.
#endif
  unsigned long long written = 0;
  if (suite == CipherSuite::Aes256Gcm) {
    uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES];
    make_nonce(counter, nonce, sizeof(nonce));
    crypto_aead_aes256gcm_encrypt(dst, &written, bytes(plaintext), plaintext.size(), bytes(ad),
                                  ad.size(), nullptr, nonce, key);
  } else {
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    make_nonce(counter, nonce, sizeof(nonce));
    crypto_aead_xchacha20poly1305_ietf_encrypt(dst, &written, bytes(plaintext), plaintext.size(),
                                               bytes(ad), ad.size(), nullptr, nonce, key);
  }
  out->resize(start + static_cast<size_t>(written));
#else
  (void)suite, (void)key, (void)counter, (void)ad, (void)plaintext, (void)out;
#endif
}

bool open(CipherSuite suite, const uint8_t* key, uint64_t counter, std::string_view ad,
          std::string_view sealed, std::string* out) {
  out->assign(sealed.data(), sealed.size());
  if (!open_in_place(suite, key, counter, ad, out->data(), out->size())) {
    out->clear();
    return false;
  }
  out->resize(sealed.size() - kTagSize);
  return true;
}

bool open_in_place(CipherSuite suite, const uint8_t* key, uint64_t counter, std::string_view ad,
                   char* data, size_t size) {
#if SKV_ENCRYPTION
  if (size < kTagSize) return false;
  // Detached: the tag is checked over the ciphertext before a byte of it is overwritten.
  auto* text = reinterpret_cast<unsigned char*>(data);
  const size_t n = size - kTagSize;
#if SKV_OPENSSL
  // Small units, units too large for OpenSSL's int lengths, and any unit when there is no
  // context (out of memory) go to libsodium, so a refusal always means the bytes are bad.
  if (EVP_CIPHER_CTX* ctx = n >= kOpenSslFrom && n <= INT_MAX && ad.size() <= INT_MAX
                                ? thread_ctx(suite, false)
                                : nullptr;
      ctx != nullptr) {
    return evp_open_in_place(ctx, suite, key, counter, ad, text, n);
  }
#endif
  const unsigned char* tag = text + n;
  int rc;
  if (suite == CipherSuite::Aes256Gcm) {
    uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES];
    make_nonce(counter, nonce, sizeof(nonce));
    rc = crypto_aead_aes256gcm_decrypt_detached(text, nullptr, text, n, tag, bytes(ad), ad.size(),
                                                nonce, key);
  } else {
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    make_nonce(counter, nonce, sizeof(nonce));
    rc = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(text, nullptr, text, n, tag, bytes(ad),
                                                             ad.size(), nonce, key);
  }
  return rc == 0;
#else
  (void)suite, (void)key, (void)counter, (void)ad, (void)data, (void)size;
  return false;
#endif
}

void keyed_hash(uint8_t* out, size_t out_len, const uint8_t* key,
                std::initializer_list<std::string_view> parts) {
#if SKV_ENCRYPTION
  crypto_generichash_state state;
  crypto_generichash_init(&state, key, kRootKeySize, out_len);
  for (std::string_view p : parts) crypto_generichash_update(&state, bytes(p), p.size());
  crypto_generichash_final(&state, out, out_len);
  sodium_memzero(&state, sizeof(state));
#else
  (void)key, (void)parts;
  std::memset(out, 0, out_len);
#endif
}

void random_bytes(void* out, size_t n) {
#if SKV_ENCRYPTION
  randombytes_buf(out, n);
#else
  std::memset(out, 0, n);
#endif
}

void wipe(void* p, size_t n) {
#if SKV_ENCRYPTION
  sodium_memzero(p, n);
#else
  volatile unsigned char* v = static_cast<volatile unsigned char*>(p);
  while (n-- > 0) *v++ = 0;
#endif
}

}  // namespace crypto
}  // namespace skv
