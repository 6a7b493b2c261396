// File handles of the POSIX platform: log files (O_APPEND writes, or pwrites over zeros reserved
// ahead; pread, fdatasync, ftruncate), buffered object writers that rename "<name>.partial" into
// place on finish(), and object readers.
// See posix_platform.h for the contract.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

#include "platform/posix/posix_error.h"
#include "platform/posix/posix_internal.h"
#include "platform/posix/posix_platform.h"
#include "util/status_macros.h"

namespace skv::posix {

namespace {

constexpr size_t kObjectBufferSize = 64 * 1024;

// Appends go to the end of an O_APPEND descriptor until room is reserved ahead (reserve()):
// from then on the file holds zeros past its last appended byte, the descriptor loses O_APPEND,
// and each append is a pwrite at size(), over those zeros. A sync after a write over zeros already
// in the file does not have to grow it: on ext4 here it took about half as long as one after an
// append (docs/wal.md, "Room ahead").
class PosixLogFile final : public LogFile {
 public:
  PosixLogFile(std::shared_ptr<const PosixDir> dir, std::string name, int fd, uint64_t size)
      : dir_(std::move(dir)),
        name_(std::move(name)),
        label_(dir_->label(name_)),
        fd_(fd),
        size_(size),
        stored_(size) {}
  ~PosixLogFile() override { static_cast<void>(close()); }

  const std::string& name() const override { return name_; }

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(check_open());
    size_t written = 0;
    const uint64_t at = size_.load(std::memory_order_relaxed);
    Status s = positional_ ? pwrite_all(fd_, at, data, label_, "append", &written)
                           : write_all(fd_, data, label_, "append", &written);
    size_.store(at + written, std::memory_order_release);
    stored_ = std::max(stored_, at + written);
    SKV_RETURN_IF_ERROR(s);
    if (deferred_room_ > stored_) {
      // The record is written; the zeros only make later syncs cheaper. If they cannot be laid
      // (a full disk, a file size limit), appends go on without them rather than fail.
      static_cast<void>(lay_zeros(std::exchange(deferred_room_, 0)));
    }
    return Status::OK();
  }

  Status sync() override {
    SKV_RETURN_IF_ERROR(check_open());
    return sync_data(fd_, label_, "sync");
  }

  uint64_t size() const override { return size_.load(std::memory_order_acquire); }

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    SKV_RETURN_IF_ERROR(check_open());
    // The file ends at the last appended byte, whatever zeros lie after it.
    const uint64_t end = size_.load(std::memory_order_acquire);
    const size_t want =
        offset >= end ? 0 : static_cast<size_t>(std::min<uint64_t>(n, end - offset));
    return pread_all(fd_, offset, want, scratch, label_, result);
  }

  Status truncate(uint64_t size) override {
    SKV_RETURN_IF_ERROR(check_open());
    uint64_t now = size_.load(std::memory_order_acquire);
    if (size > now) {
      return Status::invalid_argument(label_ + ": truncate to " + std::to_string(size) +
                                      " would grow a file of " + std::to_string(now) + " bytes");
    }
    int r;
    do {
      r = ::ftruncate(fd_, static_cast<off_t>(size));
    } while (r != 0 && errno == EINTR);
    if (r != 0) return posix_error(label_, "truncate", errno);
    size_.store(size, std::memory_order_release);
    stored_ = size;
    deferred_room_ = 0;
    return Status::OK();
  }

  Status reserve(uint64_t bytes) override {
    SKV_RETURN_IF_ERROR(check_open());
    if (bytes <= stored_) return Status::OK();
    if (size_.load(std::memory_order_relaxed) == 0) {
      // An empty file gets its zeros after its first append, so it never starts with them: a
      // reader that opens it meanwhile (verify, recovery after a crash) finds its header first.
      deferred_room_ = bytes;
      return Status::OK();
    }
    return lay_zeros(bytes);
  }

  Status close() override {
    if (fd_ < 0) return Status::OK();
    int err = close_fd(fd_);
    fd_ = -1;
    return err == 0 ? Status::OK() : posix_error(label_, "close", err);
  }

 private:
  Status check_open() const {
    return fd_ >= 0 ? Status::OK() : Status::io_error(label_ + ": file is closed");
  }

  // Writes zeros from stored_ up to `bytes`.
  Status lay_zeros(uint64_t bytes) {
    if (!positional_) {
      // From here on appends say where they go: with O_APPEND, Linux would put a pwrite at the
      // end of the file, after the zeros.
      const int flags = ::fcntl(fd_, F_GETFL);
      if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_APPEND) != 0) {
        return posix_error(label_, "reserve", errno);
      }
      positional_ = true;
    }
    static constexpr size_t kZeroChunk = 64 * 1024;
    static const std::string zeros(kZeroChunk, '\0');
    while (stored_ < bytes) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kZeroChunk, bytes - stored_));
      size_t written = 0;
      Status s =
          pwrite_all(fd_, stored_, std::string_view(zeros.data(), n), label_, "reserve", &written);
      stored_ += written;
      SKV_RETURN_IF_ERROR(s);
    }
    return Status::OK();
  }

  std::shared_ptr<const PosixDir> dir_;
  const std::string name_;
  const std::string label_;
  int fd_;
  std::atomic<uint64_t> size_;  // the end of the appended bytes
  // Writer only: the file's length in storage (size_ plus the zeros reserved after it), and
  // whether appends are pwrites at size_ (once room was reserved) rather than O_APPEND writes.
  uint64_t stored_;
  bool positional_ = false;
  uint64_t deferred_room_ = 0;  // room asked for while the file was empty
};

class PosixObjectWriter final : public ObjectWriter {
 public:
  PosixObjectWriter(std::shared_ptr<const PosixDir> dir, std::string name, int fd)
      : dir_(std::move(dir)),
        name_(std::move(name)),
        partial_(name_ + std::string(PosixPlatform::kPartialSuffix)),
        label_(dir_->label(name_)),
        fd_(fd) {
    buffer_.reserve(kObjectBufferSize);
  }
  ~PosixObjectWriter() override { abort(); }

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(check_writable());
    size_ += data.size();
    if (buffer_.size() + data.size() <= kObjectBufferSize) {
      buffer_.append(data);
      return Status::OK();
    }
    SKV_RETURN_IF_ERROR(flush());
    if (data.size() >= kObjectBufferSize) return write_through(data);
    buffer_.append(data);
    return Status::OK();
  }

  uint64_t size() const override { return size_; }

  Status finish() override {
    SKV_RETURN_IF_ERROR(check_writable());
    SKV_RETURN_IF_ERROR(flush());
    Status s = sync_data(fd_, label_, "finish: sync");
    if (s.ok()) {
      int err = close_fd(fd_);
      fd_ = -1;
      if (err != 0) s = posix_error(label_, "finish: close", err);
    }
    if (s.ok() && ::renameat(dir_->fd, partial_.c_str(), dir_->fd, name_.c_str()) != 0) {
      s = posix_error(label_, "finish: rename", errno);
    }
    if (!s.ok()) {
      error_ = s;  // abort() (or the destructor) removes the partial file
      return s;
    }
    done_ = true;
    return s;
  }

  void abort() override {
    if (done_) return;
    done_ = true;
    if (fd_ >= 0) close_fd(fd_);
    fd_ = -1;
    ::unlinkat(dir_->fd, partial_.c_str(), 0);  // best effort
  }

 private:
  Status check_writable() const {
    if (done_) return Status::invalid_argument(label_ + ": object already finished or aborted");
    return error_;  // a failed write leaves the file in an unknown state: every later call fails
  }
  Status write_through(std::string_view data) {
    Status s = write_all(fd_, data, label_, "append", nullptr);
    if (!s.ok()) error_ = s;
    return s;
  }
  Status flush() {
    if (buffer_.empty()) return Status::OK();
    Status s = write_through(buffer_);
    buffer_.clear();
    return s;
  }

  std::shared_ptr<const PosixDir> dir_;
  const std::string name_;
  const std::string partial_;
  const std::string label_;
  int fd_;
  std::string buffer_;
  uint64_t size_ = 0;
  Status error_;
  bool done_ = false;
};

class PosixObjectReader final : public ObjectReader {
 public:
  PosixObjectReader(std::string name, std::string label, int fd, uint64_t size)
      : name_(std::move(name)), label_(std::move(label)), fd_(fd), size_(size) {}
  ~PosixObjectReader() override { close_fd(fd_); }

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    if (offset >= size_) {
      *result = std::string_view(scratch, 0);
      return Status::OK();
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    return pread_all(fd_, offset, n, scratch, label_, result);
  }

 private:
  const std::string name_;
  const std::string label_;
  const int fd_;
  const uint64_t size_;
};

}  // namespace

std::unique_ptr<LogFile> make_log_file(std::shared_ptr<const PosixDir> dir, std::string name,
                                       int fd, uint64_t size) {
  return std::make_unique<PosixLogFile>(std::move(dir), std::move(name), fd, size);
}

std::unique_ptr<ObjectWriter> make_object_writer(std::shared_ptr<const PosixDir> dir,
                                                 std::string name, int fd) {
  return std::make_unique<PosixObjectWriter>(std::move(dir), std::move(name), fd);
}

std::unique_ptr<ObjectReader> make_object_reader(std::string name, std::string label, int fd,
                                                 uint64_t size) {
  return std::make_unique<PosixObjectReader>(std::move(name), std::move(label), fd, size);
}

}  // namespace skv::posix
