// The internal key: how every stored version of a user key is named inside skv.
//
//   internal_key := user_key ‖ trailer:fixed64 ‖ timestamp:fixed64
//   trailer      := (sequence << 8) | kind
//
// Internal keys sort by user key ascending (bytewise, as unsigned), then by trailer descending, so
// the newest version of a key comes first. The timestamp (nanoseconds, the commit time or the
// time given to set_at) does not take part in the order; it is carried for versioned queries.
//
// Thread safety: pure values and functions.

#ifndef SKV_FORMAT_INTERNAL_KEY_H_
#define SKV_FORMAT_INTERNAL_KEY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "util/bytes_compare.h"
#include "util/coding.h"

namespace skv {

using SequenceNumber = uint64_t;

// Sequence numbers use 56 bits; the top of the range is reserved for "see everything" lookups.
constexpr SequenceNumber kMaxSequenceNumber = (uint64_t{1} << 56) - 1;

constexpr size_t kInternalKeySuffix = 16;  // trailer + timestamp
// Timestamps: nanoseconds since the Unix epoch, at most kMaxTimestamp (skv/options.h).

enum class ValueKind : uint8_t {
  Delete = 0,  // a tombstone: the key has no value as of this sequence number
  Value = 1,   // a value stored inline
  // The value lives in a value log; the entry's value is its encoded pointer (vlog/
  // value_pointer.h). Only tables hold these: flushes write them, the WAL and memtables never do.
  ValuePointer = 2,
};
// The largest kind; a seek key built with it sorts before every entry of the same sequence.
constexpr ValueKind kValueKindForSeek = ValueKind::ValuePointer;

inline bool is_valid_kind(uint8_t k) { return k <= static_cast<uint8_t>(ValueKind::ValuePointer); }
// True for the kinds that give a key a value (inline or in a value log).
inline bool has_value(ValueKind k) { return k != ValueKind::Delete; }

inline uint64_t pack_trailer(SequenceNumber seq, ValueKind kind) {
  return (seq << 8) | static_cast<uint8_t>(kind);
}

// A decoded view of an internal key. `user_key` views into the encoded bytes.
struct ParsedInternalKey {
  std::string_view user_key;
  SequenceNumber sequence = 0;
  ValueKind kind = ValueKind::Value;
  uint64_t timestamp = 0;
};

inline void append_internal_key(std::string* dst, std::string_view user_key, SequenceNumber seq,
                                ValueKind kind, uint64_t timestamp) {
  dst->append(user_key.data(), user_key.size());
  put_fixed64(dst, pack_trailer(seq, kind));
  put_fixed64(dst, timestamp);
}

inline std::string make_internal_key(std::string_view user_key, SequenceNumber seq, ValueKind kind,
                                     uint64_t timestamp) {
  std::string k;
  k.reserve(user_key.size() + kInternalKeySuffix);
  append_internal_key(&k, user_key, seq, kind, timestamp);
  return k;
}

// The smallest internal key for `user_key` visible at snapshot `seq`: seeking to it lands on the
// newest version with sequence <= seq.
inline std::string make_seek_key(std::string_view user_key, SequenceNumber seq) {
  return make_internal_key(user_key, seq, kValueKindForSeek, 0);
}

// REQUIRES: ikey.size() >= kInternalKeySuffix (checked by parse_internal_key).
inline std::string_view extract_user_key(std::string_view ikey) {
  return ikey.substr(0, ikey.size() - kInternalKeySuffix);
}
inline uint64_t extract_trailer(std::string_view ikey) {
  return decode_fixed64(ikey.data() + ikey.size() - kInternalKeySuffix);
}
inline uint64_t extract_timestamp(std::string_view ikey) {
  return decode_fixed64(ikey.data() + ikey.size() - 8);
}

// Returns false if `ikey` is too short or has an unknown kind (the caller reports corruption).
inline bool parse_internal_key(std::string_view ikey, ParsedInternalKey* out) {
  if (ikey.size() < kInternalKeySuffix) return false;
  uint64_t trailer = extract_trailer(ikey);
  uint8_t kind = static_cast<uint8_t>(trailer & 0xff);
  if (!is_valid_kind(kind)) return false;
  out->user_key = extract_user_key(ikey);
  out->sequence = trailer >> 8;
  out->kind = static_cast<ValueKind>(kind);
  out->timestamp = extract_timestamp(ikey);
  return true;
}

// Bytewise comparison of user keys, as unsigned bytes.
inline int compare_user_keys(std::string_view a, std::string_view b) { return compare_bytes(a, b); }

// Orders internal keys: user key ascending, then trailer descending.
// REQUIRES: both keys are at least kInternalKeySuffix long.
inline int compare_internal_keys(std::string_view a, std::string_view b) {
  int r = compare_user_keys(extract_user_key(a), extract_user_key(b));
  if (r != 0) return r;
  uint64_t ta = extract_trailer(a);
  uint64_t tb = extract_trailer(b);
  if (ta > tb) return -1;
  if (ta < tb) return 1;
  return 0;
}

struct InternalKeyLess {
  bool operator()(std::string_view a, std::string_view b) const {
    return compare_internal_keys(a, b) < 0;
  }
};

}  // namespace skv

#endif  // SKV_FORMAT_INTERNAL_KEY_H_
