#include "vlog/vlog_scanner.h"

#include <algorithm>
#include <cstring>

#include "skv/options.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status_macros.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

namespace {

// The most body bytes checksummed while looking for an intact entry after a damaged one, beyond
// four times the scanned range. When it runs out, the damage is taken for a torn tail.
constexpr uint64_t kScanBudgetBase = uint64_t{64} << 20;

}  // namespace

VlogScanner::VlogScanner(const LogFile* file, uint64_t file_number, crypto::CipherSource* ciphers)
    : file_(file), file_number_(file_number), ciphers_(ciphers), in_(file) {}

Status VlogScanner::corruption(uint64_t offset, const std::string& what) const {
  return Status::corruption(file_->name() + ": corrupt value log entry at offset " +
                            std::to_string(offset) + ": " + what);
}

bool VlogScanner::end_with_torn_tail() {
  at_end_ = true;
  torn_tail_ = true;
  return false;
}

// Whether the entry at `offset` with these lengths (known to fit in the file) carries a correct
// checksum. Charges its body to *budget; when the budget cannot pay, sets it to 0 and says no.
Result<bool> VlogScanner::entry_checks_out(uint64_t offset, uint32_t key_len, uint32_t value_len,
                                           uint32_t masked_crc, uint64_t* budget) {
  const uint64_t body_len = uint64_t{key_len} + value_len + overhead_;
  if (body_len > *budget) {
    *budget = 0;
    return false;
  }
  *budget -= body_len;
  char lengths[8];
  encode_fixed32(lengths, key_len);
  encode_fixed32(lengths + 4, value_len);
  SKV_ASSIGN_OR_RETURN(uint32_t crc, in_.extend_crc(crc32c::value(lengths, sizeof(lengths)),
                                                    offset + kEntryHeaderSize, body_len));
  return crc32c::mask(crc) == masked_crc;
}

// Whether an intact entry (sane lengths, inside [begin, end), a correct checksum) starts at any
// offset in [begin, end). Tells a cut write, after which nothing intact can follow, from damage
// in the middle of the file.
Result<bool> VlogScanner::intact_entry_after(uint64_t begin, uint64_t end) {
  if (end <= begin) return false;
  uint64_t budget = kScanBudgetBase + 4 * (end - begin);
  for (uint64_t q = begin; end - q >= kMinEntrySize; ++q) {
    SKV_ASSIGN_OR_RETURN(std::string_view h, in_.fetch(q, kEntryHeaderSize));
    const uint32_t key_len = decode_fixed32(h.data() + 4);
    const uint32_t value_len = decode_fixed32(h.data() + 8);
    if (key_len == 0 || key_len > kMaxKeySize || value_len > kMaxValueSize) continue;
    if (entry_size(key_len, value_len, overhead_) > end - q) continue;
    const uint32_t masked_crc = decode_fixed32(h.data());
    SKV_ASSIGN_OR_RETURN(bool intact, entry_checks_out(q, key_len, value_len, masked_crc, &budget));
    if (intact) return true;
    if (budget == 0) return false;
  }
  return false;
}

// For an entry at pos_ that runs past the end of the file: whether the bytes up to the end are a
// whole entry under one damaged length field (the checksum covers both lengths, so it tells).
Result<bool> VlogScanner::lengths_damaged(uint32_t masked_crc, uint32_t key_len,
                                          uint32_t value_len) {
  // The stored body runs to the end of the file; `rest` is what its key and value would hold.
  const uint64_t stored = in_.file_size() - pos_ - kEntryHeaderSize;
  if (stored <= overhead_) return false;
  const uint64_t rest = stored - overhead_;
  if (rest > uint64_t{kMaxKeySize} + kMaxValueSize) return false;
  struct Lengths {
    uint64_t key;
    uint64_t value;
  };
  Lengths candidates[2];
  size_t n = 0;
  if (rest >= key_len && rest - key_len <= kMaxValueSize) {
    candidates[n++] = {key_len, rest - key_len};  // the value length is damaged
  }
  if (rest > value_len && rest - value_len <= kMaxKeySize) {
    candidates[n++] = {rest - value_len, value_len};  // the key length is damaged
  }
  if (n == 0) return false;
  std::string body;
  SKV_RETURN_IF_ERROR(in_.read_exact(pos_ + kEntryHeaderSize, static_cast<size_t>(stored), &body));
  for (size_t i = 0; i < n; ++i) {
    if (entry_crc(static_cast<uint32_t>(candidates[i].key),
                  static_cast<uint32_t>(candidates[i].value), body) == masked_crc) {
      return true;
    }
  }
  return false;
}

Status VlogScanner::check_header(std::string_view bytes) {
  SKV_ASSIGN_OR_RETURN(FileHeader h, decode_file_header(bytes, FileKind::ValueLog, file_->name()));
  if (h.file_number != file_number_) {
    return Status::corruption(file_->name() + ": bad file header at offset 0: file number " +
                              std::to_string(h.file_number) + " is not the file's own");
  }
  SKV_ASSIGN_OR_RETURN(cipher_, crypto::cipher_for_header(ciphers_, h, file_->name()));
  overhead_ = cipher_ != nullptr ? kSealOverhead : 0;
  header_ = h;
  return Status();
}

Status VlogScanner::read_header(FileHeader* header) {
  if (header_checked_) {
    if (!header_status_.ok()) return header_status_;
    if (pos_ >= kFileHeaderSize) *header = header_;
    return Status();
  }
  in_.reset();
  SKV_ASSIGN_OR_RETURN(std::string_view bytes, in_.header_bytes());
  Status s = check_header(bytes);
  if (!s.ok()) {
    bool torn = false;
    if (s.is_corruption()) {
      SKV_ASSIGN_OR_RETURN(torn, in_.header_torn(bytes, FileKind::ValueLog));
    }
    header_checked_ = true;
    if (!torn) {
      header_status_ = s;
      return s;
    }
    pos_ = 0;
    valid_end_ = 0;
    end_with_torn_tail();
    return Status();
  }
  *header = header_;
  header_checked_ = true;
  pos_ = kFileHeaderSize;
  valid_end_ = kFileHeaderSize;
  return Status();
}

Result<bool> VlogScanner::next(VlogEntry* entry) {
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
  if (remaining < kEntryHeaderSize) return end_with_torn_tail();  // cut inside a header

  char header[kEntryHeaderSize];
  {
    SKV_ASSIGN_OR_RETURN(std::string_view h, in_.fetch(pos_, kEntryHeaderSize));
    std::memcpy(header, h.data(), kEntryHeaderSize);
  }
  const uint32_t masked_crc = decode_fixed32(header);
  const uint32_t key_len = decode_fixed32(header + 4);
  const uint32_t value_len = decode_fixed32(header + 8);

  if (key_len == 0) {
    SKV_ASSIGN_OR_RETURN(bool zeros, in_.zero_from(pos_ + 4));
    if (zeros) return end_with_torn_tail();
    return corruption(pos_, "zero key length");
  }
  if (key_len > kMaxKeySize) {
    return corruption(pos_, "key length " + std::to_string(key_len) + " exceeds the maximum");
  }
  if (value_len > kMaxValueSize) {
    return corruption(pos_, "value length " + std::to_string(value_len) + " exceeds the maximum");
  }
  const uint64_t size = entry_size(key_len, value_len, overhead_);
  if (size > remaining) {
    SKV_ASSIGN_OR_RETURN(bool damaged, lengths_damaged(masked_crc, key_len, value_len));
    if (damaged) {
      return corruption(pos_, "entry lengths (key " + std::to_string(key_len) + ", value " +
                                  std::to_string(value_len) +
                                  ") are damaged: the entry ends at the end of the file");
    }
    SKV_ASSIGN_OR_RETURN(bool intact, intact_entry_after(pos_ + 1, in_.file_size()));
    if (!intact) return end_with_torn_tail();
    return corruption(pos_, "entry of " + std::to_string(size) +
                                " bytes runs past the end of the file, but intact entries follow");
  }

  // The body (key ‖ value, or its sealed form) goes into entry->value first, and is split (or
  // opened) once it checks out.
  const uint64_t body_offset = pos_ + kEntryHeaderSize;
  const auto body_len = static_cast<size_t>(size - kEntryHeaderSize);
  std::string& body = entry->value;
  if (body_len <= LogWindow::kChunk - kEntryHeaderSize) {
    SKV_ASSIGN_OR_RETURN(std::string_view b, in_.fetch(body_offset, body_len));
    body.assign(b.data(), b.size());
  } else {
    SKV_RETURN_IF_ERROR(in_.read_exact(body_offset, body_len, &body));
  }
  const uint64_t entry_end = pos_ + size;
  if (entry_crc(key_len, value_len, body) != masked_crc) {
    // Only an entry whose end never reached the disk is torn: storage writes whole sectors, so
    // an unwritten end is zero from a sector boundary inside the entry to the end of the file. A
    // whole entry with damage elsewhere (a flipped bit) is corruption, even at the end.
    size_t last_nonzero = body.size();
    while (last_nonzero > 0 && body[last_nonzero - 1] == 0) --last_nonzero;
    uint64_t zero_start = body_offset + last_nonzero;
    if (last_nonzero == 0) {
      size_t h = kEntryHeaderSize;
      while (h > 0 && header[h - 1] == 0) --h;
      zero_start = pos_ + h;
    }
    const uint64_t aligned = (zero_start + kSectorSize - 1) / kSectorSize * kSectorSize;
    body.clear();
    entry->key.clear();
    if (aligned < entry_end) {
      SKV_ASSIGN_OR_RETURN(bool zeros, in_.zero_from(entry_end));
      if (zeros) {
        SKV_ASSIGN_OR_RETURN(bool intact, intact_entry_after(pos_ + 1, in_.file_size()));
        if (!intact) return end_with_torn_tail();
      }
    }
    return corruption(pos_, "checksum mismatch");
  }
  if (cipher_ != nullptr) {
    // The checksum passed, so these are the bytes written here: a failure now is damage or
    // tampering, never a torn tail.
    std::string plain;
    Status opened = cipher_->open(pos_, body, &plain);
    body.clear();
    entry->key.clear();
    SKV_RETURN_IF_ERROR(opened);
    body.swap(plain);
  }
  entry->key.assign(body.data(), key_len);
  body.erase(0, key_len);
  entry->pointer = ValuePointer{file_number_, pos_, size};
  pos_ = entry_end;
  valid_end_ = pos_;
  return true;
}

}  // namespace skv::vlog
