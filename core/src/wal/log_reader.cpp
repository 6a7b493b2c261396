#include "wal/log_reader.h"
#include "util/status_macros.h"

#include <algorithm>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

namespace skv::log {

namespace {

// The most payload bytes checksummed while looking for an intact record behind a damaged header
// (beyond a multiple of the scanned range). Bounds the scan on adversarial tails; when it runs
// out the damaged record is taken for what it looks like first, a torn tail.
constexpr uint64_t kScanBudgetBase = uint64_t{64} << 20;

uint32_t record_crc(uint32_t length, std::string_view payload) {
  char len_buf[4];
  encode_fixed32(len_buf, length);
  return crc32c::extend(crc32c::value(len_buf, 4), payload.data(), payload.size());
}

}  // namespace

Reader::Reader(const LogFile* file, FileKind expected_kind, crypto::CipherSource* ciphers)
    : file_(file), kind_(expected_kind), ciphers_(ciphers), in_(file) {}

Status Reader::corruption(uint64_t offset, const std::string& what) const {
  return Status::corruption(file_->name() + ": corrupt log record at offset " +
                            std::to_string(offset) + ": " + what);
}

bool Reader::end_with_torn_tail() {
  at_end_ = true;
  torn_tail_ = true;
  return false;
}

bool Reader::end_with_hole() {
  hole_ = true;
  return end_with_torn_tail();
}

// Whether a record of `length` (already known to fit in the file) at `offset` carries a correct
// checksum. Charges `length` to *budget; if the budget cannot pay, sets it to 0 and says no.
Result<bool> Reader::record_checks_out(uint64_t offset, uint32_t length, uint32_t masked_crc,
                                       uint64_t* budget) {
  if (length > *budget) {
    *budget = 0;
    return false;
  }
  *budget -= length;
  char len_buf[4];
  encode_fixed32(len_buf, length);
  SKV_ASSIGN_OR_RETURN(
      uint32_t crc, in_.extend_crc(crc32c::value(len_buf, 4), offset + kRecordHeaderSize, length));
  return crc == crc32c::unmask(masked_crc);
}

// Whether an intact record (sane length, inside the file, correct checksum) starts at any offset
// in [begin, end) and ends by `end`. Used to tell a cut write, after which nothing intact can
// follow, from a damaged header in the middle of the log.
Result<bool> Reader::intact_record_after(uint64_t begin, uint64_t end) {
  if (end <= begin) return false;
  uint64_t budget = kScanBudgetBase + 4 * (end - begin);
  for (uint64_t q = begin; q + kRecordHeaderSize < end; ++q) {
    SKV_ASSIGN_OR_RETURN(std::string_view h, in_.fetch(q, kRecordHeaderSize));
    const uint32_t length = decode_fixed32(h.data() + 4);
    if (length == 0 || length > kMaxRecordSize) continue;
    if (length > end - q - kRecordHeaderSize) continue;
    const uint32_t masked_crc = decode_fixed32(h.data());
    SKV_ASSIGN_OR_RETURN(bool intact, record_checks_out(q, length, masked_crc, &budget));
    if (intact) return true;
    if (budget == 0) return false;
  }
  return false;
}

// Whether the record at `begin` (ending at `end`, or only its header known) lies over a hole:
// an unwritten stretch of a write that was never synced (docs/wal.md, "Holes"). A hole is zeros
// either from `begin` to the end of its sector (`begin` ends the last good record, where the last
// sync may have ended inside a sector), or over a whole aligned sector that starts inside the
// record. Sectors are clipped at the end of the file.
Result<bool> Reader::over_hole(uint64_t begin, uint64_t end) {
  const uint64_t file_end = in_.file_size();
  auto zeros = [&](uint64_t from, uint64_t to) -> Result<bool> {
    to = std::min(to, file_end);
    if (from >= to) return false;
    SKV_ASSIGN_OR_RETURN(std::string_view bytes, in_.fetch(from, static_cast<size_t>(to - from)));
    return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
  };
  const uint64_t first = (begin + kSectorSize - 1) / kSectorSize * kSectorSize;
  if (first > begin) {
    SKV_ASSIGN_OR_RETURN(bool rest_of_sector, zeros(begin, first));
    if (rest_of_sector) return true;
  }
  for (uint64_t h = first; h < std::min(end, file_end); h += kSectorSize) {
    SKV_ASSIGN_OR_RETURN(bool sector, zeros(h, h + kSectorSize));
    if (sector) return true;
  }
  return false;
}

Status Reader::read_header(FileHeader* header) {
  if (header_checked_) {
    if (!header_status_.ok()) return header_status_;
    if (pos_ >= kFileHeaderSize) *header = header_;
    return Status();
  }
  in_.reset();
  SKV_ASSIGN_OR_RETURN(std::string_view bytes, in_.header_bytes());
  Result<FileHeader> decoded = decode_file_header(bytes, kind_, file_->name());
  if (!decoded.ok()) {
    SKV_ASSIGN_OR_RETURN(bool torn, in_.header_torn(bytes, kind_));
    bool hole = false;
    if (!torn) {
      SKV_ASSIGN_OR_RETURN(hole, over_hole(0, kFileHeaderSize));
      if (!hole) return decoded.status();
    }
    header_checked_ = true;
    pos_ = 0;
    valid_end_ = 0;
    if (hole) {
      end_with_hole();
    } else {
      end_with_torn_tail();
    }
    return Status();
  }
  Result<std::shared_ptr<const crypto::FileCipher>> cipher =
      crypto::cipher_for_header(ciphers_, *decoded, file_->name());
  if (!cipher.ok()) {
    header_checked_ = true;
    header_status_ = cipher.status();
    return header_status_;
  }
  cipher_ = std::move(*cipher);
  header_ = *decoded;
  *header = header_;
  header_checked_ = true;
  pos_ = kFileHeaderSize;
  valid_end_ = kFileHeaderSize;
  return Status();
}

Result<bool> Reader::read_record(std::string* record, uint64_t* offset) {
  if (!header_checked_) {
    FileHeader ignored;
    SKV_RETURN_IF_ERROR(read_header(&ignored));
  }
  if (!header_status_.ok()) return header_status_;
  if (at_end_) return false;
  const uint64_t remaining = in_.file_size() - pos_;
  if (remaining == 0) {
    at_end_ = true;
    return false;
  }
  if (remaining < kRecordHeaderSize) return end_with_torn_tail();  // cut inside a header

  char header[kRecordHeaderSize];
  {
    SKV_ASSIGN_OR_RETURN(std::string_view h, in_.fetch(pos_, kRecordHeaderSize));
    std::memcpy(header, h.data(), kRecordHeaderSize);
  }
  const uint32_t masked_crc = decode_fixed32(header);
  const uint32_t length = decode_fixed32(header + 4);
  const uint64_t payload_offset = pos_ + kRecordHeaderSize;

  if (length == 0) {
    SKV_ASSIGN_OR_RETURN(bool zeros, in_.zero_from(payload_offset));
    if (zeros) return end_with_torn_tail();
    // A length of zero is never written: zeros over the header may be a hole.
    SKV_ASSIGN_OR_RETURN(bool hole, over_hole(pos_, payload_offset));
    if (hole) return end_with_hole();
    return corruption(pos_, "zero record length");
  }
  if (length > kMaxRecordSize) {
    return corruption(pos_, "record length " + std::to_string(length) + " exceeds the maximum");
  }
  if (length > remaining - kRecordHeaderSize) {
    // Runs past the end of the file: a cut write, unless intact data follows the header, or the
    // bytes up to the end are a whole record under a damaged length (the checksum covers the
    // length, so it tells).
    const uint64_t rest = remaining - kRecordHeaderSize;
    if (rest > 0 && rest <= kMaxRecordSize) {
      std::string tail;
      SKV_RETURN_IF_ERROR(in_.read_exact(payload_offset, static_cast<size_t>(rest), &tail));
      if (record_crc(static_cast<uint32_t>(rest), tail) == crc32c::unmask(masked_crc)) {
        return corruption(pos_, "record length " + std::to_string(length) +
                                    " is damaged: the record ends at the end of the file");
      }
    }
    SKV_ASSIGN_OR_RETURN(bool intact, intact_record_after(payload_offset + 1, in_.file_size()));
    if (!intact) return end_with_torn_tail();
    return corruption(pos_, "record length " + std::to_string(length) +
                                " runs past the end of the file, but intact records follow");
  }

  // A sealed record is read into sealed_ and opened into *record once its checksum passes.
  std::string* stored = cipher_ != nullptr ? &sealed_ : record;
  if (length <= LogWindow::kChunk - kRecordHeaderSize) {
    SKV_ASSIGN_OR_RETURN(std::string_view payload, in_.fetch(payload_offset, length));
    stored->assign(payload.data(), payload.size());
  } else {
    SKV_RETURN_IF_ERROR(in_.read_exact(payload_offset, length, stored));
  }
  const uint64_t record_end = payload_offset + length;
  if (record_crc(length, *stored) != crc32c::unmask(masked_crc)) {
    // Only a record whose tail never reached the disk is torn: storage writes whole sectors, so
    // an unwritten tail is zero from a sector boundary inside the record to the end of the file.
    // A full record with damage elsewhere (a flipped bit) is corruption, even at the end.
    size_t last_nonzero = stored->size();
    while (last_nonzero > 0 && (*stored)[last_nonzero - 1] == 0) --last_nonzero;
    const uint64_t zero_start = payload_offset + last_nonzero;
    const uint64_t aligned = (zero_start + kSectorSize - 1) / kSectorSize * kSectorSize;
    stored->clear();
    record->clear();
    SKV_ASSIGN_OR_RETURN(bool zeros, in_.zero_from(record_end));
    if (zeros && aligned < record_end) {
      SKV_ASSIGN_OR_RETURN(bool intact, intact_record_after(payload_offset + 1, in_.file_size()));
      if (!intact) return end_with_torn_tail();
    }
    SKV_ASSIGN_OR_RETURN(bool hole, over_hole(pos_, record_end));
    if (hole) return end_with_hole();
    return corruption(pos_, "checksum mismatch");
  }
  if (cipher_ != nullptr) {
    // The checksum passed, so these are the bytes that were written here: a failure now is
    // damage or tampering, never a torn tail. open() empties *record when it fails.
    Status opened = cipher_->open(pos_, sealed_, record);
    // A large record's buffer is not kept for the life of the reader.
    if (sealed_.capacity() > LogWindow::kChunk) {
      std::string().swap(sealed_);
    } else {
      sealed_.clear();
    }
    SKV_RETURN_IF_ERROR(opened);
  }
  *offset = pos_;
  pos_ = record_end;
  valid_end_ = pos_;
  return true;
}

}  // namespace skv::log
