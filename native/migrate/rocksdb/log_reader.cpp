#include "native/migrate/rocksdb/log_reader.h"

#include <zstd.h>

#include <algorithm>

#include "native/migrate/rocksdb/decode.h"
#include "util/crc32c.h"

namespace skv::migration::rocksdb {

namespace {
constexpr uint64_t kBlock = 32768;
constexpr size_t kLegacyHeader = 7;
constexpr size_t kRecyclableHeader = 11;
}  // namespace

LogReader::LogReader(const SourceFile* file, uint64_t log_number, Tail tail)
    : file_(file), log_number_(log_number), tail_(tail) {}

bool LogReader::damage(uint64_t offset, const std::string& what, bool truncated) {
  done_ = true;
  bool quiet = tail_ == Tail::kPointInTime || (tail_ == Tail::kTruncation && truncated);
  if (quiet && !valid_record_after(offset)) {
    tail_damaged_ = true;
    return false;
  }
  status_ = Status::corruption(file_->where(offset, what));
  return false;
}

// Whether a fragment with a valid checksum starts at `offset`.
bool LogReader::valid_fragment_at(uint64_t offset) {
  uint64_t block_end = (offset / kBlock + 1) * kBlock;
  if (offset + kLegacyHeader > file_->size() || offset + kLegacyHeader > block_end) return false;
  size_t avail = static_cast<size_t>(std::min(block_end, file_->size()) - offset);
  std::string buf;
  if (!file_->read_at(offset, avail, &buf).ok()) return false;
  uint32_t len = static_cast<unsigned char>(buf[4]) | (static_cast<unsigned char>(buf[5]) << 8);
  unsigned type = static_cast<unsigned char>(buf[6]);
  if (type == 0) return false;
  size_t h = (type >= 5 && type <= 8) || type == 11 ? kRecyclableHeader : kLegacyHeader;
  if (h + len > avail) return false;
  return crc32c::unmask(load32(buf.data())) == crc32c::value(buf.data() + 6, h - 6 + len);
}

// Whether a valid fragment follows the damage at `offset`: where the damaged fragment's own
// length says the next one starts, or at the start of any later block. Then the damage is not a
// torn tail but a hole in the middle of the log.
bool LogReader::valid_record_after(uint64_t offset) {
  if (after_bad_ > offset) {
    uint64_t next = after_bad_;
    if (kBlock - next % kBlock < kLegacyHeader) next = (next / kBlock + 1) * kBlock;
    if (valid_fragment_at(next)) return true;
  }
  for (uint64_t b = (offset / kBlock + 1) * kBlock; b + kLegacyHeader <= file_->size();
       b += kBlock) {
    if (valid_fragment_at(b)) return true;
  }
  return false;
}

LogReader::Frag LogReader::read_fragment(std::string* payload, uint64_t* frag_offset) {
  for (;;) {
    if (pos_ >= file_->size()) return kEof;
    uint64_t bstart = pos_ / kBlock * kBlock;
    if (bstart != block_start_) {
      size_t avail = static_cast<size_t>(std::min<uint64_t>(kBlock, file_->size() - bstart));
      status_ = file_->read_at(bstart, avail, &block_);
      if (!status_.ok()) return kBad;
      block_start_ = bstart;
    }
    size_t in = static_cast<size_t>(pos_ - bstart);
    size_t left = block_.size() - in;
    const char* p = block_.data() + in;
    bool all_zero = std::all_of(p, p + left, [](char c) { return c == 0; });
    truncated_ = block_.size() < kBlock;
    if (left < kLegacyHeader) {
      if (!all_zero) {
        *frag_offset = pos_;
        return kBad;  // a torn header
      }
      if (block_.size() < kBlock) return kEof;
      pos_ = bstart + kBlock;
      continue;
    }
    unsigned type = static_cast<unsigned char>(p[6]);
    uint32_t len = static_cast<unsigned char>(p[4]) | (static_cast<unsigned char>(p[5]) << 8);
    if (type == 0) {
      // Padding at the end of a block (shorter than a recyclable header) or preallocated space.
      if (all_zero && left < kRecyclableHeader && block_.size() == kBlock) {
        pos_ = bstart + kBlock;
        continue;
      }
      if (all_zero) return kEof;
      *frag_offset = pos_;
      return kBad;
    }
    bool recyclable = (type >= 5 && type <= 8) || type == 11;
    size_t h = recyclable ? kRecyclableHeader : kLegacyHeader;
    *frag_offset = pos_;
    if (left < h || h + len > left) return kBad;
    truncated_ = false;
    uint32_t crc = crc32c::value(p + 6, h - 6 + len);
    if (crc32c::unmask(load32(p)) != crc) {
      after_bad_ = pos_ + h + len;
      return kBad;
    }
    pos_ += h + len;
    if (recyclable && load32(p + 7) != static_cast<uint32_t>(log_number_)) return kEof;
    payload->assign(p + h, len);
    switch (type) {
      case 1:
      case 5:
        return kFull;
      case 2:
      case 6:
        return kFirst;
      case 3:
      case 7:
        return kMiddle;
      case 4:
      case 8:
        return kLast;
      case 9:
        return kSetCompression;
      case 10:
      case 11:
        return kSkip;  // user-defined timestamp sizes: the keys carry their own
      default:
        if (type >= 0x80) return kSkip;
        status_ = Status::not_supported(
            file_->where(*frag_offset, "log record type " + std::to_string(type)));
        return kBad;
    }
  }
}

Status LogReader::decompress(std::string* record, uint64_t offset) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (ds == nullptr) return Status::io_error("out of memory for zstd");
  ZSTD_initDStream(ds);
  std::string out;
  ZSTD_inBuffer in{record->data(), record->size(), 0};
  char buf[16384];
  size_t r = 1;
  while (in.pos < in.size || r != 0) {
    ZSTD_outBuffer ob{buf, sizeof buf, 0};
    size_t before = in.pos;
    r = ZSTD_decompressStream(ds, &ob, &in);
    if (ZSTD_isError(r)) {
      ZSTD_freeDStream(ds);
      return Status::corruption(
          file_->where(offset, std::string("compressed WAL record: ") + ZSTD_getErrorName(r)));
    }
    out.append(buf, ob.pos);
    if (ob.pos == 0 && in.pos == before) break;
  }
  ZSTD_freeDStream(ds);
  if (r != 0) return Status::corruption(file_->where(offset, "compressed WAL record is cut short"));
  *record = std::move(out);
  return Status::OK();
}

bool LogReader::next(std::string* record, uint64_t* offset) {
  if (done_) return false;
  std::string frag;
  bool in_record = false;
  uint64_t frag_offset = 0;
  record->clear();
  for (;;) {
    Frag f = read_fragment(&frag, &frag_offset);
    if (!status_.ok()) {
      done_ = true;
      return false;
    }
    switch (f) {
      case kEof:
        done_ = true;
        if (in_record) return damage(*offset, "log record cut short by the end of the file", true);
        return false;
      case kBad:
        return damage(frag_offset, "log fragment fails its checksum or length", truncated_);
      case kSkip:
        first_ = false;
        continue;
      case kSetCompression: {
        if (!first_ || in_record || frag.size() < 4) {
          return damage(frag_offset, "misplaced compression record", false);
        }
        first_ = false;
        uint32_t type = load32(frag.data());
        if (type == 0) continue;
        if (type != 7) {
          done_ = true;
          status_ = Status::not_supported(
              file_->where(frag_offset, "WAL compression type " + std::to_string(type)));
          return false;
        }
        compressed_ = true;
        continue;
      }
      case kFull:
      case kFirst:
        if (in_record) return damage(frag_offset, "log record starts inside another", false);
        first_ = false;
        *offset = frag_offset;
        *record = frag;
        if (f == kFirst) {
          in_record = true;
          continue;
        }
        break;
      case kMiddle:
      case kLast:
        if (!in_record) {
          return damage(frag_offset, "log fragment without a first fragment", false);
        }
        record->append(frag);
        if (f == kMiddle) continue;
        break;
    }
    if (compressed_) {
      status_ = decompress(record, *offset);
      if (!status_.ok()) {
        done_ = true;
        return false;
      }
    }
    return true;
  }
}

}  // namespace skv::migration::rocksdb
