#include "vlog/vlog_reader.h"

#include <cstring>
#include <utility>

#include "format/file_header.h"
#include "format/file_names.h"
#include "skv/options.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

namespace {

// Checks the header of a value log file named `file_number` and finds its cipher (null for a
// plaintext file).
Result<std::shared_ptr<const crypto::FileCipher>> check_header(const LogFile& file,
                                                               uint64_t file_number,
                                                               crypto::CipherSource* ciphers) {
  char scratch[kFileHeaderSize];
  std::string_view got;
  SKV_RETURN_IF_ERROR(file.read_at(0, kFileHeaderSize, scratch, &got));
  SKV_ASSIGN_OR_RETURN(FileHeader h, decode_file_header(got, FileKind::ValueLog, file.name()));
  if (h.file_number != file_number) {
    return Status::corruption(file.name() + ": bad file header at offset 0: file number " +
                              std::to_string(h.file_number) + " is not the file's own");
  }
  return crypto::cipher_for_header(ciphers, h, file.name());
}

Result<std::unique_ptr<LogFile>> open_file(LogStore& store, uint64_t file_number,
                                           const std::string& missing_detail) {
  const std::string name = vlog_file_name(file_number);
  Result<std::unique_ptr<LogFile>> file = store.open(name);
  if (!file.ok() && file.status().is_not_found()) {
    return Status::corruption(name + ": value log file is missing" + missing_detail);
  }
  return file;
}

}  // namespace

VlogReader::VlogReader(std::unique_ptr<LogFile> file, uint64_t file_number,
                       std::shared_ptr<const crypto::FileCipher> cipher)
    : file_(std::move(file)), file_number_(file_number), cipher_(std::move(cipher)) {}

VlogReader::~VlogReader() {
  Status s = file_->close();
  (void)s;
}

Result<std::unique_ptr<VlogReader>> VlogReader::open(LogStore& store, uint64_t file_number,
                                                     crypto::CipherSource* ciphers) {
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, open_file(store, file_number, ""));
  return open(std::move(file), file_number, ciphers);
}

Result<std::unique_ptr<VlogReader>> VlogReader::open(std::unique_ptr<LogFile> file,
                                                     uint64_t file_number,
                                                     crypto::CipherSource* ciphers) {
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<const crypto::FileCipher> cipher,
                       check_header(*file, file_number, ciphers));
  return std::unique_ptr<VlogReader>(
      new VlogReader(std::move(file), file_number, std::move(cipher)));
}

const std::string& VlogReader::name() const { return file_->name(); }

Status VlogReader::corruption(uint64_t offset, const std::string& what) const {
  return Status::corruption(file_->name() + ": corrupt value log entry at offset " +
                            std::to_string(offset) + ": " + what);
}

Status VlogReader::check_lengths(const ValuePointer& p, uint32_t key_len,
                                 uint32_t value_len) const {
  if (key_len > kMaxKeySize || value_len > kMaxValueSize ||
      entry_size(key_len, value_len, overhead()) != p.size) {
    return corruption(p.offset, "entry lengths (key " + std::to_string(key_len) + ", value " +
                                    std::to_string(value_len) + ") do not match the pointer's " +
                                    std::to_string(p.size) + " bytes");
  }
  return Status();
}

Status VlogReader::check_request(const ValuePointer& p, std::string_view key) const {
  if (p.file_number != file_number_) {
    return Status::invalid_argument(file_->name() + ": pointer names value log " +
                                    std::to_string(p.file_number));
  }
  if (key.empty() || key.size() > kMaxKeySize) {
    return Status::invalid_argument(file_->name() + ": key of " + std::to_string(key.size()) +
                                    " bytes is empty or too long");
  }
  Status valid = check_value_pointer(p);
  if (!valid.ok()) return corruption(p.offset, valid.message());
  if (p.size < entry_size(key.size(), 0, overhead())) {
    return corruption(p.offset, "pointer size " + std::to_string(p.size) +
                                    " is too small for a key of " + std::to_string(key.size()) +
                                    " bytes");
  }
  return Status();
}

Status VlogReader::get(const ValuePointer& p, std::string_view key, std::string* value) const {
  SKV_RETURN_IF_ERROR(check_request(p, key));
  // Nothing is allocated for an entry the file cannot hold. The size this handle knows may lag
  // appends made through another handle (a POSIX handle keeps its own), so an entry past it is
  // not refused at once: its header is read first, and must be there and agree with the pointer.
  const uint64_t file_size = file_->size();
  if (p.offset > file_size || p.size > file_size - p.offset) {
    char scratch[kEntryHeaderSize];
    std::string_view h;
    SKV_RETURN_IF_ERROR(file_->read_at(p.offset, kEntryHeaderSize, scratch, &h));
    if (h.size() != kEntryHeaderSize) {
      return corruption(p.offset, "entry of " + std::to_string(p.size) +
                                      " bytes runs past the end of the file (" +
                                      std::to_string(file_size) + " bytes)");
    }
    SKV_RETURN_IF_ERROR(
        check_lengths(p, decode_fixed32(h.data() + 4), decode_fixed32(h.data() + 8)));
  }
  const auto size = static_cast<size_t>(p.size);
  value->resize(size);
  std::string_view got;
  SKV_RETURN_IF_ERROR(file_->read_at(p.offset, size, value->data(), &got));
  return decode(p, key, got, value);
}

Status VlogReader::decode(const ValuePointer& p, std::string_view key, std::string_view got,
                          std::string* value) const {
  const auto size = static_cast<size_t>(p.size);
  if (got.size() != size) {
    return corruption(p.offset, "entry of " + std::to_string(p.size) +
                                    " bytes runs past the end of the file (read " +
                                    std::to_string(got.size()) + " bytes)");
  }
  const uint32_t masked_crc = decode_fixed32(got.data());
  const uint32_t key_len = decode_fixed32(got.data() + 4);
  const uint32_t value_len = decode_fixed32(got.data() + 8);
  SKV_RETURN_IF_ERROR(check_lengths(p, key_len, value_len));
  if (entry_crc(key_len, value_len, got.substr(kEntryHeaderSize)) != masked_crc) {
    return corruption(p.offset, "checksum mismatch");
  }
  if (cipher_ != nullptr) {
    // The checksum passed, so these are the bytes written here; the body opens only at the
    // offset, in the file and under the key it was sealed with.
    std::string plain;
    Status opened = cipher_->open(p.offset, got.substr(kEntryHeaderSize), &plain);
    value->clear();
    SKV_RETURN_IF_ERROR(opened);
    if (std::string_view(plain).substr(0, key_len) != key) {
      return corruption(p.offset, "entry holds a different key");
    }
    plain.erase(0, key_len);
    value->swap(plain);
    return Status();
  }
  if (got.substr(kEntryHeaderSize, key_len) != key) {
    return corruption(p.offset, "entry holds a different key");
  }
  const size_t value_start = kEntryHeaderSize + key_len;
  if (got.data() == value->data()) {
    value->erase(0, value_start);
  } else {
    value->assign(got.data() + value_start, value_len);
  }
  return Status();
}

Status VlogReader::read_span(uint64_t offset, size_t n, char* scratch,
                             std::string_view* got) const {
  std::string_view read;
  SKV_RETURN_IF_ERROR(file_->read_at(offset, n, scratch, &read));
  // A platform may answer with a view of its own memory: copy it into the caller's buffer.
  if (read.data() != scratch && !read.empty()) std::memmove(scratch, read.data(), read.size());
  *got = std::string_view(scratch, read.size());
  return Status();
}

Status VlogReader::get_in(const ValuePointer& p, std::string_view key, std::string_view span,
                          uint64_t span_offset, std::string* value) const {
  SKV_RETURN_IF_ERROR(check_request(p, key));
  if (p.offset < span_offset || p.offset - span_offset > span.size()) {
    return Status::invalid_argument(file_->name() + ": the " + std::to_string(span.size()) +
                                    " bytes given at offset " + std::to_string(span_offset) +
                                    " do not hold the entry at offset " + std::to_string(p.offset));
  }
  std::string_view got = span.substr(static_cast<size_t>(p.offset - span_offset));
  if (got.size() > p.size) got = got.substr(0, static_cast<size_t>(p.size));
  return decode(p, key, got, value);
}

Status read_value(LogStore& store, const ValuePointer& p, std::string_view key, std::string* value,
                  crypto::CipherSource* ciphers) {
  SKV_ASSIGN_OR_RETURN(
      std::unique_ptr<LogFile> file,
      open_file(store, p.file_number, " (value at offset " + std::to_string(p.offset) + ")"));
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<VlogReader> reader,
                       VlogReader::open(std::move(file), p.file_number, ciphers));
  return reader->get(p, key, value);
}

}  // namespace skv::vlog
