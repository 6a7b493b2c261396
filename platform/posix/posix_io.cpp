// File-descriptor helpers, the database directory and the list() name rule of the POSIX
// platform. See posix_internal.h.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "platform/posix/posix_error.h"
#include "platform/posix/posix_internal.h"
#include "platform/posix/posix_platform.h"

namespace skv::posix {

namespace {

constexpr std::string_view kObjectSuffix = ".sst";
constexpr std::string_view kManifestPrefix = "MANIFEST-";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_partial_name(std::string_view name) {
  return ends_with(name, PosixPlatform::kPartialSuffix);
}

// The list() name rule shared with MemoryPlatform.
bool is_object_name(std::string_view name) {
  return name.size() > kObjectSuffix.size() && ends_with(name, kObjectSuffix);
}
bool is_core_object_name(std::string_view name) {
  if (!is_object_name(name)) return false;
  std::string_view digits = name.substr(0, name.size() - kObjectSuffix.size());
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}
bool is_log_name(std::string_view name) {
  if (name.empty() || is_object_name(name) || is_partial_name(name)) return false;
  return (name[0] >= '0' && name[0] <= '9') ||
         name.substr(0, kManifestPrefix.size()) == kManifestPrefix;
}

int close_fd(int fd) { return ::close(fd) == 0 ? 0 : errno; }

namespace {

// Writes all of `data` with write_some(bytes, count, done) (a write(2) or pwrite(2) of the bytes
// not yet written, `done` of them being written), retrying EINTR and short writes. *written
// receives the bytes written, also on failure.
template <typename WriteSome>
Status write_loop(std::string_view data, const std::string& label, const char* op, size_t* written,
                  WriteSome&& write_some) {
  size_t done = 0;
  Status s;
  while (done < data.size()) {
    ssize_t r = write_some(data.data() + done, data.size() - done, done);
    if (r < 0) {
      if (errno == EINTR) continue;
      s = posix_error(label, op, errno);
      break;
    }
    if (r == 0) {  // no progress and no errno: treat as a full device rather than spin
      s = posix_error(label, op, ENOSPC);
      break;
    }
    done += static_cast<size_t>(r);
  }
  if (written != nullptr) *written = done;
  return s;
}

}  // namespace

// Writes all of `data` at the end of an O_APPEND descriptor (or at its file position).
Status write_all(int fd, std::string_view data, const std::string& label, const char* op,
                 size_t* written) {
  return write_loop(data, label, op, written,
                    [&](const char* p, size_t n, size_t) { return ::write(fd, p, n); });
}

// Writes all of `data` at `offset`.
Status pwrite_all(int fd, uint64_t offset, std::string_view data, const std::string& label,
                  const char* op, size_t* written) {
  return write_loop(data, label, op, written, [&](const char* p, size_t n, size_t done) {
    return ::pwrite(fd, p, n, static_cast<off_t>(offset + done));
  });
}

// Reads up to n bytes at offset into scratch, stopping early only at the end of the file.
Status pread_all(int fd, uint64_t offset, size_t n, char* scratch, const std::string& label,
                 std::string_view* result) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, scratch + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      *result = std::string_view(scratch, 0);
      return posix_error(label, "read", errno);
    }
    if (r == 0) break;  // end of file
    done += static_cast<size_t>(r);
  }
  *result = std::string_view(scratch, done);
  return Status::OK();
}

// Makes the data of a file durable (fdatasync; F_FULLFSYNC where fdatasync does not reach the
// disk).
Status sync_data(int fd, const std::string& label, const char* op) {
#if defined(__APPLE__)
  if (::fcntl(fd, F_FULLFSYNC) == 0) return Status::OK();
  if (::fsync(fd) == 0) return Status::OK();
#else
  int r;
  do {
    r = ::fdatasync(fd);
  } while (r != 0 && errno == EINTR);
  if (r == 0) return Status::OK();
#endif
  return posix_error(label, op, errno);
}

Status sync_dir_fd(int fd, const std::string& label) {
  int r;
  do {
    r = ::fsync(fd);
  } while (r != 0 && errno == EINTR);
  return r == 0 ? Status::OK() : posix_error(label, "sync directory", errno);
}

int open_at(int dir, const std::string& name, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::openat(dir, name.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

Result<uint64_t> file_size(int fd, const std::string& label) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return posix_error(label, "stat", errno);
  return static_cast<uint64_t>(st.st_size);
}

std::string PosixDir::label(std::string_view name) const {
  std::string s = path;
  s += '/';
  s.append(name);
  return s;
}

Status PosixDir::check_name(const std::string& name) const {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    return Status::invalid_argument(label(name) + ": invalid file name");
  }
  if (name == PosixPlatform::kLockFileName || is_partial_name(name)) {
    return Status::invalid_argument(label(name) + ": name reserved by the platform");
  }
  return Status::OK();
}

Status PosixDir::check_writable(const std::string& name) const {
  if (!read_only) return Status::OK();
  return Status::read_only(label(name) + ": the database is open read-only");
}

Result<std::vector<std::string>> PosixDir::entries() const {
  int dup_fd = open_at(fd, ".", O_RDONLY | O_DIRECTORY);
  if (dup_fd < 0) return posix_error(path, "list", errno);
  DIR* d = ::fdopendir(dup_fd);
  if (d == nullptr) {
    int err = errno;
    close_fd(dup_fd);
    return posix_error(path, "list", err);
  }
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    struct dirent* e = ::readdir(d);
    if (e == nullptr) break;
    std::string_view n(e->d_name);
    if (n == "." || n == ".." || e->d_type == DT_DIR) continue;
    names.emplace_back(n);
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return posix_error(path, "list", err);
  return names;
}

}  // namespace skv::posix
