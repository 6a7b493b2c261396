#include "vlog/vlog_writer.h"

#include <cassert>
#include <utility>

#include "format/file_header.h"
#include "format/file_names.h"
#include "skv/options.h"
#include "util/status_macros.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

namespace {

FileHeader value_log_header(uint64_t file_number) {
  FileHeader h;
  h.kind = FileKind::ValueLog;
  h.file_number = file_number;
  return h;
}

}  // namespace

VlogWriter::VlogWriter(std::unique_ptr<LogFile> file, uint64_t file_number)
    : out_(std::move(file), value_log_header(file_number)), file_number_(file_number) {
  assert(file_number_ < kMaxFileNumber);
}

VlogWriter::~VlogWriter() = default;

Result<ValuePointer> VlogWriter::add(std::string_view key, std::string_view value) {
  if (!out_.status().ok()) return out_.status();
  if (key.empty()) return Status::invalid_argument(name() + ": empty key");
  if (key.size() > kMaxKeySize) {
    return Status::invalid_argument(name() + ": key of " + std::to_string(key.size()) +
                                    " bytes exceeds the maximum key size");
  }
  if (value.size() > kMaxValueSize) {
    return Status::invalid_argument(name() + ": value of " + std::to_string(value.size()) +
                                    " bytes exceeds the maximum value size");
  }
  ValuePointer p;
  p.file_number = file_number_;
  p.offset = out_.next_offset();
  p.size = entry_size(key.size(), value.size());
  if (p.offset > kMaxValueLogOffset - p.size) {
    return Status::invalid_argument(name() + ": value log is full");
  }
  encode_entry(key, value, out_.start(static_cast<size_t>(p.size)));
  SKV_RETURN_IF_ERROR(out_.append());
  return p;
}

Status VlogWriter::sync() { return out_.sync(); }

}  // namespace skv::vlog
