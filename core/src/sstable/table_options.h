// Options and properties shared by the SSTable builder and reader.

#ifndef SKV_SSTABLE_TABLE_OPTIONS_H_
#define SKV_SSTABLE_TABLE_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "format/internal_key.h"
#include "skv/options.h"

namespace skv {

struct TableOptions {
  size_t block_size = 16 * 1024;
  int block_restart_interval = 16;
  size_t block_restart_bytes = 1024;  // 0: restarts by count only (BlockBuilder)
  Compression compression = Compression::Zstd;
  int zstd_level = 1;
  int bloom_bits_per_key = 10;  // 0: no filter
};

// Stored in each table's properties block; recorded in the manifest too.
struct TableProperties {
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
  uint64_t raw_key_bytes = 0;
  uint64_t raw_value_bytes = 0;
  uint64_t data_blocks = 0;
  std::string smallest_key;  // internal key
  std::string largest_key;   // internal key
  SequenceNumber smallest_seq = 0;
  SequenceNumber largest_seq = 0;
};

}  // namespace skv

#endif  // SKV_SSTABLE_TABLE_OPTIONS_H_
