#include "util/log_appender.h"

#include <utility>

namespace skv {

LogAppender::LogAppender(std::unique_ptr<LogFile> file, const FileHeader& header)
    : file_(std::move(file)) {
  if (file_->size() == 0) encode_file_header(header, &pending_header_);
}

LogAppender::~LogAppender() {
  if (file_ != nullptr) {
    Status s = file_->close();
    (void)s;
  }
}

std::string* LogAppender::start(size_t bytes) {
  buf_.clear();
  buf_.reserve(pending_header_.size() + bytes);
  buf_.append(pending_header_);
  return &buf_;
}

Status LogAppender::append() {
  if (!error_.ok()) return error_;
  if (reserve_step_ != 0) {
    const uint64_t end = file_->size() + buf_.size();
    if (end > reserved_) {
      if (file_->reserve(end + reserve_step_).ok()) {
        reserved_ = end + reserve_step_;
      } else {
        reserve_step_ = 0;  // the append below grows the file, as without room
      }
    }
  }
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

Status LogAppender::release_room() {
  if (!error_.ok()) return error_;
  reserve_step_ = 0;
  if (reserved_ == 0) return Status();
  reserved_ = 0;
  Status s = file_->truncate(file_->size());
  if (!s.ok()) error_ = s;
  return s;
}

Status LogAppender::sync() {
  if (!error_.ok()) return error_;
  Status s = file_->sync();
  if (!s.ok()) error_ = s;
  return s;
}

}  // namespace skv
