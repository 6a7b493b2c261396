#include "native/migrate/surrealkv/surrealkv_format.h"

#include <zlib.h>

#include "util/coding.h"

namespace skv::migration::surrealkv {

namespace {

uint64_t load_be(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void put_be64(std::string* dst, uint64_t v) {
  for (int i = 7; i >= 0; --i) dst->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

const char* kind_name(uint8_t kind) {
  switch (kind) {
    case kDelete:
      return "Delete";
    case kSoftDelete:
      return "SoftDelete";
    case kSet:
      return "Set";
    case kMerge:
      return "Merge";
    case kLogData:
      return "LogData";
    case kRangeDelete:
      return "RangeDelete";
    case kReplace:
      return "Replace";
    case kSeparator:
      return "Separator";
    default:
      return "unknown";
  }
}

Status check_entry_kind(uint8_t kind, const SourceFile& file, uint64_t offset) {
  switch (kind) {
    case kDelete:
    case kSoftDelete:
    case kSet:
    case kReplace:
      return Status::OK();
    case kMerge:
    case kLogData:
    case kRangeDelete:
      return Status::not_supported(file.where(
          offset, std::string("entry of kind ") + kind_name(kind) + " (" + std::to_string(kind) +
                      "), which SurrealKV 0.20/0.21 never writes"));
    default:
      return Status::corruption(file.where(offset, "unknown entry kind " + std::to_string(kind)));
  }
}

bool Cursor::u8(uint8_t* v) {
  if (remaining() < 1) return false;
  *v = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool Cursor::be16(uint16_t* v) {
  if (remaining() < 2) return false;
  *v = static_cast<uint16_t>(load_be(data_.data() + pos_, 2));
  pos_ += 2;
  return true;
}

bool Cursor::be32(uint32_t* v) {
  if (remaining() < 4) return false;
  *v = static_cast<uint32_t>(load_be(data_.data() + pos_, 4));
  pos_ += 4;
  return true;
}

bool Cursor::be64(uint64_t* v) {
  if (remaining() < 8) return false;
  *v = load_be(data_.data() + pos_, 8);
  pos_ += 8;
  return true;
}

bool Cursor::le32(uint32_t* v) {
  if (remaining() < 4) return false;
  *v = decode_fixed32(data_.data() + pos_);
  pos_ += 4;
  return true;
}

bool Cursor::varint(uint64_t* v) {
  const char* start = data_.data() + pos_;
  const char* q = decode_varint64(start, data_.data() + data_.size(), v);
  if (q == nullptr) return false;
  pos_ += static_cast<size_t>(q - start);
  return true;
}

bool Cursor::bytes(size_t n, std::string_view* v) {
  if (remaining() < n) return false;
  *v = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

uint32_t crc32_ieee(std::string_view a, std::string_view b) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large inputs in pieces.
  for (std::string_view part : {a, b}) {
    while (!part.empty()) {
      size_t n = part.size() < (1u << 30) ? part.size() : (1u << 30);
      c = ::crc32(c, reinterpret_cast<const Bytef*>(part.data()), static_cast<uInt>(n));
      part.remove_prefix(n);
    }
  }
  return static_cast<uint32_t>(c);
}

constexpr uint32_t kMaskDelta = 0xa282ead8u;

uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint32_t unmask_crc(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

bool parse_internal_key(std::string_view encoded, InternalKey* out) {
  if (encoded.size() < kInternalKeySuffix) return false;
  size_t n = encoded.size() - kInternalKeySuffix;
  uint64_t trailer = load_be(encoded.data() + n, 8);
  out->user_key = encoded.substr(0, n);
  out->seq = trailer >> 8;
  out->kind = static_cast<uint8_t>(trailer & 0xff);
  out->timestamp = load_be(encoded.data() + n + 8, 8);
  return true;
}

void append_internal_key(std::string* dst, std::string_view user_key, uint64_t seq, uint8_t kind,
                         uint64_t timestamp) {
  dst->append(user_key);
  put_be64(dst, (seq << 8) | kind);
  put_be64(dst, timestamp);
}

Status decode_value_location(std::string_view bytes, const SourceFile& file, uint64_t offset,
                             ValueLocation* out) {
  Cursor c(bytes, 0);
  uint8_t meta = 0;
  uint8_t version = 0;
  if (!c.u8(&meta) || !c.u8(&version)) {
    return Status::corruption(file.where(offset, "value of " + std::to_string(bytes.size()) +
                                                     " bytes, shorter than its 2-byte header"));
  }
  if ((meta & ~1u) != 0) {
    return Status::not_supported(
        file.where(offset, "value location with unknown meta bits " + std::to_string(meta)));
  }
  if (version != 1) {
    return Status::not_supported(
        file.where(offset, "value location of unknown version " + std::to_string(version)));
  }
  out->is_pointer = (meta & 1u) != 0;
  if (!out->is_pointer) {
    out->inline_value = bytes.substr(2);
    return Status::OK();
  }
  uint8_t pv = 0;
  ValuePointer& p = out->pointer;
  if (c.remaining() != kValuePointerSize || !c.u8(&pv) || !c.be32(&p.file_id) ||
      !c.be64(&p.offset) || !c.be32(&p.key_size) || !c.be32(&p.value_size) || !c.be32(&p.crc)) {
    return Status::corruption(file.where(
        offset, "value pointer of " + std::to_string(bytes.size() - 2) + " bytes, expected 25"));
  }
  if (pv != 1) {
    return Status::not_supported(
        file.where(offset, "value pointer of unknown version " + std::to_string(pv)));
  }
  return Status::OK();
}

}  // namespace skv::migration::surrealkv
