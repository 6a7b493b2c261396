#include "native/migrate/surrealkv/wal_reader.h"

#include <lz4.h>

#include <string>

#include "util/status_macros.h"

namespace skv::migration::surrealkv {

namespace {

enum RecordType : uint8_t {
  kEmpty = 0,
  kFull = 1,
  kFirst = 2,
  kMiddle = 3,
  kLast = 4,
  kSetCompression = 9,
};
constexpr uint8_t kCompressionNone = 0;
constexpr uint8_t kCompressionLz4 = 1;
constexpr uint8_t kBatchVersion = 1;
// A logical record larger than this once uncompressed is refused rather than allocated (0.21
// caps a batch at 4 GiB; a record also has to fit one memtable).
constexpr uint64_t kMaxRecord = uint64_t{1} << 32;

bool all_zero(std::string_view s) {
  for (char ch : s) {
    if (ch != 0) return false;
  }
  return true;
}

Status lz4_uncompress(const SourceFile& file, uint64_t offset, std::string_view in,
                      std::string* out) {
  Cursor c(in, offset);
  uint32_t size = 0;
  if (!c.le32(&size)) {
    return Status::corruption(file.where(offset, "LZ4 record shorter than its size prefix"));
  }
  std::string_view body = in.substr(4);
  // LZ4 expands at most 255:1.
  if (size > kMaxRecord || body.size() > static_cast<size_t>(INT32_MAX) ||
      size / 255 > body.size() + 1) {
    return Status::corruption(
        file.where(offset, "LZ4 record with an impossible size " + std::to_string(size)));
  }
  out->resize(size);
  int n = LZ4_decompress_safe(body.data(), out->data(), static_cast<int>(body.size()),
                              static_cast<int>(size));
  if (n < 0 || static_cast<uint32_t>(n) != size) {
    return Status::corruption(file.where(offset, "LZ4 record does not uncompress to its size"));
  }
  return Status::OK();
}

}  // namespace

Status decode_batch(const SourceFile& file, uint64_t offset, std::string_view batch,
                    std::vector<Entry>* out) {
  auto bad = [&](const std::string& what) {
    return Status::corruption(file.where(offset, "batch: " + what));
  };
  Cursor c(batch, 0);
  uint8_t version = 0;
  uint64_t start = 0, count = 0;
  if (!c.u8(&version)) return bad("empty");
  if (version != kBatchVersion) {
    return Status::not_supported(
        file.where(offset, "batch of unknown version " + std::to_string(version)));
  }
  if (!c.varint(&start) || !c.varint(&count)) return bad("header cut short");
  // Each entry takes at least 5 bytes (kind, three varints, the pointer flag).
  if (count > 0xffffffffu || count > c.remaining() / 5) {
    return bad("entry count " + std::to_string(count) + " does not fit its " +
               std::to_string(batch.size()) + " bytes");
  }
  if (count > 0 && (start == 0 || start > (uint64_t{1} << 56) - count)) {
    return bad("sequence numbers out of range");
  }
  size_t first = out->size();
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t kind = 0;
    uint64_t klen = 0, vlen = 0, ts = 0;
    std::string_view key, value;
    if (!c.u8(&kind) || !c.varint(&klen) || klen > c.remaining() ||
        !c.bytes(static_cast<size_t>(klen), &key) || !c.varint(&vlen) || vlen > c.remaining() ||
        !c.bytes(static_cast<size_t>(vlen), &value) || !c.varint(&ts)) {
      return bad("entry " + std::to_string(i) + " cut short");
    }
    SKV_RETURN_IF_ERROR(check_entry_kind(kind, file, offset));
    bool tombstone = kind == kDelete || kind == kSoftDelete;
    if (tombstone && !value.empty()) return bad("tombstone with a value");
    if (!tombstone && value.empty()) return bad("value without its ValueLocation header");
    Entry e;
    e.user_key.assign(key);
    e.seq = start + i;
    e.kind = kind;
    e.timestamp = ts;
    e.value.assign(value);
    e.file = &file;
    e.offset = offset;
    out->push_back(std::move(e));
  }
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t flag = 0;
    if (!c.u8(&flag)) return bad("value pointer flags cut short");
    if (flag == 1) {
      return Status::not_supported(
          file.where(offset, "batch entry with a separate value pointer (0.21 writes none)"));
    }
    if (flag != 0) return bad("unknown value pointer flag " + std::to_string(flag));
  }
  if (!c.done()) {
    out->resize(first);
    return bad(std::to_string(c.remaining()) + " trailing bytes");
  }
  return Status::OK();
}

Status read_wal_segment(const SourceFile& file, std::vector<Entry>* out) {
  std::string data;
  SKV_RETURN_IF_ERROR(file.read_all(&data));
  std::string_view all(data);
  std::string record;         // the logical record being assembled
  uint64_t record_start = 0;  // offset of its first fragment
  bool in_record = false;
  bool lz4 = false;
  std::string plain;
  uint64_t pos = 0;
  while (pos < all.size()) {
    uint64_t block_left = kWalBlockSize - pos % kWalBlockSize;
    if (block_left < kWalHeaderSize) {
      uint64_t n = std::min<uint64_t>(block_left, all.size() - pos);
      if (!all_zero(all.substr(pos, n))) {
        return Status::corruption(file.where(pos, "WAL block padding not zero"));
      }
      pos += n;
      continue;
    }
    if (all.size() - pos < kWalHeaderSize) {
      return Status::corruption(file.where(pos, "WAL record header cut short"));
    }
    Cursor h(all.substr(pos, kWalHeaderSize), pos);
    uint32_t crc = 0;
    uint16_t len = 0;
    uint8_t type = 0;
    (void)h.be32(&crc);
    (void)h.be16(&len);
    (void)h.u8(&type);
    if (type == kEmpty) {
      // Only zeros may follow, to the end of the block.
      uint64_t n = std::min<uint64_t>(block_left, all.size() - pos);
      if (!all_zero(all.substr(pos, n))) {
        return Status::corruption(file.where(pos, "WAL empty record followed by data"));
      }
      pos += n;
      continue;
    }
    if (len > block_left - kWalHeaderSize) {
      return Status::corruption(
          file.where(pos, "WAL record of " + std::to_string(len) + " bytes overruns its block"));
    }
    if (len > all.size() - pos - kWalHeaderSize) {
      return Status::corruption(file.where(pos, "WAL record cut short by the end of the file"));
    }
    std::string_view payload = all.substr(pos + kWalHeaderSize, len);
    if (crc32_ieee(all.substr(pos + 6, 1), payload) != crc) {
      return Status::corruption(file.where(pos, "WAL record fails its CRC-32 check"));
    }
    switch (type) {
      case kSetCompression:
        if (pos != 0) {
          return Status::corruption(
              file.where(pos, "WAL compression record not at the start of the segment"));
        }
        if (len != 1) {
          return Status::corruption(
              file.where(pos, "WAL compression record of " + std::to_string(len) + " bytes"));
        }
        if (static_cast<uint8_t>(payload[0]) == kCompressionLz4) {
          lz4 = true;
        } else if (static_cast<uint8_t>(payload[0]) != kCompressionNone) {
          return Status::not_supported(file.where(
              pos + kWalHeaderSize,
              "unknown WAL compression " + std::to_string(static_cast<uint8_t>(payload[0]))));
        }
        break;
      case kFull:
      case kFirst:
        if (in_record) {
          return Status::corruption(
              file.where(pos, "WAL record starts inside the record begun at offset " +
                                  std::to_string(record_start)));
        }
        record.assign(payload);
        record_start = pos;
        in_record = type == kFirst;
        break;
      case kMiddle:
      case kLast:
        if (!in_record) {
          return Status::corruption(file.where(pos, "WAL fragment without a first fragment"));
        }
        record.append(payload);
        in_record = type == kMiddle;
        break;
      default:
        return Status::corruption(
            file.where(pos, "unknown WAL record type " + std::to_string(type)));
    }
    pos += kWalHeaderSize + len;
    if ((type == kFull || type == kLast)) {
      std::string_view batch = record;
      if (lz4) {
        SKV_RETURN_IF_ERROR(lz4_uncompress(file, record_start, record, &plain));
        batch = plain;
      }
      SKV_RETURN_IF_ERROR(decode_batch(file, record_start, batch, out));
    }
  }
  if (in_record) {
    return Status::corruption(
        file.where(record_start, "WAL record cut short by the end of the file"));
  }
  return Status::OK();
}

}  // namespace skv::migration::surrealkv
