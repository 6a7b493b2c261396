// SoftwareKeyManager::from_key_file (skv/encryption.h): natively only, since it reads a file and
// checks its permissions.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "skv/encryption.h"

namespace skv {

namespace {

// Reads the whole of a small file (a key file is 32 to 65 bytes; more is refused).
Status read_small_file(int fd, const std::string& path, std::string* out) {
  char buf[128];
  out->clear();
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io_error("key file " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > 96) {
      return Status::invalid_argument("key file " + path +
                                      " is too long: it must hold 32 bytes or 64 hex digits");
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<SoftwareKeyManager>> SoftwareKeyManager::from_key_file(
    const std::string& path, uint32_t key_id) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found("key file " + path + " does not exist");
    if (err == ELOOP) {
      return Status::invalid_argument("key file " + path + " is a symbolic link");
    }
    return Status::io_error("key file " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  Status s;
  std::string text;
  if (::fstat(fd, &st) != 0) {
    s = Status::io_error("key file " + path + ": " + std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    s = Status::invalid_argument("key file " + path + " is not a regular file");
  } else if ((st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    s = Status::invalid_argument("key file " + path + " may be read or written by its group or " +
                                 "others (mode " + mode + "): chmod 600 it");
  } else {
    s = read_small_file(fd, path, &text);
  }
  ::close(fd);
  std::shared_ptr<SoftwareKeyManager> m;
  if (s.ok()) {
    SecretKey check;
    s = decode_root_key(text, "key file " + path, &check);
  }
  if (s.ok()) {
    m = std::make_shared<SoftwareKeyManager>();
    s = m->add_key(key_id, text);
  }
  // The text held the key: wipe it before it is freed.
  volatile char* p = text.data();
  for (size_t i = 0; i < text.size(); ++i) p[i] = 0;
  if (!s.ok()) return s;
  return m;
}

}  // namespace skv
