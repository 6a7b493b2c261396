// SourceFile: a file of a migration source, opened read-only (O_RDONLY, never created), read by
// position. Every error names the file; a read past the end is Corruption naming the offset, so
// a truncated file is never mistaken for a short one.
//
// Not copyable; movable. Thread-compatible (read_at may be called from several threads).

#ifndef SKV_NATIVE_MIGRATE_SOURCE_FILE_H_
#define SKV_NATIVE_MIGRATE_SOURCE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "skv/status.h"

namespace skv::migration {

class SourceFile {
 public:
  // NotFound when `path` does not exist, IO for any other failure.
  static Result<SourceFile> open(const std::string& path);
  SourceFile(SourceFile&& other) noexcept;
  SourceFile& operator=(SourceFile&& other) noexcept;
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;
  ~SourceFile();

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  // Reads exactly `n` bytes at `offset` into `out` (resized). Corruption when the range ends
  // past the file's end; IO when the read fails.
  Status read_at(uint64_t offset, size_t n, std::string* out) const;
  // Reads the whole file.
  Status read_all(std::string* out) const { return read_at(0, size_, out); }

  // "<path>: <what> at offset <offset>", for error messages of the readers.
  std::string where(uint64_t offset, std::string_view what) const;

 private:
  SourceFile(std::string path, int fd, uint64_t size);
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The names in `dir` (not recursive, no "." or ".."), sorted; NotFound when `dir` is missing.
Result<std::vector<std::string>> list_dir(const std::string& dir);
// Whether `path` exists (a file or a directory).
bool path_exists(const std::string& path);

}  // namespace skv::migration

#endif  // SKV_NATIVE_MIGRATE_SOURCE_FILE_H_
