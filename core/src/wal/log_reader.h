// LogReader: reads framed records (log_format.h) back from a LogFile, in order.
//
// Thread safety: one reader is used by one thread at a time.

#ifndef SKV_WAL_LOG_READER_H_
#define SKV_WAL_LOG_READER_H_

#include <cstdint>
#include <string>

#include "format/file_header.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv::log {

class Reader {
 public:
  // Does not own `file`, which must outlive the reader. `expected_kind` is checked against the
  // file header.
  Reader(const LogFile* file, FileKind expected_kind);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Checks the header (Corruption naming the file if bad). An empty file is accepted as a
  // torn tail at offset 0. Called by the first read_record if not called before.
  Status read_header(FileHeader* header);

  // Reads the next record into *record and sets *offset to its position in the file.
  // Returns true with a record, false at the clean end of the file or at a torn tail (then
  // torn_tail() is true and valid_end() is where the good data ends), or an error:
  // Corruption naming the file and offset, or the platform's I/O error.
  Result<bool> read_record(std::string* record, uint64_t* offset);

  // After read_record returned false: whether the end was a torn tail rather than a clean end.
  bool torn_tail() const { return torn_tail_; }
  // The file offset just past the last good record (or header).
  uint64_t valid_end() const { return valid_end_; }

 private:
  const LogFile* file_;
  FileKind kind_;
  bool header_checked_ = false;
  bool torn_tail_ = false;
  uint64_t pos_ = 0;
  uint64_t valid_end_ = 0;
  uint64_t file_size_ = 0;
};

}  // namespace skv::log

#endif  // SKV_WAL_LOG_READER_H_
