#include "util/log_window.h"

#include <algorithm>
#include <cstring>

#include "util/crc32c.h"
#include "util/status_macros.h"

namespace skv {

namespace {

bool all_zero(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == 0; });
}

}  // namespace

void LogWindow::reset() {
  file_size_ = file_->size();
  window_ = {};
  window_offset_ = 0;
}

Result<std::string_view> LogWindow::fetch(uint64_t offset, size_t n) {
  if (offset >= window_offset_ && offset + n <= window_offset_ + window_.size()) {
    return window_.substr(static_cast<size_t>(offset - window_offset_), n);
  }
  if (buffer_.size() < kChunk) buffer_.resize(kChunk);
  const auto want = static_cast<size_t>(std::min<uint64_t>(kChunk, file_size_ - offset));
  std::string_view got;
  window_ = {};
  SKV_RETURN_IF_ERROR(file_->read_at(offset, want, buffer_.data(), &got));
  if (got.size() < n) {
    return Status::io_error(file_->name() + ": short read at offset " + std::to_string(offset));
  }
  window_ = got;
  window_offset_ = offset;
  return window_.substr(0, n);
}

Status LogWindow::read_exact(uint64_t offset, size_t n, std::string* out) {
  out->resize(n);
  std::string_view got;
  SKV_RETURN_IF_ERROR(file_->read_at(offset, n, out->data(), &got));
  if (got.size() != n) {
    return Status::io_error(file_->name() + ": short read at offset " + std::to_string(offset));
  }
  if (got.data() != out->data()) std::memcpy(out->data(), got.data(), n);
  return Status();
}

Result<bool> LogWindow::zero_from(uint64_t offset) {
  while (offset < file_size_) {
    const auto n = static_cast<size_t>(std::min<uint64_t>(kChunk, file_size_ - offset));
    SKV_ASSIGN_OR_RETURN(std::string_view chunk, fetch(offset, n));
    if (!all_zero(chunk)) return false;
    offset += n;
  }
  return true;
}

Result<uint32_t> LogWindow::extend_crc(uint32_t crc, uint64_t offset, uint64_t n) {
  const uint64_t end = offset + n;
  while (offset < end) {
    const auto step = static_cast<size_t>(std::min<uint64_t>(kChunk, end - offset));
    SKV_ASSIGN_OR_RETURN(std::string_view chunk, fetch(offset, step));
    crc = crc32c::extend(crc, chunk.data(), chunk.size());
    offset += step;
  }
  return crc;
}

Result<std::string_view> LogWindow::header_bytes() {
  const auto have = static_cast<size_t>(std::min<uint64_t>(file_size_, kFileHeaderSize));
  if (have == 0) return std::string_view();
  return fetch(0, have);
}

Result<bool> LogWindow::header_torn(std::string_view bytes, FileKind kind) {
  size_t nonzero = bytes.size();
  while (nonzero > 0 && bytes[nonzero - 1] == 0) --nonzero;
  if (nonzero >= kFileHeaderSize) return false;
  std::string expected;
  FileHeader h;
  h.kind = kind;
  encode_file_header(h, &expected);
  // magic (0..3), kind (6) and flags (7) are fixed; the version (4, 5) may be another.
  for (size_t i = 0; i < nonzero && i < 8; ++i) {
    if (i == 4 || i == 5) continue;
    if (bytes[i] != expected[i]) return false;
  }
  return zero_from(bytes.size());
}

}  // namespace skv
