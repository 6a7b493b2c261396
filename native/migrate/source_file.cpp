#include "native/migrate/source_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace skv::migration {

namespace {

Status from_errno(const std::string& path, std::string_view what, int err) {
  std::string msg = path + ": " + std::string(what) + ": " + std::strerror(err);
  if (err == ENOENT) return Status::not_found(msg);
  return Status::io_error(msg);
}

}  // namespace

SourceFile::SourceFile(std::string path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

SourceFile::SourceFile(SourceFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

SourceFile& SourceFile::operator=(SourceFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

SourceFile::~SourceFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<SourceFile> SourceFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return from_errno(path, "open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return from_errno(path, "stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::invalid_argument(path + ": not a regular file");
  }
  return SourceFile(path, fd, static_cast<uint64_t>(st.st_size));
}

Status SourceFile::read_at(uint64_t offset, size_t n, std::string* out) const {
  if (offset > size_ || n > size_ - offset) {
    return Status::corruption(where(offset, "read of " + std::to_string(n) +
                                                " bytes past the end of a file of " +
                                                std::to_string(size_) + " bytes"));
  }
  out->resize(n);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, out->data() + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return from_errno(path_, "read at offset " + std::to_string(offset + done), errno);
    }
    if (r == 0) {
      return Status::corruption(where(offset + done, "file shrank while it was read"));
    }
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

std::string SourceFile::where(uint64_t offset, std::string_view what) const {
  return path_ + ": " + std::string(what) + " at offset " + std::to_string(offset);
}

Result<std::vector<std::string>> list_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return from_errno(dir, "list", errno);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace skv::migration
