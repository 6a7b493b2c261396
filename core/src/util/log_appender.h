// LogAppender: what every writer of an append-only file (WAL segments, the manifest, value logs)
// does beneath its own framing: the file header written with the first append, one
// LogFile::append per write from a reused buffer, and sticky failure. A failed append may leave
// part of its bytes in the file and a failed sync may have dropped unsynced ones, so after either
// every later append() and sync() returns that same error: the caller moves to a new file.
//
// Thread safety: one appender is used by one thread at a time.

#ifndef SKV_UTIL_LOG_APPENDER_H_
#define SKV_UTIL_LOG_APPENDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "format/file_header.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

class LogAppender {
 public:
  // The reused buffer keeps at most this much room between writes; a write that needs more gets
  // a buffer of its own, freed afterwards. Callers that write many records at once write them in
  // stretches of about this size, so the buffer is reused and never fresh memory to fault in.
  static constexpr size_t kKeepBufferCapacity = size_t{1} << 20;

  // Takes ownership of `file`. If the file is empty, `header` goes in front of the first append;
  // a non-empty file is assumed to start with a valid header, and appends go at its end.
  LogAppender(std::unique_ptr<LogFile> file, const FileHeader& header);
  LogAppender(const LogAppender&) = delete;
  LogAppender& operator=(const LogAppender&) = delete;
  // Closes the file, best effort: unsynced bytes were never promised.
  ~LogAppender();

  // Starts the next write: a cleared buffer, holding the file header if it is still to be
  // written, with room for `bytes` more. The caller appends its framed bytes to it, then calls
  // append().
  std::string* start(size_t bytes);
  // Appends the buffer started by start() with one LogFile::append.
  Status append();
  Status sync();

  // Where the next write's own bytes will start in the file (after the header, if pending).
  uint64_t next_offset() const { return file_->size() + pending_header_.size(); }
  uint64_t size() const { return file_->size(); }
  const std::string& name() const { return file_->name(); }
  // The sticky error, or OK.
  const Status& status() const { return error_; }
  // Makes `s` the sticky error (unless one is already set): every later append() and sync()
  // returns it. For a writer that must not write to this file at all.
  void fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
  }
  // LogFile::close(). The appender must not be used afterwards.
  Status close() { return file_->close(); }

  // Room ahead (LogFile::reserve): from now on, an append that would pass the reserved end first
  // asks the file for `step` bytes past the append's own end, so most appends write over zeros
  // instead of growing the file. A file that refuses is not asked again: its appends grow it, as
  // without room, and report their own errors. 0 stops asking.
  void reserve_ahead(uint64_t step) { reserve_step_ = step; }
  // Removes the zeros reserved past the last append (truncate(size())) and stops asking for
  // room. Durable after sync(). A failure is sticky, like a failed append.
  Status release_room();

 private:
  std::unique_ptr<LogFile> file_;
  std::string pending_header_;  // the file header, until the first append succeeds
  std::string buf_;
  Status error_;
  uint64_t reserve_step_ = 0;  // reserve_ahead(); 0: none
  uint64_t reserved_ = 0;      // the file holds this many bytes, zeros past size() included
};

}  // namespace skv

#endif  // SKV_UTIL_LOG_APPENDER_H_
