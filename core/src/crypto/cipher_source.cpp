#include "crypto/cipher_source.h"

#include <algorithm>

#include "util/status_macros.h"

namespace skv::crypto {

void fill_header(const Envelope& envelope, FileHeader* header) {
  header->cipher = static_cast<uint8_t>(envelope.suite);
  header->key_id = envelope.key_id;
  header->salt = envelope.salt;
  header->db_id = envelope.db_id;
  header->key_check = envelope.key_check;
}

Result<std::shared_ptr<const FileCipher>> cipher_for_header(CipherSource* source,
                                                            const FileHeader& header,
                                                            const std::string& label) {
  if (source == nullptr) {
    if (header.cipher == 0) return std::shared_ptr<const FileCipher>();
    return Status::encryption(EncryptionError::NotConfigured,
                              label + ": the file is encrypted and no key manager was given");
  }
  return source->for_existing_file(header, label);
}

Keyring::Keyring(std::shared_ptr<KeyManager> keys, CipherSuite suite, const DatabaseId& db_id)
    : keys_(std::move(keys)), suite_(suite), db_id_(db_id) {}

Status Keyring::load(uint32_t key_id, std::string_view label) {
  const std::string where = label.empty() ? std::string() : std::string(label) + ": ";
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (roots_.count(key_id) != 0) return Status::OK();
  }
  if (key_id == 0) return Status::corruption(where + "key id 0 in an encrypted file");
  switch (keys_->key_state(key_id)) {
    case KeyState::Active:
    case KeyState::DecryptOnly:
      break;
    case KeyState::Unknown:
      return Status::encryption(EncryptionError::UnknownKeyId,
                                where + "sealed under key id " + std::to_string(key_id) +
                                    ", which the key manager does not hold");
  }
  SecretKey root;
  Status s = keys_->root_key(key_id, &root);
  if (!s.ok()) return s.with_context(where.empty() ? "key manager" : std::string(label));
  std::lock_guard<std::mutex> lock(mu_);
  roots_.emplace(key_id, std::move(root));
  return Status::OK();
}

Status Keyring::prepare(std::vector<uint32_t> key_ids) {
  key_ids.push_back(keys_->active_key_id());
  std::sort(key_ids.begin(), key_ids.end());
  key_ids.erase(std::unique(key_ids.begin(), key_ids.end()), key_ids.end());
  SKV_RETURN_IF_ERROR(keys_->prepare(key_ids));
  for (uint32_t id : key_ids) SKV_RETURN_IF_ERROR(load(id, ""));
  return Status::OK();
}

Status Keyring::root_key(uint32_t key_id, SecretKey* out) {
  SKV_RETURN_IF_ERROR(load(key_id, ""));
  std::lock_guard<std::mutex> lock(mu_);
  out->assign(roots_.at(key_id).data());
  return Status::OK();
}

Result<std::shared_ptr<const FileCipher>> Keyring::for_new_file(FileKind kind, uint64_t number,
                                                                std::string label) {
  const uint32_t key_id = keys_->active_key_id();
  if (keys_->key_state(key_id) != KeyState::Active) {
    return Status::encryption(
        EncryptionError::KeyRetired,
        label + ": the active key id " + std::to_string(key_id) + " may not seal new files");
  }
  SKV_RETURN_IF_ERROR(init());
  Envelope e;
  e.suite = suite_;
  e.key_id = key_id;
  e.db_id = db_id_;
  random_bytes(e.salt.data(), e.salt.size());
  SecretKey root;
  SKV_RETURN_IF_ERROR(root_key(key_id, &root));
  e.key_check = key_check_value(root, db_id_, key_id);
  return FileCipher::create(e, kind, number, root, std::move(label));
}

Result<std::shared_ptr<const FileCipher>> Keyring::for_existing_file(const FileHeader& header,
                                                                     std::string label) {
  if (header.cipher == 0) {
    return Status::corruption(label + ": a plaintext file in an encrypted database");
  }
  if (header.db_id != db_id_) {
    return Status::corruption(label + ": the file belongs to another database");
  }
  Envelope e;
  e.suite = static_cast<CipherSuite>(header.cipher);
  if (e.suite != CipherSuite::XChaCha20Poly1305 && e.suite != CipherSuite::Aes256Gcm) {
    return Status::corruption(label + ": unknown cipher " + std::to_string(header.cipher));
  }
  if (e.suite != suite_) {
    return Status::corruption(label + ": sealed with " + cipher_name(e.suite) +
                              " in a database sealed with " + cipher_name(suite_));
  }
  e.key_id = header.key_id;
  e.salt = header.salt;
  e.db_id = header.db_id;
  e.key_check = header.key_check;
  SKV_RETURN_IF_ERROR(load(e.key_id, label));
  SecretKey root;
  SKV_RETURN_IF_ERROR(root_key(e.key_id, &root));
  if (key_check_value(root, db_id_, e.key_id) != e.key_check) {
    return Status::encryption(EncryptionError::WrongKey,
                              label + ": the key manager's key " + std::to_string(e.key_id) +
                                  " is not the key this file was sealed with");
  }
  return FileCipher::create(e, header.kind, header.file_number, root, std::move(label));
}

}  // namespace skv::crypto
