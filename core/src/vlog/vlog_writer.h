// VlogWriter: appends entries (vlog_format.h) to one value log file and hands back a pointer to
// each (value_pointer.h).
//
// Thread safety: one writer is used by one thread at a time. Readers (vlog_reader.h) may read
// the entries it has appended, through their own handle, at the same time.

#ifndef SKV_VLOG_VLOG_WRITER_H_
#define SKV_VLOG_VLOG_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "crypto/file_cipher.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "util/log_appender.h"
#include "vlog/value_pointer.h"

namespace skv::vlog {

class VlogWriter {
 public:
  // Takes ownership of `file`, the value log numbered `file_number`. If the file is empty, the
  // file header (kind ValueLog, that number) is written with the first entry, in the same append;
  // a non-empty file is assumed to start with a valid header and entries are appended at its end.
  // REQUIRES: file_number < kMaxFileNumber.
  //
  // With a `cipher` (the new file's own, from CipherSource::for_new_file) the header's envelope is
  // filled from cipher->envelope() and every entry is sealed. Such a writer only writes files it
  // creates: given a non-empty file it is failed from the start (every add() and sync() returns
  // InvalidArgument, nothing is written). Without one the bytes are plaintext.
  VlogWriter(std::unique_ptr<LogFile> file, uint64_t file_number,
             std::shared_ptr<const crypto::FileCipher> cipher = nullptr);
  VlogWriter(const VlogWriter&) = delete;
  VlogWriter& operator=(const VlogWriter&) = delete;
  // Closes the file, best effort; unsynced entries were never promised.
  ~VlogWriter();

  // Appends one entry with a single LogFile::append and returns its pointer (whose size counts
  // the 16 bytes sealing adds, in an encrypted file). The entry can be read
  // back at once; it is durable after sync(). InvalidArgument, with nothing written, if the key is
  // empty or longer than kMaxKeySize, the value longer than kMaxValueSize, or the entry would end
  // past kMaxValueLogOffset. A failed append may leave part of the entry in the file, so after
  // one every later add() and sync() returns that same error: the caller moves to a new file.
  Result<ValuePointer> add(std::string_view key, std::string_view value);

  // Makes every entry added so far durable. A failed sync is sticky like a failed append: the
  // platform may have dropped the unsynced bytes, so nothing more is written to this file.
  Status sync();

  // The file's size: the end of the last entry (0 before the first one).
  uint64_t size() const { return out_.size(); }
  uint64_t file_number() const { return file_number_; }
  const std::string& name() const { return out_.name(); }
  // Whether entries are sealed.
  bool encrypted() const { return cipher_ != nullptr; }
  // The sticky error, or OK.
  const Status& status() const { return out_.status(); }
  // LogFile::close(). The writer must not be used afterwards.
  Status close() { return out_.close(); }

 private:
  LogAppender out_;
  const uint64_t file_number_;
  const std::shared_ptr<const crypto::FileCipher> cipher_;  // null: plaintext
};

}  // namespace skv::vlog

#endif  // SKV_VLOG_VLOG_WRITER_H_
