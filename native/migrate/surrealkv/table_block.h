// One block of a SurrealKV 0.20/0.21 SSTable: reading it (trailer CRC, Snappy) and decoding its
// entries.
//
// Grammar of a block as stored at a BlockHandle (offset, size):
//   contents[size] | compression u8 (0 none, 1 Snappy raw) | masked IEEE CRC-32 u32 LE
//   (the CRC covers contents ‖ compression byte; the mask is the SSTable one, surrealkv_format.h)
// and of the (uncompressed) contents, the LevelDB layout:
//   entry* | restart offset u32 LE × n | n u32 LE
//   entry = shared varint | unshared varint | value_len varint | key suffix | value
// where every entry at a restart offset has shared = 0.
//
// Plain functions; thread-compatible.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_TABLE_BLOCK_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_TABLE_BLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // of the contents, without the 5-byte trailer
};
inline constexpr uint64_t kBlockTrailer = 5;

// Reads the block at `h`, checks its trailer and uncompresses it into `contents`. Corruption
// (naming the file and the block's offset) when the block lies past the end of the file, fails
// its CRC or does not uncompress; NotSupported for an unknown compression byte. `what` names the
// block in messages ("data block", "index partition", ...).
Status read_block(const SourceFile& file, const BlockHandle& h, std::string_view what,
                  std::string* contents);

struct BlockEntry {
  std::string key;
  std::string_view value;  // a view into the contents given to decode_block
};

// Decodes every entry of `contents` (the block read at `offset`), checking the varints, the
// prefix lengths, the restart array and that every restart lands on an entry with no shared
// prefix. Entries are appended to `out` (cleared first). An empty block is Corruption.
Status decode_block(const SourceFile& file, uint64_t offset, std::string_view contents,
                    std::vector<BlockEntry>* out);

// Decodes a BlockHandle (varint offset, varint size) that must fill `bytes` exactly.
bool decode_handle(std::string_view bytes, BlockHandle* h);

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_TABLE_BLOCK_H_
