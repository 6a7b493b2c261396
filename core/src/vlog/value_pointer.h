// ValuePointer: where the tree finds a value that lives in a value log, and its byte encoding.
//
//   value_pointer := file_number:varint64 offset:varint64 size:varint32
//
// `file_number` names the value log ("<number>.vlog"), `offset` is where the entry starts in it
// and `size` is the whole entry's size (header, key and value; vlog_format.h), so one positional
// read fetches it. Every varint is in its shortest form, so a pointer has exactly one encoding.
// docs/vlog.md has the checks and their messages.
//
// Thread safety: pure values and functions. ValuePointer is copyable.

#ifndef SKV_VLOG_VALUE_POINTER_H_
#define SKV_VLOG_VALUE_POINTER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "skv/status.h"

namespace skv::vlog {

// The encoding is never longer than this: 8 bytes of file number (below 2^56), 9 of offset
// (below 2^63), 4 of size (below 2^28).
constexpr size_t kMaxValuePointerSize = 21;
// An entry ends at or before this offset, so offsets and sizes add up without overflow and fit
// the platforms' signed file offsets.
constexpr uint64_t kMaxValueLogOffset = uint64_t{1} << 63;

struct ValuePointer {
  uint64_t file_number = 0;
  uint64_t offset = 0;
  uint64_t size = 0;  // of the whole entry

  bool operator==(const ValuePointer&) const = default;
};

// OK if `p` could point at an entry: file_number < kMaxFileNumber, offset >= the file header's
// size, kMinEntrySize <= size <= kMaxEntrySize, offset + size <= kMaxValueLogOffset. Otherwise
// Corruption "bad value pointer: <reason>".
Status check_value_pointer(const ValuePointer& p);

// Appends the encoding of `p` to dst. REQUIRES: check_value_pointer(p) is OK.
void encode_value_pointer(const ValuePointer& p, std::string* dst);

// Decodes a pointer that makes up the whole of `input`. Corruption "bad value pointer: <reason>"
// if a varint is truncated, overflows or is not in its shortest form, if bytes follow the
// pointer, or if check_value_pointer fails.
Result<ValuePointer> decode_value_pointer(std::string_view input);

}  // namespace skv::vlog

#endif  // SKV_VLOG_VALUE_POINTER_H_
