// LogReader: the record framing RocksDB's MANIFEST and WAL files share (32 KiB blocks, legacy
// 7-byte and recyclable 11-byte fragment headers, masked CRC32C over type and payload), with the
// zstd-compressed WAL variant (a type-9 record first, then one zstd frame per logical record).
//
// A torn or damaged tail is reported as such (tail_damaged()), not as an error, when the caller
// allows it (the newest WAL, the MANIFEST's last record); damage followed by a valid record is
// always Corruption. Not thread-safe.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_LOG_READER_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_LOG_READER_H_

#include <cstdint>
#include <string>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::rocksdb {

class LogReader {
 public:
  // What damage at the end of the file means.
  enum class Tail {
    kStrict,       // any damage is Corruption (older WALs)
    kTruncation,   // a last record cut short by the file's end is ignored (the MANIFEST)
    kPointInTime,  // any damage with no valid record after it ends the log (newest WAL)
  };
  // `log_number`: the file's number (recyclable records of an earlier use end the log).
  LogReader(const SourceFile* file, uint64_t log_number, Tail tail);

  // Reads the next logical record into `record` (its offset into *offset). Returns false at the
  // end of the log (check status()).
  bool next(std::string* record, uint64_t* offset);
  const Status& status() const { return status_; }
  bool tail_damaged() const { return tail_damaged_; }
  uint64_t bytes_read() const { return pos_; }

 private:
  enum Frag { kEof, kBad, kFull, kFirst, kMiddle, kLast, kSetCompression, kSkip };
  Frag read_fragment(std::string* payload, uint64_t* frag_offset);
  bool damage(uint64_t offset, const std::string& what, bool truncated);
  bool valid_record_after(uint64_t offset);
  bool valid_fragment_at(uint64_t offset);
  Status decompress(std::string* record, uint64_t offset);

  const SourceFile* file_;
  uint64_t log_number_;
  Tail tail_;
  bool truncated_ = false;  // the last bad fragment runs past the file's end
  uint64_t after_bad_ = 0;  // where the fragment after a checksum failure would start (0: none)
  uint64_t pos_ = 0;
  std::string block_;
  uint64_t block_start_ = UINT64_MAX;
  Status status_;
  bool tail_damaged_ = false;
  bool done_ = false;
  bool compressed_ = false;
  bool first_ = true;
};

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_LOG_READER_H_
