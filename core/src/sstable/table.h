// Table: an open, immutable SSTable, read through the block cache.
//
// Thread safety: a Table is shared (std::shared_ptr) and may be read from many threads at once.
// Iterators hold a reference to their table, so a table stays open while any iterator over it
// lives.

#ifndef SKV_SSTABLE_TABLE_H_
#define SKV_SSTABLE_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "sstable/table_options.h"

namespace skv {

class BlockCache;
namespace crypto {
class CipherSource;
}  // namespace crypto

struct TableReadOptions {
  bool verify_checksums = true;  // always true today; kept for tools
  bool fill_cache = true;        // compaction reads pass false
  // With !fill_cache: the blocks read still enter the cache, in its scan pool
  // (BlockCache::Priority::Low), and hits there are not promoted. Concurrent sweeps then share
  // the blocks one of them decoded, without taking the cache from point reads. Counts pass it;
  // compaction does not (its inputs are about to be deleted).
  bool scan_pool = false;
  // A sequential sweep: each iterator reads the blocks it misses through its own
  // ReadaheadReader (readahead_reader.h), a window of up to 256 KiB at a time.
  bool readahead = false;
};

class Table : public std::enable_shared_from_this<Table> {
 public:
  // Opens a table: reads and checks the header, footer, index, filter and properties.
  // Corruption (naming the file and offset) if any check fails. `cache` may be null.
  // `ciphers` is the database's CipherSource, null for a plaintext database: an encrypted table
  // gets its cipher from it (crypto::cipher_for_header), and then every block is opened at its
  // offset. Encryption errors by name before any block is read: NotConfigured (an encrypted table
  // and no source), UnknownKeyId, KeyRetired, WrongKey; a plaintext table with a source is
  // Corruption. `ciphers` is used only during the call.
  static Result<std::shared_ptr<Table>> open(std::unique_ptr<ObjectReader> file,
                                             uint64_t file_number, BlockCache* cache,
                                             crypto::CipherSource* ciphers = nullptr);
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  ~Table();

  // A cursor over all entries, both directions. Errors (I/O, checksum) surface in status().
  std::unique_ptr<InternalIterator> new_iterator(const TableReadOptions& options = {}) const;

  struct GetResult {
    bool found = false;  // an entry for the user key with sequence <= snapshot exists
    ValueKind kind = ValueKind::Value;
    std::string value;  // copied out of the block
    SequenceNumber sequence = 0;
    uint64_t timestamp = 0;
  };
  // Finds the newest version of `user_key` with sequence <= `snapshot`, consulting the bloom
  // filter first. Errors are I/O or Corruption; "not present" is OK with found == false.
  Status get(std::string_view user_key, SequenceNumber snapshot, GetResult* out) const;

  // False only if the bloom filter proves `user_key` is absent.
  bool may_contain(std::string_view user_key) const;

  const TableProperties& properties() const;
  uint64_t file_number() const;
  uint64_t file_size() const;
  const std::string& file_name() const;

 private:
  Table();
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace skv

#endif  // SKV_SSTABLE_TABLE_H_
