// The POSIX platform's Storage: database directories, their exclusive lock, the two stores over
// one directory, and pointer records. See posix_platform.h for the contract.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <set>
#include <utility>

#include "platform/posix/posix_error.h"
#include "platform/posix/posix_internal.h"
#include "platform/posix/posix_platform.h"
#include "util/status_macros.h"

namespace skv {

using posix::close_fd;
using posix::file_size;
using posix::is_log_name;
using posix::is_object_name;
using posix::is_partial_name;
using posix::open_at;
using posix::PosixDir;
using posix::sync_data;
using posix::sync_dir_fd;
using posix::write_all;

namespace {

Status remove_file(const PosixDir& dir, const std::string& name) {
  SKV_RETURN_IF_ERROR(dir.check_name(name));
  SKV_RETURN_IF_ERROR(dir.check_writable(name));
  if (::unlinkat(dir.fd, name.c_str(), 0) != 0) {
    return posix_error(dir.label(name), "remove", errno);
  }
  return Status::OK();
}

Result<std::vector<std::string>> list_names(const PosixDir& dir, bool (*keep)(std::string_view)) {
  SKV_ASSIGN_OR_RETURN(std::vector<std::string> names, dir.entries());
  names.erase(
      std::remove_if(names.begin(), names.end(), [keep](const std::string& n) { return !keep(n); }),
      names.end());
  return names;
}

class PosixLogStore final : public LogStore {
 public:
  explicit PosixLogStore(std::shared_ptr<const PosixDir> dir) : dir_(std::move(dir)) {}

  Result<std::unique_ptr<LogFile>> create(const std::string& name) override {
    return open_file(name, O_CREAT | O_TRUNC, "create");
  }
  Result<std::unique_ptr<LogFile>> open(const std::string& name) override {
    return open_file(name, 0, "open");
  }
  Status remove(const std::string& name) override { return remove_file(*dir_, name); }
  Result<std::vector<std::string>> list() override { return list_names(*dir_, is_log_name); }

 private:
  Result<std::unique_ptr<LogFile>> open_file(const std::string& name, int flags, const char* op) {
    SKV_RETURN_IF_ERROR(dir_->check_name(name));
    if (flags != 0) SKV_RETURN_IF_ERROR(dir_->check_writable(name));
    const std::string label = dir_->label(name);
    // Read-only: appends, truncates and syncs of the file then fail (EBADF), and a database the
    // process may only read opens.
    const int access = dir_->read_only ? O_RDONLY : (O_RDWR | O_APPEND);
    int fd = open_at(dir_->fd, name, access | flags, dir_->file_mode);
    if (fd < 0) return posix_error(label, op, errno);
    Result<uint64_t> size = file_size(fd, label);
    if (!size.ok()) {
      close_fd(fd);
      return size.status();
    }
    return posix::make_log_file(dir_, name, fd, *size);
  }

  std::shared_ptr<const PosixDir> dir_;
};

class PosixObjectStore final : public ObjectStore {
 public:
  explicit PosixObjectStore(std::shared_ptr<const PosixDir> dir) : dir_(std::move(dir)) {}

  Result<std::unique_ptr<ObjectWriter>> create(const std::string& name) override {
    SKV_RETURN_IF_ERROR(dir_->check_name(name));
    SKV_RETURN_IF_ERROR(dir_->check_writable(name));
    const std::string label = dir_->label(name);
    const std::string partial = name + std::string(PosixPlatform::kPartialSuffix);
    // The partial file is taken first, exclusively, so that of two writers racing for one name
    // at most one gets past the existence check below.
    int fd = open_at(dir_->fd, partial, O_WRONLY | O_CREAT | O_EXCL, dir_->file_mode);
    if (fd < 0) {
      if (errno == EEXIST) {
        return Status::invalid_argument(label + ": create: object is being written");
      }
      return posix_error(label, "create", errno);
    }
    struct stat st;
    int exists = ::fstatat(dir_->fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    int err = errno;
    if (exists == 0 || err != ENOENT) {
      close_fd(fd);
      ::unlinkat(dir_->fd, partial.c_str(), 0);
      if (exists == 0) return Status::invalid_argument(label + ": create: object already exists");
      return posix_error(label, "create", err);
    }
    return posix::make_object_writer(dir_, name, fd);
  }

  Result<std::unique_ptr<ObjectReader>> open(const std::string& name) override {
    SKV_RETURN_IF_ERROR(dir_->check_name(name));
    std::string label = dir_->label(name);
    int fd = open_at(dir_->fd, name, O_RDONLY);
    if (fd < 0) return posix_error(label, "open", errno);
    Result<uint64_t> size = file_size(fd, label);
    if (!size.ok()) {
      close_fd(fd);
      return size.status();
    }
    return posix::make_object_reader(name, std::move(label), fd, *size);
  }

  Status remove(const std::string& name) override { return remove_file(*dir_, name); }
  Result<std::vector<std::string>> list() override { return list_names(*dir_, is_object_name); }

 private:
  std::shared_ptr<const PosixDir> dir_;
};

// The directories this process holds locked, by identity (device and inode), so one directory
// reached by two paths (a symlink, a bind mount, a second mount) is one entry. The lock on LOCK
// itself belongs to the open file description, which refuses a second holder in this process
// too; the registry gives that case a clear message before any file is touched. Never destroyed,
// so a Storage released during static destruction still finds it.
struct LockRegistry {
  std::mutex mu;
  std::set<std::pair<dev_t, ino_t>> dirs;
};
LockRegistry& lock_registry() {
  static LockRegistry* registry = new LockRegistry;
  return *registry;
}

// Takes an exclusive lock on `fd` that belongs to its open file description, not to the process:
// closing some other descriptor of the same file (another handle, a library that opened it)
// does not release it, and a second description in this process is refused like another
// process. Linux: an OFD lock (F_OFD_SETLK), which also conflicts with classic fcntl locks of
// other processes; elsewhere flock(), which has the same ownership.
int lock_description(int fd) {
#ifdef F_OFD_SETLK
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return ::fcntl(fd, F_OFD_SETLK, &fl);
#else
  return ::flock(fd, LOCK_EX | LOCK_NB);
#endif
}

// One database's lock.
//   - A writer holds an entry of the registry, the lock on LOCK's description, and an exclusive
//     flock() on a description of the directory itself.
//   - A reader (StorageOptions::read_only) holds only a shared flock() on a description of the
//     directory: it creates nothing, not even LOCK, and any number of readers coexist.
// flock() locks of two descriptions conflict within one process as between processes, so a
// reader and a writer refuse each other wherever they run.
class DbLock {
 public:
  DbLock() = default;
  DbLock(const DbLock&) = delete;
  DbLock& operator=(const DbLock&) = delete;
  ~DbLock() {
    if (fd_ >= 0) close_fd(fd_);  // releases the lock
    if (dir_fd_ >= 0) close_fd(dir_fd_);
    if (registered_) {
      LockRegistry& r = lock_registry();
      std::lock_guard<std::mutex> guard(r.mu);
      r.dirs.erase(id_);
    }
  }

  Status acquire(const PosixDir& dir) {
    const std::string busy =
        dir.path + ": database is already open (locked by another handle or process)";
    struct stat st;
    if (::fstat(dir.fd, &st) != 0) return posix_error(dir.path, "stat database directory", errno);
    {
      LockRegistry& r = lock_registry();
      std::lock_guard<std::mutex> guard(r.mu);
      if (!r.dirs.emplace(st.st_dev, st.st_ino).second) return Status::busy(busy);
    }
    id_ = {st.st_dev, st.st_ino};
    registered_ = true;
    SKV_RETURN_IF_ERROR(lock_dir(dir, LOCK_EX,
                                 dir.path + ": database is open read-only (by another handle or "
                                            "process); it cannot be opened for writing meanwhile"));
    const std::string label = dir.label(PosixPlatform::kLockFileName);
    fd_ =
        open_at(dir.fd, std::string(PosixPlatform::kLockFileName), O_RDWR | O_CREAT, dir.file_mode);
    if (fd_ < 0) return posix_error(label, "open lock file", errno);
    if (lock_description(fd_) != 0) {
      if (errno == EACCES || errno == EAGAIN || errno == EWOULDBLOCK) return Status::busy(busy);
      return posix_error(label, "lock", errno);
    }
    return Status::OK();
  }

  Status acquire_shared(const PosixDir& dir) {
    return lock_dir(dir, LOCK_SH,
                    dir.path +
                        ": database is open for writing (by another handle or process); "
                        "it cannot be opened read-only meanwhile");
  }

 private:
  Status lock_dir(const PosixDir& dir, int op, const std::string& busy) {
    dir_fd_ = open_at(dir.fd, ".", O_RDONLY | O_DIRECTORY);
    if (dir_fd_ < 0) return posix_error(dir.path, "open database directory", errno);
    int r;
    do {
      r = ::flock(dir_fd_, op | LOCK_NB);
    } while (r != 0 && errno == EINTR);
    if (r == 0) return Status::OK();
    if (errno == EWOULDBLOCK) return Status::busy(busy);
    return posix_error(dir.path, "lock database directory", errno);
  }

  std::pair<dev_t, ino_t> id_{};
  bool registered_ = false;
  int fd_ = -1;
  int dir_fd_ = -1;
};

class PosixStorage final : public Storage {
 public:
  PosixStorage(std::shared_ptr<const PosixDir> dir, std::unique_ptr<DbLock> lock)
      : dir_(std::move(dir)), lock_(std::move(lock)), logs_(dir_), objects_(dir_) {}

  const std::string& location() const override { return dir_->path; }
  LogStore& logs() override { return logs_; }
  ObjectStore& objects() override { return objects_; }

  Status sync_dir() override { return sync_dir_fd(dir_->fd, dir_->path); }

  // A hard link when `source` is a directory of this platform on the same file system.
  Status link_from(Storage& source, const std::string& name) override {
    auto* from = dynamic_cast<PosixStorage*>(&source);
    if (from == nullptr) return Storage::link_from(source, name);
    SKV_RETURN_IF_ERROR(dir_->check_name(name));
    SKV_RETURN_IF_ERROR(dir_->check_writable(name));
    if (::linkat(from->dir_->fd, name.c_str(), dir_->fd, name.c_str(), 0) == 0) {
      return Status::OK();
    }
    const int err = errno;
    if (err == EXDEV || err == EPERM || err == EOPNOTSUPP || err == EMLINK) {
      return Status::not_supported(dir_->label(name) + ": cannot hard-link from " +
                                   from->dir_->label(name));
    }
    return posix_error(dir_->label(name), "link from " + from->dir_->label(name), err);
  }

  Status write_pointer(const std::string& name, std::string_view contents) override {
    SKV_RETURN_IF_ERROR(dir_->check_name(name));
    SKV_RETURN_IF_ERROR(dir_->check_writable(name));
    const std::string label = dir_->label(name);
    const std::string partial = name + std::string(PosixPlatform::kPartialSuffix);
    std::lock_guard<std::mutex> guard(pointer_mu_);  // one writer of partial files at a time
    int fd = open_at(dir_->fd, partial, O_WRONLY | O_CREAT | O_TRUNC, dir_->file_mode);
    if (fd < 0) return posix_error(label, "write pointer", errno);
    Status s = write_all(fd, contents, label, "write pointer", nullptr);
    if (s.ok()) s = sync_data(fd, label, "write pointer: sync");
    int err = close_fd(fd);
    if (s.ok() && err != 0) s = posix_error(label, "write pointer: close", err);
    if (s.ok() && ::renameat(dir_->fd, partial.c_str(), dir_->fd, name.c_str()) != 0) {
      s = posix_error(label, "write pointer: rename", errno);
    }
    if (!s.ok()) {
      ::unlinkat(dir_->fd, partial.c_str(), 0);
      return s;
    }
    return sync_dir_fd(dir_->fd, dir_->path);
  }

  Result<std::string> read_pointer(const std::string& name) override {
    SKV_RETURN_IF_ERROR(dir_->check_name(name));
    const std::string label = dir_->label(name);
    int fd = open_at(dir_->fd, name, O_RDONLY);
    if (fd < 0) return posix_error(label, "read pointer", errno);
    std::string out;
    char buf[4096];
    Status s;
    for (;;) {
      ssize_t r = ::read(fd, buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) s = posix_error(label, "read pointer", errno);
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    close_fd(fd);
    if (!s.ok()) return s;
    return out;
  }

 private:
  std::shared_ptr<const PosixDir> dir_;
  std::unique_ptr<DbLock> lock_;
  PosixLogStore logs_;
  PosixObjectStore objects_;
  std::mutex pointer_mu_;
};

// Whether the directory holds `marker` (false for an empty marker).
Result<bool> has_marker(const PosixDir& dir, const std::string& marker) {
  if (marker.empty()) return false;
  SKV_RETURN_IF_ERROR(dir.check_name(marker));
  struct stat st;
  if (::fstatat(dir.fd, marker.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
  if (errno == ENOENT) return false;
  return posix_error(dir.label(marker), "look for the database's pointer", errno);
}

// Removes the partial files an interrupted object write or pointer write of an earlier holder of
// the lock left: "<object>.partial" for names the core gives objects, and "<marker>.partial".
// REQUIRES: the lock is held and the directory holds `marker` (it is a database). Nothing else
// is touched: a "video.mp4.partial" of the user's stays.
void remove_own_partials(const PosixDir& dir, const std::string& marker) {
  Result<std::vector<std::string>> names = dir.entries();
  if (!names.ok()) return;  // best effort: a leftover only costs space
  for (const auto& name : *names) {
    if (!is_partial_name(name)) continue;
    std::string_view stem(name);
    stem.remove_suffix(PosixPlatform::kPartialSuffix.size());
    if (stem == marker || posix::is_core_object_name(stem)) ::unlinkat(dir.fd, name.c_str(), 0);
  }
}

// The permission bits of a directory holding files of `file_mode`: a search bit wherever there
// is a read bit (0600 -> 0700).
mode_t dir_mode_for(mode_t file_mode) { return file_mode | ((file_mode & 0444) >> 2); }

// mkdir -p, each new directory with `mode`. After creating a directory, syncs its parent so the
// new entry is durable.
Status make_dirs(const std::string& path, mode_t mode) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::OK();
    return posix_error(path, "create database directory", ENOTDIR);
  }
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (prefix.empty() || prefix.back() == '/') continue;  // "/" itself, or "a//b"
    if (::mkdir(prefix.c_str(), mode) != 0) {
      if (errno == EEXIST) continue;
      return posix_error(prefix, "create database directory", errno);
    }
    size_t slash = prefix.find_last_of('/');
    std::string parent =
        slash == std::string::npos ? "." : prefix.substr(0, slash == 0 ? 1 : slash);
    int fd = open_at(AT_FDCWD, parent, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return posix_error(parent, "open directory", errno);
    Status s = sync_dir_fd(fd, parent);
    close_fd(fd);
    SKV_RETURN_IF_ERROR(s);
  }
  return Status::OK();
}

}  // namespace

uint64_t PosixClock::now_nanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

PosixPlatform::PosixPlatform(std::shared_ptr<Executor> executor) : executor_(std::move(executor)) {}

Result<std::unique_ptr<Storage>> PosixPlatform::open_storage(const std::string& path,
                                                             const StorageOptions& options) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p.empty()) return Status::invalid_argument("open storage: empty database path");
  if (options.read_only && options.create_new) {
    return Status::invalid_argument(p +
                                    ": open storage: read_only and create_new exclude each other");
  }
  const auto file_mode = static_cast<mode_t>(options.file_mode & 0777);
  if (options.create_new) {
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0) {
      return Status::invalid_argument(p +
                                      ": already exists (a new database needs a path where "
                                      "nothing is)");
    }
    if (errno != ENOENT) return posix_error(p, "look for the new database's directory", errno);
  }
  const bool create = (options.create_if_missing || options.create_new) && !options.read_only;
  if (create) SKV_RETURN_IF_ERROR(make_dirs(p, dir_mode_for(file_mode)));

  int fd = open_at(AT_FDCWD, p, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(p + ": no such database (no such directory)");
    return posix_error(p, "open database directory", err);
  }
  auto dir = std::make_shared<const PosixDir>(p, fd, file_mode, options.read_only);
  // Without create_if_missing (and always read-only) a directory is taken only if it holds a
  // database: nothing (not even the lock file) is created in any other directory.
  Result<bool> marked = has_marker(*dir, options.marker);
  if (!marked.ok()) return marked.status();
  if (!create && !options.marker.empty() && !*marked) {
    return Status::not_found(p + ": not an skv database (it has no " + options.marker + ")");
  }
  auto lock = std::make_unique<DbLock>();
  if (options.read_only) {
    SKV_RETURN_IF_ERROR(lock->acquire_shared(*dir));
  } else {
    SKV_RETURN_IF_ERROR(lock->acquire(*dir));
    if (*marked) remove_own_partials(*dir, options.marker);
  }
  return std::unique_ptr<Storage>(std::make_unique<PosixStorage>(std::move(dir), std::move(lock)));
}

}  // namespace skv
