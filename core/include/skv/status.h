// Status and Result<T>: how every fallible skv call reports its outcome.
//
// The core never throws. A call that can fail returns a Status (success or an error code with a
// message) or a Result<T> (a value or an error Status). Both are [[nodiscard]]: ignoring an error
// is a compile-time warning, and our own code builds with warnings as errors.
//
// An OK Status carries no allocation, so returning one on the hot path is free. An error Status
// owns its message; messages name the file (and offset, for corruption) when one is involved.
//
// Thread safety: Status and Result are plain values. Distinct objects may be used from different
// threads; one object must not be mutated concurrently. Both are copyable and movable.

#ifndef SKV_STATUS_H_
#define SKV_STATUS_H_

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace skv {

// The error kinds. They mirror the error kinds of the reference engine, so callers in C++ and in
// JavaScript (where they become `code` strings) can branch on them.
enum class Code : unsigned char {
  Ok = 0,
  NotFound,         // a named thing (file, key id, database) does not exist
  Conflict,         // a write-write conflict: another transaction committed first; retry
  ReadOnly,         // a write on a read-only transaction or tree
  Closed,           // use of a closed tree, or of a transaction after commit or rollback
  InvalidArgument,  // bad input from the caller: empty or oversized key, bad option, ...
  Corruption,       // stored bytes fail a checksum, a length or a range check
  IO,               // the platform failed a read, write, sync, create or remove
  Quota,            // the storage is full (disk full, browser quota, OPFS slot pool short)
  Busy,             // the database is already open (by this or another process)
  Encryption,       // see EncryptionError for the sub-kind
  NotSupported,     // a feature this build or this database does not have
};

// Sub-kind of Code::Encryption.
enum class EncryptionError : unsigned char {
  None = 0,
  WrongKey,       // the key does not decrypt the database
  UnknownKeyId,   // a file names a key id the key manager does not hold
  KeyRetired,     // the key id is known but may no longer be used
  NotConfigured,  // an encrypted database opened without a key manager
  NotEncrypted,   // a key manager given for a database created without encryption
};

// Stable lower-case name of a code ("conflict", "io", ...), used in messages and by bindings.
const char* code_name(Code code);

// Stable lower-case name of an encryption sub-kind ("wrong_key", "not_configured", ...; "none"
// for None), used by the skv tool and the browser bindings.
const char* encryption_error_name(EncryptionError sub);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() noexcept = default;

  // Status::OK() makes a success; ok() asks whether a status is one. Result<T>::ok() is the
  // same predicate, so `if (!x.ok())` means "failed" on both. The error factories are named
  // after their codes.
  static Status OK() { return Status(); }
  static Status not_found(std::string_view msg) { return Status(Code::NotFound, msg); }
  static Status conflict(std::string_view msg) { return Status(Code::Conflict, msg); }
  static Status read_only(std::string_view msg) { return Status(Code::ReadOnly, msg); }
  static Status closed(std::string_view msg) { return Status(Code::Closed, msg); }
  static Status invalid_argument(std::string_view msg) {
    return Status(Code::InvalidArgument, msg);
  }
  static Status corruption(std::string_view msg) { return Status(Code::Corruption, msg); }
  static Status io_error(std::string_view msg) { return Status(Code::IO, msg); }
  static Status quota(std::string_view msg) { return Status(Code::Quota, msg); }
  static Status busy(std::string_view msg) { return Status(Code::Busy, msg); }
  static Status not_supported(std::string_view msg) { return Status(Code::NotSupported, msg); }
  static Status encryption(EncryptionError sub, std::string_view msg) {
    Status s(Code::Encryption, msg);
    s.rep_->sub = sub;
    return s;
  }

  Status(Code code, std::string_view msg);
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  // True for success. The one predicate; Result<T>::ok() means the same.
  bool ok() const { return rep_ == nullptr; }
  explicit operator bool() const { return ok(); }
  Code code() const { return rep_ ? rep_->code : Code::Ok; }
  EncryptionError encryption_error() const { return rep_ ? rep_->sub : EncryptionError::None; }
  // The message without the code prefix; empty for OK.
  const std::string& message() const;

  bool is_not_found() const { return code() == Code::NotFound; }
  bool is_conflict() const { return code() == Code::Conflict; }
  bool is_corruption() const { return code() == Code::Corruption; }
  bool is_io_error() const { return code() == Code::IO; }

  // "ok", or "<code>: <message>".
  std::string to_string() const;

  // Returns a copy of this status with `context` prepended to the message ("context: message").
  // OK stays OK.
  Status with_context(std::string_view context) const;

 private:
  struct Rep {
    Code code;
    EncryptionError sub = EncryptionError::None;
    std::string msg;
  };
  std::unique_ptr<Rep> rep_;
};

// A value of type T, or an error Status. Like std::expected, without exceptions.
// REQUIRES for value()/operator*: ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : v_(std::in_place_index<1>, std::move(status)) {  // NOLINT
    assert(!std::get<1>(v_).ok() && "a Result built from a Status needs an error");
  }

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // The error, or OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<1>(v_); }

  // The value, or `fallback` when this holds an error.
  T value_or(T fallback) const& { return ok() ? std::get<0>(v_) : std::move(fallback); }
  T value_or(T fallback) && { return ok() ? std::get<0>(std::move(v_)) : std::move(fallback); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace skv

#endif  // SKV_STATUS_H_
