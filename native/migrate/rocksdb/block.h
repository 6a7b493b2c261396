// Blocks of a block-based table: reading one block (checksum verified, then decompressed) and
// walking its entries in order (prefix-compressed keys, restart array, optional data-block hash
// index, delta-encoded index values).
//
// Thread safety: BlockReader is immutable after construction; BlockIter is not thread-safe.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_BLOCK_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_BLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::rocksdb {

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};
bool get_block_handle(std::string_view* in, BlockHandle* h);

// How the blocks of one table are checked and compressed.
struct BlockReader {
  const SourceFile* file = nullptr;
  unsigned checksum_type = 1;
  uint32_t format_version = 0;
  uint32_t base_context_checksum = 0;  // format_version >= 6
  std::string dictionary;              // rocksdb.compression_dict, when the table has one

  // Reads the block at `h` and its 5-byte trailer, verifies the checksum and decompresses.
  Status read(const BlockHandle& h, std::string* out) const;
  // The checksum of `data` (the block's stored bytes then its compression type byte) for
  // `checksum_type`; false when the type is unknown.
  bool checksum(const char* data, size_t n, uint32_t* out) const;
};

// Decompresses `in` (compression `type`, framed as tables of `format_version` frame it).
Status decompress_block(const SourceFile& file, uint64_t offset, unsigned type,
                        uint32_t format_version, const std::string& dictionary, std::string_view in,
                        std::string* out);

// Walks the entries of one block in order.
class BlockIter {
 public:
  // `delta_values`: an index block whose values are delta-encoded handles (no value length).
  // `first_keys`: index values carry the block's first key after the handle (index type 3).
  BlockIter(const SourceFile* file, uint64_t block_offset, std::string_view block,
            bool delta_values = false, bool first_keys = false);
  // The next entry; false at the end or on corruption (status()).
  bool next();
  std::string_view key() const { return key_; }
  std::string_view value() const { return value_; }
  // For delta-encoded index blocks: the handle of the current entry.
  const BlockHandle& handle() const { return handle_; }
  const Status& status() const { return status_; }

 private:
  bool fail(const std::string& what);
  const SourceFile* file_;
  uint64_t block_offset_;
  std::string_view block_;
  bool delta_;
  bool first_keys_;
  size_t pos_ = 0;
  size_t end_ = 0;
  std::string key_;
  std::string_view value_;
  BlockHandle handle_;
  bool have_handle_ = false;
  Status status_;
};

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_BLOCK_H_
