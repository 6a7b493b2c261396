// SecretKey, KeyManager's default and SoftwareKeyManager (skv/encryption.h).

#include <cstdlib>
#include <cstring>
#include <utility>

#include "crypto/aead.h"
#include "skv/encryption.h"
#include "util/status_macros.h"

#if SKV_ENCRYPTION
#include <sodium.h>
#endif

namespace skv {

namespace {

uint8_t* allocate_key() {
#if SKV_ENCRYPTION
  // sodium_malloc locks the pages (natively) and guards them; sodium_free wipes them. Where
  // locking is not available (the browser) it still allocates: hygiene is best effort.
  if (crypto::init().ok()) {
    if (void* p = sodium_malloc(kRootKeySize)) return static_cast<uint8_t*>(p);
  }
#endif
  return static_cast<uint8_t*>(std::calloc(1, kRootKeySize));
}

void free_key(uint8_t* p) {
  if (p == nullptr) return;
  crypto::wipe(p, kRootKeySize);
#if SKV_ENCRYPTION
  if (crypto::init().ok()) {
    sodium_free(p);
    return;
  }
#endif
  std::free(p);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

SecretKey::SecretKey() = default;

SecretKey::~SecretKey() { free_key(bytes_); }

SecretKey::SecretKey(SecretKey&& other) noexcept
    : bytes_(std::exchange(other.bytes_, nullptr)), set_(std::exchange(other.set_, false)) {}

SecretKey& SecretKey::operator=(SecretKey&& other) noexcept {
  if (this != &other) {
    free_key(bytes_);
    bytes_ = std::exchange(other.bytes_, nullptr);
    set_ = std::exchange(other.set_, false);
  }
  return *this;
}

void SecretKey::assign(const uint8_t* bytes) {
  if (bytes_ == nullptr) bytes_ = allocate_key();
  std::memcpy(bytes_, bytes, kRootKeySize);
  set_ = true;
}

void SecretKey::clear() {
  if (bytes_ != nullptr) crypto::wipe(bytes_, kRootKeySize);
  set_ = false;
}

Status decode_root_key(std::string_view text, std::string_view what, SecretKey* out) {
  if (text.size() == kRootKeySize) {
    out->assign(reinterpret_cast<const uint8_t*>(text.data()));
    return Status::OK();
  }
  std::string_view hex = text;
  if (!hex.empty() && hex.back() == '\n') hex.remove_suffix(1);
  if (hex.size() != 2 * kRootKeySize) {
    return Status::invalid_argument(std::string(what) + " must be 32 bytes or 64 hex digits, not " +
                                    std::to_string(text.size()) + " bytes");
  }
  uint8_t bytes[kRootKeySize];
  for (size_t i = 0; i < kRootKeySize; ++i) {
    const int hi = hex_digit(hex[2 * i]);
    const int lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      crypto::wipe(bytes, sizeof(bytes));
      return Status::invalid_argument(std::string(what) +
                                      " holds a character that is not a hex digit at position " +
                                      std::to_string(hi < 0 ? 2 * i : 2 * i + 1));
    }
    bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  out->assign(bytes);
  crypto::wipe(bytes, sizeof(bytes));
  return Status::OK();
}

Status KeyManager::prepare(const std::vector<uint32_t>& /*key_ids*/) { return Status::OK(); }

namespace {

Status check_key_id(uint32_t key_id) {
  if (key_id == 0) return Status::invalid_argument("key id 0 is reserved: key ids start at 1");
  return Status::OK();
}

Status unknown_key(uint32_t key_id) {
  return Status::encryption(EncryptionError::UnknownKeyId,
                            "the key manager holds no key with id " + std::to_string(key_id));
}

}  // namespace

Result<std::shared_ptr<SoftwareKeyManager>> SoftwareKeyManager::from_hex(std::string_view hex,
                                                                         uint32_t key_id) {
  std::string_view digits = hex;
  if (!digits.empty() && digits.back() == '\n') digits.remove_suffix(1);
  if (digits.size() != 2 * kRootKeySize) {
    return Status::invalid_argument("a hex key must be 64 hex digits, not " +
                                    std::to_string(digits.size()) + " characters");
  }
  auto m = std::make_shared<SoftwareKeyManager>();
  SKV_RETURN_IF_ERROR(m->add_key(key_id, digits));
  return m;
}

Result<std::shared_ptr<SoftwareKeyManager>> SoftwareKeyManager::from_bytes(std::string_view bytes,
                                                                           uint32_t key_id) {
  if (bytes.size() != kRootKeySize) {
    return Status::invalid_argument("a raw key must be 32 bytes, not " +
                                    std::to_string(bytes.size()));
  }
  auto m = std::make_shared<SoftwareKeyManager>();
  SKV_RETURN_IF_ERROR(m->add_key(key_id, bytes));
  return m;
}

Status SoftwareKeyManager::add_key(uint32_t key_id, std::string_view key) {
  SKV_RETURN_IF_ERROR(check_key_id(key_id));
  SecretKey k;
  SKV_RETURN_IF_ERROR(decode_root_key(key, "key " + std::to_string(key_id), &k));
  std::lock_guard<std::mutex> lock(mu_);
  keys_[key_id] = std::move(k);
  if (active_ == 0) active_ = key_id;
  return Status::OK();
}

Status SoftwareKeyManager::set_active_key_id(uint32_t key_id) {
  SKV_RETURN_IF_ERROR(check_key_id(key_id));
  std::lock_guard<std::mutex> lock(mu_);
  if (keys_.count(key_id) == 0) return unknown_key(key_id);
  active_ = key_id;
  return Status::OK();
}

Status SoftwareKeyManager::remove_key(uint32_t key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (keys_.count(key_id) == 0) return unknown_key(key_id);
  if (key_id == active_) {
    return Status::invalid_argument("key " + std::to_string(key_id) +
                                    " is the active key: make another key active first");
  }
  keys_.erase(key_id);  // SecretKey wipes itself
  return Status::OK();
}

uint32_t SoftwareKeyManager::active_key_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

KeyState SoftwareKeyManager::key_state(uint32_t key_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (keys_.count(key_id) == 0) return KeyState::Unknown;
  return key_id == active_ ? KeyState::Active : KeyState::DecryptOnly;
}

Status SoftwareKeyManager::root_key(uint32_t key_id, SecretKey* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return unknown_key(key_id);
  out->assign(it->second.data());
  return Status::OK();
}

}  // namespace skv
