#include "crypto/aead.h"

#include <cstring>
#include <mutex>

#if SKV_ENCRYPTION
#include <sodium.h>
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
