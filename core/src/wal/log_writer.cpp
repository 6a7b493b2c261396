#include "wal/log_writer.h"
#include "util/status_macros.h"

#include <utility>

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

namespace skv::log {

namespace {
// The reusable buffer is released after a write bigger than this, so one huge record does not
// pin its memory for the life of the writer.
constexpr size_t kKeepBufferCapacity = size_t{1} << 20;
}  // namespace

Writer::Writer(std::unique_ptr<LogFile> file, const FileHeader& header) : file_(std::move(file)) {
  if (file_->size() == 0) encode_file_header(header, &pending_header_);
}

Writer::~Writer() {
  if (file_ != nullptr) {
    Status s = file_->close();  // best effort; unsynced bytes were never promised
    (void)s;
  }
}

Status Writer::check_payload(std::string_view payload) {
  if (payload.empty()) return Status::invalid_argument("log record payload is empty");
  if (payload.size() > kMaxRecordSize) {
    return Status::invalid_argument("log record payload of " + std::to_string(payload.size()) +
                                    " bytes exceeds the maximum record size");
  }
  return Status();
}

// record := masked_crc:fixed32 length:fixed32 payload[length]
// masked_crc = mask(crc32c(length:fixed32 ‖ payload))
void Writer::append_framed(std::string_view payload) {
  char header[kRecordHeaderSize];
  encode_fixed32(header + 4, static_cast<uint32_t>(payload.size()));
  uint32_t crc = crc32c::value(header + 4, 4);
  crc = crc32c::extend(crc, payload.data(), payload.size());
  encode_fixed32(header, crc32c::mask(crc));
  buf_.append(header, kRecordHeaderSize);
  buf_.append(payload.data(), payload.size());
}

Status Writer::write_buffer() {
  Status s = file_->append(buf_);
  if (buf_.capacity() > kKeepBufferCapacity) {
    std::string().swap(buf_);
  } else {
    buf_.clear();
  }
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  pending_header_.clear();
  return Status();
}

Status Writer::add_record(std::string_view payload) {
  if (!error_.ok()) return error_;
  SKV_RETURN_IF_ERROR(check_payload(payload));
  buf_.clear();
  buf_.reserve(pending_header_.size() + kRecordHeaderSize + payload.size());
  buf_.append(pending_header_);
  append_framed(payload);
  return write_buffer();
}

Status Writer::add_records(const std::vector<std::string_view>& payloads) {
  if (!error_.ok()) return error_;
  size_t total = pending_header_.size();
  for (std::string_view p : payloads) {
    SKV_RETURN_IF_ERROR(check_payload(p));
    total += kRecordHeaderSize + p.size();
  }
  if (payloads.empty()) return Status();
  buf_.clear();
  buf_.reserve(total);
  buf_.append(pending_header_);
  for (std::string_view p : payloads) append_framed(p);
  return write_buffer();
}

Status Writer::sync() {
  if (!error_.ok()) return error_;
  return file_->sync();
}

uint64_t Writer::size() const { return file_->size(); }

const std::string& Writer::name() const { return file_->name(); }

Status Writer::close() { return file_->close(); }

}  // namespace skv::log
