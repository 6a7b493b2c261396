#include "vlog/value_pointer.h"

#include <cassert>

#include "format/file_header.h"
#include "format/file_names.h"
#include "util/coding.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

namespace {

Status bad(const std::string& what) { return Status::corruption("bad value pointer: " + what); }

// Reads one varint from the front of *in, refusing a truncated or overflowing one and any form
// longer than the shortest.
bool get_canonical_varint(std::string_view* in, uint64_t* v) {
  const char* begin = in->data();
  const char* end = decode_varint64(begin, begin + in->size(), v);
  if (end == nullptr) return false;
  const auto used = static_cast<size_t>(end - begin);
  if (used != varint_length(*v)) return false;
  in->remove_prefix(used);
  return true;
}

}  // namespace

Status check_value_pointer(const ValuePointer& p) {
  if (p.file_number >= kMaxFileNumber) {
    return bad("file number " + std::to_string(p.file_number) + " out of range");
  }
  if (p.offset < kFileHeaderSize) {
    return bad("offset " + std::to_string(p.offset) + " inside the file header");
  }
  if (p.size == 0) return bad("zero size");
  if (p.size < kMinEntrySize) {
    return bad("size " + std::to_string(p.size) + " below the smallest entry");
  }
  if (p.size > kMaxEntrySize) {
    return bad("size " + std::to_string(p.size) + " exceeds the largest entry");
  }
  if (p.offset > kMaxValueLogOffset - p.size) {
    return bad("offset " + std::to_string(p.offset) + " out of range");
  }
  return Status();
}

// value_pointer := file_number:varint64 offset:varint64 size:varint32 (shortest forms)
void encode_value_pointer(const ValuePointer& p, std::string* dst) {
  assert(check_value_pointer(p).ok());
  put_varint64(dst, p.file_number);
  put_varint64(dst, p.offset);
  put_varint32(dst, static_cast<uint32_t>(p.size));
}

Result<ValuePointer> decode_value_pointer(std::string_view input) {
  ValuePointer p;
  if (!get_canonical_varint(&input, &p.file_number)) return bad("malformed file number");
  if (!get_canonical_varint(&input, &p.offset)) return bad("malformed offset");
  if (!get_canonical_varint(&input, &p.size) || p.size > UINT32_MAX) return bad("malformed size");
  if (!input.empty()) {
    return bad(std::to_string(input.size()) + " bytes after the pointer");
  }
  Status s = check_value_pointer(p);
  if (!s.ok()) return s;
  return p;
}

}  // namespace skv::vlog
