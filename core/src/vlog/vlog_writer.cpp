#include "vlog/vlog_writer.h"

#include <cassert>
#include <utility>

#include "format/file_header.h"
#include "format/file_names.h"
#include "skv/options.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

namespace {
// The reusable buffer is released after an append bigger than this, so one large value does not
// pin its memory for the life of the writer.
constexpr size_t kKeepBufferCapacity = size_t{1} << 20;
}  // namespace

VlogWriter::VlogWriter(std::unique_ptr<LogFile> file, uint64_t file_number)
    : file_(std::move(file)), file_number_(file_number) {
  assert(file_number_ < kMaxFileNumber);
  if (file_->size() == 0) {
    FileHeader h;
    h.kind = FileKind::ValueLog;
    h.file_number = file_number_;
    encode_file_header(h, &pending_header_);
  }
}

VlogWriter::~VlogWriter() {
  if (file_ != nullptr) {
    Status s = file_->close();
    (void)s;
  }
}

Result<ValuePointer> VlogWriter::add(std::string_view key, std::string_view value) {
  if (!error_.ok()) return error_;
  if (key.empty()) return Status::invalid_argument(file_->name() + ": empty key");
  if (key.size() > kMaxKeySize) {
    return Status::invalid_argument(file_->name() + ": key of " + std::to_string(key.size()) +
                                    " bytes exceeds the maximum key size");
  }
  if (value.size() > kMaxValueSize) {
    return Status::invalid_argument(file_->name() + ": value of " + std::to_string(value.size()) +
                                    " bytes exceeds the maximum value size");
  }
  ValuePointer p;
  p.file_number = file_number_;
  p.offset = file_->size() + pending_header_.size();
  p.size = entry_size(key.size(), value.size());
  if (p.offset > kMaxValueLogOffset - p.size) {
    return Status::invalid_argument(file_->name() + ": value log is full");
  }
  buf_.clear();
  buf_.reserve(pending_header_.size() + static_cast<size_t>(p.size));
  buf_.append(pending_header_);
  encode_entry(key, value, &buf_);
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
  return p;
}

Status VlogWriter::sync() {
  if (!error_.ok()) return error_;
  Status s = file_->sync();
  if (!s.ok()) error_ = s;
  return s;
}

uint64_t VlogWriter::size() const { return file_->size(); }

const std::string& VlogWriter::name() const { return file_->name(); }

Status VlogWriter::close() { return file_->close(); }

}  // namespace skv::vlog
