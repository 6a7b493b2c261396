// SourceReader: one migration source (a RocksDB or SurrealKV directory, an IndexedDB dump) read
// record by record for migrate() (skv/migrate.h). A reader opens only the files its source's
// own metadata says are live, verifies every checksum the format has, and never writes.
//
// Not thread-safe: one reader is used by one thread at a time.

#ifndef SKV_NATIVE_MIGRATE_SOURCE_H_
#define SKV_NATIVE_MIGRATE_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skv/migrate.h"
#include "skv/status.h"

namespace skv::migration {

// One record a reader hands over. The views live until the sink's put() returns.
struct SourceRecord {
  std::string_view family;  // the column family's name; "" for sources without families
  std::string_view key;
  std::string_view value;  // empty for a tombstone
  uint64_t timestamp = 0;  // nanoseconds since the Unix epoch; 0: the source keeps no time
  bool tombstone = false;  // a version that deletes its key (only in versioned reads)
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Receives the records in order: one family after another (in the order asked for), keys
  // ascending (bytewise) within a family, and a key's versions newest first. A non-OK status
  // stops the read, and read() returns it.
  virtual Status put(const SourceRecord& record) = 0;
};

struct SourceReadOptions {
  // The families to read, in this order; empty: the source's default family ("default" for
  // RocksDB, "" for sources without families). A name the source lacks is InvalidArgument.
  std::vector<std::string> families;
  // True: every retained version with its time, tombstone versions included (only for sources
  // whose has_versions() is true). False: the newest live value of each key, deleted keys left
  // out, timestamp 0.
  bool versions = false;
  // Called now and then with the bytes of live files read so far and in all.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

class SourceReader {
 public:
  virtual ~SourceReader() = default;
  virtual MigrationSource kind() const = 0;
  // The families the source holds, its default first.
  virtual std::vector<std::string> families() const = 0;
  // Whether the source stores versions with their times.
  virtual bool has_versions() const = 0;
  // Total bytes of the live files read() will read.
  virtual uint64_t total_bytes() const = 0;
  // Reads the source once, from the start, into `sink`. Errors name the file and the offset.
  virtual Status read(const SourceReadOptions& options, RecordSink& sink) = 0;
};

// Each opens the source read-only and reads its metadata (which files are live); NotFound when
// the source is missing, Corruption or NotSupported when its metadata is bad or unknown.
Result<std::unique_ptr<SourceReader>> open_rocksdb(const std::string& dir);
Result<std::unique_ptr<SourceReader>> open_surrealkv(const std::string& dir);
Result<std::unique_ptr<SourceReader>> open_indexeddb_dump(const std::string& path);

}  // namespace skv::migration

#endif  // SKV_NATIVE_MIGRATE_SOURCE_H_
