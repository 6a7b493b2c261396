// LogWriter: appends framed records (log_format.h) to a LogFile, sealing each payload when the
// file is encrypted (log_format.h, "Sealed records").
//
// Thread safety: one writer is used by one thread at a time (the commit leader, or the version
// set under its lock).

#ifndef SKV_WAL_LOG_WRITER_H_
#define SKV_WAL_LOG_WRITER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/file_cipher.h"
#include "format/file_header.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "util/log_appender.h"

namespace skv::log {

class Writer {
 public:
  // Takes ownership of `file`. If the file is empty, the header `header` is written first (with
  // the first append); a non-empty file is assumed to already start with a valid header.
  //
  // With a `cipher` (the new file's own, from CipherSource::for_new_file) the header's envelope
  // is filled from cipher->envelope() and every payload is sealed at its record's offset. Such a
  // writer only writes files it creates: given a non-empty file, it is failed from the start
  // (every call returns InvalidArgument and nothing is written), since an offset past a cut tail
  // may already have been sealed once. Without a cipher the bytes are plaintext.
  Writer(std::unique_ptr<LogFile> file, const FileHeader& header,
         std::shared_ptr<const crypto::FileCipher> cipher = nullptr);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  // Appends one record. InvalidArgument if the payload is empty or too large (nothing is
  // written; a sealed payload may be at most kMaxRecordSize - crypto::FileCipher::kOverhead). A
  // failed append may leave part of the record in the file, so after one every later
  // add_record/add_records returns that same error: the caller must move to a new file.
  Status add_record(std::string_view payload);
  // Appends several records (group commit), with one LogFile::append per stretch of up to
  // LogAppender::kKeepBufferCapacity bytes (a record larger than that goes alone).
  // InvalidArgument, with nothing written, if any payload is empty or too large. An empty list
  // writes nothing. A failed append stops the rest: what was appended before it may be in the
  // file.
  Status add_records(const std::vector<std::string_view>& payloads);
  // LogFile::sync(). A failed sync is sticky like a failed append.
  Status sync();
  // Room ahead of the records (LogAppender::reserve_ahead, LogFile::reserve): WAL segments ask
  // for it; the newest segment may then hold zeros after its last record, which a reader takes
  // as a torn tail. release_room() removes them before the segment stops being the newest.
  void reserve_ahead(uint64_t step) { out_.reserve_ahead(step); }
  Status release_room() { return out_.release_room(); }
  uint64_t size() const;
  const std::string& name() const;
  // Whether payloads are sealed.
  bool encrypted() const { return cipher_ != nullptr; }
  Status close();

 private:
  LogAppender out_;
  const std::shared_ptr<const crypto::FileCipher> cipher_;  // null: plaintext

  Status check_payload(std::string_view payload) const;
  // Appends the framed record of `payload` to *buf, whose first byte goes to the file at offset
  // `buf_offset`.
  void append_framed(std::string_view payload, uint64_t buf_offset, std::string* buf) const;
};

}  // namespace skv::log

#endif  // SKV_WAL_LOG_WRITER_H_
