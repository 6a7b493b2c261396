#include "vlog/vlog_writer.h"

#include <cassert>
#include <utility>

#include "crypto/cipher_source.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "skv/options.h"
#include "util/status_macros.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

namespace {

FileHeader value_log_header(uint64_t file_number, const crypto::FileCipher* cipher) {
  FileHeader h;
  h.kind = FileKind::ValueLog;
  h.file_number = file_number;
  if (cipher != nullptr) crypto::fill_header(cipher->envelope(), &h);
  return h;
}

}  // namespace

VlogWriter::VlogWriter(std::unique_ptr<LogFile> file, uint64_t file_number,
                       std::shared_ptr<const crypto::FileCipher> cipher)
    : out_(std::move(file), value_log_header(file_number, cipher.get())),
      file_number_(file_number),
      cipher_(std::move(cipher)) {
  assert(file_number_ < kMaxFileNumber);
  if (cipher_ != nullptr && out_.size() != 0) {
    out_.fail(Status::invalid_argument(out_.name() +
                                       ": sealed entries are only written to a new, empty file"));
  }
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
  p.size = entry_size(key.size(), value.size(), cipher_ != nullptr ? kSealOverhead : 0);
  if (p.offset > kMaxValueLogOffset - p.size) {
    return Status::invalid_argument(name() + ": value log is full");
  }
  std::string* buf = out_.start(static_cast<size_t>(p.size));
  if (cipher_ != nullptr) {
    encode_sealed_entry(*cipher_, p.offset, key, value, buf);
  } else {
    encode_entry(key, value, buf);
  }
  SKV_RETURN_IF_ERROR(out_.append());
  return p;
}

Status VlogWriter::sync() { return out_.sync(); }

}  // namespace skv::vlog
