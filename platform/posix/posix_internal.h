// Internal to platform/posix: the file-descriptor helpers every part of the POSIX platform uses
// (each retries EINTR and reports failures through posix_error()), the shared database directory,
// the list() name rule, and the factories of file handles (posix_files.cpp).
//
// Thread safety: the helpers are plain system calls and may run on any thread. PosixDir is
// immutable after construction and shared by a Storage and every file it opened.

#ifndef SKV_PLATFORM_POSIX_POSIX_INTERNAL_H_
#define SKV_PLATFORM_POSIX_POSIX_INTERNAL_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv::posix {

// The list() rule shared with MemoryPlatform: objects end in ".sst"; logs are the other names
// that start with a decimal digit or "MANIFEST-". Partial files are neither.
bool is_partial_name(std::string_view name);
bool is_object_name(std::string_view name);
bool is_log_name(std::string_view name);
// An object name of the shape the core gives its objects: decimal digits, then ".sst".
bool is_core_object_name(std::string_view name);

// close(2); returns 0 or the errno. Never retried: after EINTR the descriptor is gone on Linux.
int close_fd(int fd);

// openat(2) with O_CLOEXEC added, retried on EINTR. Returns the fd, or -1 with errno set.
// `mode` applies when O_CREAT creates the file.
int open_at(int dir_fd, const std::string& name, int flags, mode_t mode = 0);

// Writes all of `data` at the file position (the end, for O_APPEND), retrying short writes.
// When `written` is not null it receives the bytes written, also on failure.
Status write_all(int fd, std::string_view data, const std::string& label, const char* op,
                 size_t* written);

// Writes all of `data` at `offset` (never on an O_APPEND descriptor: Linux would append),
// retrying short writes. When `written` is not null it receives the bytes written, also on
// failure.
Status pwrite_all(int fd, uint64_t offset, std::string_view data, const std::string& label,
                  const char* op, size_t* written);

// Reads up to n bytes at `offset` into `scratch`; fewer only at the end of the file.
Status pread_all(int fd, uint64_t offset, size_t n, char* scratch, const std::string& label,
                 std::string_view* result);

// Makes a file's bytes durable: fdatasync (F_FULLFSYNC on macOS).
Status sync_data(int fd, const std::string& label, const char* op);

// Makes a directory's entries durable: fsync of the directory fd.
Status sync_dir_fd(int fd, const std::string& label);

Result<uint64_t> file_size(int fd, const std::string& label);

// The open directory of one database. Owns `fd` and closes it when the last holder lets go.
struct PosixDir {
  PosixDir(std::string p, int f, mode_t m, bool ro = false)
      : path(std::move(p)), fd(f), file_mode(m), read_only(ro) {}
  PosixDir(const PosixDir&) = delete;
  PosixDir& operator=(const PosixDir&) = delete;
  ~PosixDir() { close_fd(fd); }

  // "<dir>/<name>", for messages.
  std::string label(std::string_view name) const;
  // InvalidArgument unless `name` is a plain file name the platform does not reserve (not "LOCK",
  // not ending in ".partial").
  Status check_name(const std::string& name) const;
  // ReadOnly naming `name` when the directory was opened read-only (StorageOptions::read_only),
  // else OK. Every call that would create, change or remove a file asks it first.
  Status check_writable(const std::string& name) const;
  // The names in the directory, except "." and ".." and subdirectories, in no particular order.
  Result<std::vector<std::string>> entries() const;

  const std::string path;
  const int fd;
  const mode_t file_mode;  // of every file created in it
  const bool read_only;    // opened with StorageOptions::read_only: files open O_RDONLY
};

// File handles over an open descriptor, which they own. `size` is the file's size now.
std::unique_ptr<LogFile> make_log_file(std::shared_ptr<const PosixDir> dir, std::string name,
                                       int fd, uint64_t size);
// Writes "<name>.partial" (open as `fd`) and renames it to `name` on finish().
std::unique_ptr<ObjectWriter> make_object_writer(std::shared_ptr<const PosixDir> dir,
                                                 std::string name, int fd);
std::unique_ptr<ObjectReader> make_object_reader(std::string name, std::string label, int fd,
                                                 uint64_t size);

}  // namespace skv::posix

#endif  // SKV_PLATFORM_POSIX_POSIX_INTERNAL_H_
