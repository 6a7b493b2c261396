#include "skv/status.h"

namespace skv {

const char* encryption_error_name(EncryptionError sub) {
  switch (sub) {
    case EncryptionError::None:
      return "none";
    case EncryptionError::WrongKey:
      return "wrong_key";
    case EncryptionError::UnknownKeyId:
      return "unknown_key_id";
    case EncryptionError::KeyRetired:
      return "key_retired";
    case EncryptionError::NotConfigured:
      return "not_configured";
    case EncryptionError::NotEncrypted:
      return "not_encrypted";
  }
  return "unknown";
}

const char* code_name(Code code) {
  switch (code) {
    case Code::Ok:
      return "ok";
    case Code::NotFound:
      return "not_found";
    case Code::Conflict:
      return "conflict";
    case Code::ReadOnly:
      return "read_only";
    case Code::Closed:
      return "closed";
    case Code::InvalidArgument:
      return "invalid_argument";
    case Code::Corruption:
      return "corruption";
    case Code::IO:
      return "io";
    case Code::Quota:
      return "quota";
    case Code::Busy:
      return "busy";
    case Code::Encryption:
      return "encryption";
    case Code::NotSupported:
      return "not_supported";
  }
  return "unknown";
}

Status::Status(Code code, std::string_view msg) {
  if (code != Code::Ok)
    rep_ = std::make_unique<Rep>(Rep{code, EncryptionError::None, std::string(msg)});
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->msg : kEmpty;
}

std::string Status::to_string() const {
  if (!rep_) return "ok";
  return std::string(code_name(rep_->code)) + ": " + rep_->msg;
}

Status Status::with_context(std::string_view context) const {
  if (!rep_) return Status();
  Status s = *this;
  s.rep_->msg = std::string(context) + ": " + rep_->msg;
  return s;
}

}  // namespace skv
