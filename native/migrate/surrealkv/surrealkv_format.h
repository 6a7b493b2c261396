// The small shared pieces of the SurrealKV 0.20/0.21 format (docs/migration-surrealkv.md): a
// bounds-checked cursor over decoded bytes (big-endian fixed integers, LEB128 varints), the IEEE
// CRC-32 and its SSTable mask, the internal key (user key, seq, kind, timestamp), the entry kinds,
// and the ValueLocation / ValuePointer that wrap every Set and Replace value.
//
// Plain functions and values; thread-compatible.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_SURREALKV_FORMAT_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_SURREALKV_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

// Entry kinds: the low byte of an internal key's trailer.
enum Kind : uint8_t {
  kDelete = 0,      // hard delete: hides the key and every older version
  kSoftDelete = 1,  // a tombstone version
  kSet = 2,
  kMerge = 3,        // reserved, never written by 0.21
  kLogData = 4,      // never written by 0.21
  kRangeDelete = 5,  // never written by 0.21
  kReplace = 6,      // a value that supersedes every older version
  kSeparator = 7,    // index keys only
};

// "Delete", "Set", ... or "unknown".
const char* kind_name(uint8_t kind);

// Checks that `kind` may appear on a data entry: OK for Delete, SoftDelete, Set and Replace;
// NotSupported for Merge, LogData and RangeDelete (kinds 0.21 never writes); Corruption for any
// other value. The message names `file` and `offset` (where the entry is).
Status check_entry_kind(uint8_t kind, const SourceFile& file, uint64_t offset);

// A bounds-checked reader over `data`, which starts at `base` in its file (for error offsets).
class Cursor {
 public:
  Cursor(std::string_view data, uint64_t base) : data_(data), base_(base) {}

  // Each returns false (consuming nothing) when the input ends early or a varint is malformed.
  bool u8(uint8_t* v);
  bool be16(uint16_t* v);
  bool be32(uint32_t* v);
  bool be64(uint64_t* v);
  bool le32(uint32_t* v);
  bool varint(uint64_t* v);
  bool bytes(size_t n, std::string_view* v);

  size_t remaining() const { return data_.size() - pos_; }
  bool done() const { return pos_ == data_.size(); }
  // The file offset of the next byte.
  uint64_t offset() const { return base_ + pos_; }

 private:
  std::string_view data_;
  uint64_t base_;
  size_t pos_ = 0;
};

// IEEE CRC-32 (the zlib polynomial) of a ‖ b.
uint32_t crc32_ieee(std::string_view a, std::string_view b = {});
// The SSTable trailer stores crc rotated right by 15 plus a constant; unmask undoes it.
uint32_t mask_crc(uint32_t crc);
uint32_t unmask_crc(uint32_t masked);

// An encoded internal key: user_key ‖ (seq << 8 | kind) u64 BE ‖ timestamp u64 BE.
struct InternalKey {
  std::string_view user_key;
  uint64_t seq = 0;
  uint8_t kind = 0;
  uint64_t timestamp = 0;
};
inline constexpr size_t kInternalKeySuffix = 16;
// False when `encoded` is shorter than the 16-byte suffix.
bool parse_internal_key(std::string_view encoded, InternalKey* out);
void append_internal_key(std::string* dst, std::string_view user_key, uint64_t seq, uint8_t kind,
                         uint64_t timestamp);

// One data entry of a table or a WAL batch, with where it was read (for error messages).
struct Entry {
  std::string user_key;
  uint64_t seq = 0;
  uint8_t kind = 0;
  uint64_t timestamp = 0;
  std::string value;  // the ValueLocation bytes of a Set or Replace; empty for a tombstone
  const SourceFile* file = nullptr;
  uint64_t offset = 0;  // of the block or WAL record holding the entry
};

// ValuePointer (25 bytes, BE): where a value lives in the value log.
struct ValuePointer {
  uint32_t file_id = 0;
  uint64_t offset = 0;  // of the VLog entry's 8-byte header
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t crc = 0;  // IEEE CRC-32 of key ‖ value
};
inline constexpr size_t kValuePointerSize = 25;

// A decoded ValueLocation: `meta u8 | version u8 (1) | body`. meta bit 0 set: the body is a
// ValuePointer; clear: the body is the value itself (a view into the input).
struct ValueLocation {
  bool is_pointer = false;
  std::string_view inline_value;
  ValuePointer pointer;
};
// Corruption or NotSupported (an unknown meta bit or version), naming `file` and `offset`.
Status decode_value_location(std::string_view bytes, const SourceFile& file, uint64_t offset,
                             ValueLocation* out);

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_SURREALKV_FORMAT_H_
