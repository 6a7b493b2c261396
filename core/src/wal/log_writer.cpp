#include "wal/log_writer.h"

#include <algorithm>
#include <utility>

#include "crypto/cipher_source.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status_macros.h"
#include "wal/log_format.h"

namespace skv::log {

namespace {

FileHeader sealed_header(FileHeader header, const crypto::FileCipher* cipher) {
  if (cipher != nullptr) crypto::fill_header(cipher->envelope(), &header);
  return header;
}

}  // namespace

Writer::Writer(std::unique_ptr<LogFile> file, const FileHeader& header,
               std::shared_ptr<const crypto::FileCipher> cipher)
    : out_(std::move(file), sealed_header(header, cipher.get())), cipher_(std::move(cipher)) {
  if (cipher_ != nullptr && out_.size() != 0) {
    out_.fail(Status::invalid_argument(out_.name() +
                                       ": sealed records are only written to a new, empty file"));
  }
}

Writer::~Writer() = default;

Status Writer::check_payload(std::string_view payload) const {
  if (payload.empty()) return Status::invalid_argument("log record payload is empty");
  const size_t overhead = cipher_ != nullptr ? crypto::FileCipher::kOverhead : 0;
  if (payload.size() > kMaxRecordSize - overhead) {
    return Status::invalid_argument("log record payload of " + std::to_string(payload.size()) +
                                    " bytes exceeds the maximum record size");
  }
  return Status();
}

// record := masked_crc:fixed32 length:fixed32 payload[length]
// masked_crc = mask(crc32c(length:fixed32 ‖ payload))
// In an encrypted file the stored payload is cipher.seal(record offset, payload) and the length
// and checksum cover those sealed bytes.
void Writer::append_framed(std::string_view payload, uint64_t buf_offset, std::string* buf) const {
  const size_t start = buf->size();
  buf->append(kRecordHeaderSize, '\0');
  if (cipher_ != nullptr) {
    cipher_->seal(buf_offset + start, payload, buf);
  } else {
    buf->append(payload.data(), payload.size());
  }
  char* header = buf->data() + start;
  const size_t stored = buf->size() - start - kRecordHeaderSize;
  encode_fixed32(header + 4, static_cast<uint32_t>(stored));
  uint32_t crc = crc32c::value(header + 4, 4);
  crc = crc32c::extend(crc, header + kRecordHeaderSize, stored);
  encode_fixed32(header, crc32c::mask(crc));
}

Status Writer::add_record(std::string_view payload) {
  if (!out_.status().ok()) return out_.status();
  SKV_RETURN_IF_ERROR(check_payload(payload));
  const size_t overhead = cipher_ != nullptr ? crypto::FileCipher::kOverhead : 0;
  append_framed(payload, out_.size(), out_.start(kRecordHeaderSize + payload.size() + overhead));
  return out_.append();
}

Status Writer::add_records(const std::vector<std::string_view>& payloads) {
  if (!out_.status().ok()) return out_.status();
  const size_t overhead = cipher_ != nullptr ? crypto::FileCipher::kOverhead : 0;
  size_t total = 0;
  for (std::string_view p : payloads) {
    SKV_RETURN_IF_ERROR(check_payload(p));
    total += kRecordHeaderSize + p.size() + overhead;
  }
  if (payloads.empty()) return Status();
  // Written in stretches of up to the appender's reused buffer (a group of large batches would
  // otherwise take a fresh buffer of several MiB every time, every page of it a fault). Each
  // stretch starts at the file's end (with the file header, if pending, in front), so each
  // record is sealed at its own offset. A stretch is cut only after it holds a record: a pending
  // file header never goes out as a write of its own.
  constexpr size_t kStretch = LogAppender::kKeepBufferCapacity;
  std::string* buf = out_.start(std::min(total, kStretch));
  bool holds_records = false;
  for (std::string_view p : payloads) {
    const size_t framed = kRecordHeaderSize + p.size() + overhead;
    if (holds_records && buf->size() + framed > kStretch) {
      SKV_RETURN_IF_ERROR(out_.append());
      buf = out_.start(std::min(total, kStretch));
    }
    append_framed(p, out_.size(), buf);
    holds_records = true;
    total -= framed;
  }
  return out_.append();
}

Status Writer::sync() { return out_.sync(); }

uint64_t Writer::size() const { return out_.size(); }

const std::string& Writer::name() const { return out_.name(); }

Status Writer::close() { return out_.close(); }

}  // namespace skv::log
