#include "wal/log_writer.h"
#include "util/status_macros.h"

#include <utility>

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

namespace skv::log {

Writer::Writer(std::unique_ptr<LogFile> file, const FileHeader& header)
    : out_(std::move(file), header) {}

Writer::~Writer() = default;

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
void Writer::append_framed(std::string_view payload, std::string* buf) {
  char header[kRecordHeaderSize];
  encode_fixed32(header + 4, static_cast<uint32_t>(payload.size()));
  uint32_t crc = crc32c::value(header + 4, 4);
  crc = crc32c::extend(crc, payload.data(), payload.size());
  encode_fixed32(header, crc32c::mask(crc));
  buf->append(header, kRecordHeaderSize);
  buf->append(payload.data(), payload.size());
}

Status Writer::add_record(std::string_view payload) {
  if (!out_.status().ok()) return out_.status();
  SKV_RETURN_IF_ERROR(check_payload(payload));
  append_framed(payload, out_.start(kRecordHeaderSize + payload.size()));
  return out_.append();
}

Status Writer::add_records(const std::vector<std::string_view>& payloads) {
  if (!out_.status().ok()) return out_.status();
  size_t total = 0;
  for (std::string_view p : payloads) {
    SKV_RETURN_IF_ERROR(check_payload(p));
    total += kRecordHeaderSize + p.size();
  }
  if (payloads.empty()) return Status();
  std::string* buf = out_.start(total);
  for (std::string_view p : payloads) append_framed(p, buf);
  return out_.append();
}

Status Writer::sync() { return out_.sync(); }

uint64_t Writer::size() const { return out_.size(); }

const std::string& Writer::name() const { return out_.name(); }

Status Writer::close() { return out_.close(); }

}  // namespace skv::log
