#include "crypto/file_cipher.h"

#include <cstring>

#include "util/coding.h"
#include "util/status_macros.h"

namespace skv::crypto {

namespace {

std::string_view view(const std::array<uint8_t, 16>& a) {
  return std::string_view(reinterpret_cast<const char*>(a.data()), a.size());
}

// The fields that identify one file under one key, in a fixed encoding.
std::string file_identity(const Envelope& e, FileKind kind, uint64_t number) {
  std::string s;
  s.append(view(e.db_id));
  s.push_back(static_cast<char>(kind));
  put_fixed64(&s, number);
  put_fixed32(&s, e.key_id);
  s.push_back(static_cast<char>(e.suite));
  return s;
}

}  // namespace

uint32_t key_check_value(const SecretKey& root, const DatabaseId& db_id, uint32_t key_id) {
  std::string id;
  put_fixed32(&id, key_id);
  uint8_t out[16];
  keyed_hash(out, sizeof(out), root.data(), {"skv key check v1", view(db_id), id});
  return decode_fixed32(reinterpret_cast<const char*>(out));
}

std::array<uint8_t, 32> pointer_mac(const SecretKey& root, const DatabaseId& db_id, uint32_t key_id,
                                    std::string_view message) {
  std::string id;
  put_fixed32(&id, key_id);
  uint8_t mac_key[32];
  keyed_hash(mac_key, sizeof(mac_key), root.data(), {"skv pointer key v1", view(db_id), id});
  std::array<uint8_t, 32> mac{};
  keyed_hash(mac.data(), mac.size(), mac_key, {"skv pointer v1", message});
  wipe(mac_key, sizeof(mac_key));
  return mac;
}

Result<std::shared_ptr<const FileCipher>> FileCipher::create(const Envelope& envelope,
                                                             FileKind kind, uint64_t number,
                                                             const SecretKey& root,
                                                             std::string label) {
  SKV_RETURN_IF_ERROR(init());
  if (!cipher_available(envelope.suite)) {
    return Status::not_supported(label + ": sealed with " + cipher_name(envelope.suite) +
                                 ", which this build or this CPU cannot run");
  }
  std::shared_ptr<FileCipher> c(new FileCipher());
  c->envelope_ = envelope;
  c->kind_ = kind;
  c->number_ = number;
  c->label_ = std::move(label);
  const std::string identity = file_identity(envelope, kind, number);
  uint8_t key[kRootKeySize];
  keyed_hash(key, sizeof(key), root.data(), {"skv file key v1", identity, view(envelope.salt)});
  c->key_.assign(key);
  wipe(key, sizeof(key));
  c->ad_prefix_ = "skv unit v1";
  c->ad_prefix_.push_back(static_cast<char>(kFormatVersion & 0xff));
  c->ad_prefix_.push_back(static_cast<char>(kFormatVersion >> 8));
  c->ad_prefix_.append(identity);
  // 51 bytes with the position: always fits the stack buffer seal() and open() use.
  if (c->ad_prefix_.size() + 8 > kMaxAdSize) return Status::io_error("associated data too long");
  return std::shared_ptr<const FileCipher>(std::move(c));
}

FileCipher::~FileCipher() = default;

size_t FileCipher::ad(uint64_t position, char* out) const {
  // Built on the stack: sealing a small WAL record must not allocate.
  std::memcpy(out, ad_prefix_.data(), ad_prefix_.size());
  encode_fixed64(out + ad_prefix_.size(), position);
  return ad_prefix_.size() + 8;
}

void FileCipher::seal(uint64_t position, std::string_view plaintext, std::string* out) const {
  char a[kMaxAdSize];
  const size_t n = ad(position, a);
  crypto::seal(envelope_.suite, key_.data(), position, std::string_view(a, n), plaintext, out);
}

Status FileCipher::open(uint64_t position, std::string_view sealed, std::string* out) const {
  out->assign(sealed.data(), sealed.size());
  Status s = open_in_place(position, out->data(), out->size());
  if (!s.ok()) {
    out->clear();
    return s;
  }
  out->resize(sealed.size() - kOverhead);
  return Status::OK();
}

Status FileCipher::open_in_place(uint64_t position, char* data, size_t size) const {
  char a[kMaxAdSize];
  const size_t n = ad(position, a);
  if (crypto::open_in_place(envelope_.suite, key_.data(), position, std::string_view(a, n), data,
                            size)) {
    return Status::OK();
  }
  return Status::corruption(label_ + ": sealed unit at offset " + std::to_string(position) +
                            " fails authentication (moved, replayed, damaged or edited)");
}

}  // namespace skv::crypto
