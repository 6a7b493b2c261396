// BlobReader: values kept in RocksDB blob files (integrated BlobDB), reached through the
// BlobIndex stored in place of the value. Verifies each file's header, the record's header CRC
// and its key-and-value CRC, and decompresses. Only blob files the manifest lists are opened.
//
// Not thread-safe.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_BLOB_READER_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_BLOB_READER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::rocksdb {

class BlobReader {
 public:
  BlobReader(std::string dir, std::set<uint64_t> live)
      : dir_(std::move(dir)), live_(std::move(live)) {}
  // Resolves `blob_index` (the value of a BlobIndex entry for `key`) into `out`. `where` names
  // the entry for errors about the index itself.
  Status resolve(std::string_view key, std::string_view blob_index, const std::string& where,
                 std::string* out);
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  Result<const SourceFile*> file(uint64_t number, const std::string& where);
  std::string dir_;
  std::set<uint64_t> live_;
  std::map<uint64_t, SourceFile> files_;
  std::map<uint64_t, unsigned> compression_;
  uint64_t bytes_read_ = 0;
};

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_BLOB_READER_H_
