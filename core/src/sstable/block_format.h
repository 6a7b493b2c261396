// The physical framing of SSTable blocks: block handles, the per-block trailer (compression type
// and checksum), the table footer, and the functions that write and read framed blocks.
//
//   stored_block := payload ‖ compression_type:u8 ‖ crc:fixed32
//     crc     = masked CRC32C of payload ‖ compression_type
//     payload = contents                                   when compression_type = 0 (none)
//             | raw_size:varint64 ‖ zstd_frame             when compression_type = 1 (zstd)
//   block_handle := offset:varint64 ‖ size:varint64        size = payload bytes, trailer excluded
//
//   footer (64 bytes, the last bytes of the file) :=
//     index_offset:fixed64 index_size:fixed64              offset  0
//     filter_offset:fixed64 filter_size:fixed64            offset 16   (0, 0 when no filter)
//     properties_offset:fixed64 properties_size:fixed64    offset 32
//     reserved:fixed32 (0)                                 offset 48
//     magic:fixed64 ("SKVTABLE" read as little-endian)     offset 52
//     crc:fixed32 (masked CRC32C of bytes 0..59)           offset 60
//
// See docs/sstable.md for the whole table layout.
//
// Thread safety: BlockEncoder is used by one thread; the free functions are safe to call
// concurrently (read_block keeps one zstd decompression context per thread).

#ifndef SKV_SSTABLE_BLOCK_FORMAT_H_
#define SKV_SSTABLE_BLOCK_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "skv/options.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

constexpr size_t kBlockTrailerSize = 5;  // compression type + crc
constexpr size_t kTableFooterSize = 64;
constexpr uint64_t kTableMagic = 0x454c424154564b53ull;  // "SKVTABLE"
// No decoded block may be larger than this; a stored length beyond it is corruption. It leaves
// room for one entry of the largest key and value the engine accepts.
constexpr size_t kMaxBlockSize = 128 * 1024 * 1024;

// Values of the compression_type byte.
constexpr uint8_t kBlockTypeNone = 0;
constexpr uint8_t kBlockTypeZstd = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // payload bytes, without the trailer
  // The first byte after the block's trailer.
  uint64_t end() const { return offset + size + kBlockTrailerSize; }
};

void encode_block_handle(const BlockHandle& h, std::string* dst);
// Reads a handle from the front of *in and advances it. False if the input is malformed.
bool decode_block_handle(std::string_view* in, BlockHandle* out);

struct TableFooter {
  BlockHandle index;
  BlockHandle filter;  // size 0 when the table has no filter
  BlockHandle properties;
};

// Appends the 64-byte footer encoding.
void encode_table_footer(const TableFooter& f, std::string* dst);
// Decodes the footer read at `offset` of `file`. Corruption (naming the file and offset) if the
// input is short, the magic or checksum is wrong, or a reserved field is not zero.
Status decode_table_footer(std::string_view input, std::string_view file, uint64_t offset,
                           TableFooter* out);

// The decoded contents of a block, owned. `data` may hold more bytes than `size`.
struct BlockContents {
  std::unique_ptr<char[]> data;
  size_t size = 0;

  std::string_view view() const { return {data.get(), size}; }
  static BlockContents copy_of(std::string_view bytes);
};

// Frames blocks for writing: compresses (when asked and worthwhile) and adds the trailer.
class BlockEncoder {
 public:
  BlockEncoder(Compression compression, int zstd_level);
  BlockEncoder(const BlockEncoder&) = delete;
  BlockEncoder& operator=(const BlockEncoder&) = delete;
  ~BlockEncoder();

  // Replaces *out with stored_block for `raw`. The zstd form is kept only when it saves at least
  // an eighth of the raw size (stored payload <= raw - raw/8); otherwise the block is stored
  // uncompressed. `allow_compression` false forces the uncompressed form.
  // REQUIRES: raw.size() <= kMaxBlockSize.
  void encode(std::string_view raw, bool allow_compression, std::string* out);

 private:
  Compression compression_;
  int level_;
  void* cctx_ = nullptr;  // ZSTD_CCtx, created on first use
};

// Reads the block at `h` from `file`, checks its trailer and checksum, and decompresses it.
// The result is a single copy of the decoded bytes. `max_size` is the most the block may hold,
// stored or decoded (what its table allows, table_properties.h; kMaxBlockSize at most): a
// larger stored size or claimed raw_size is refused before anything is allocated for it.
// Corruption naming the file and the block offset if the handle leaves the file, a size exceeds
// max_size, the read is short, the checksum or compression type is wrong, or decompression fails
// or yields a different length. I/O errors from the file are returned as they are.
Result<BlockContents> read_block(const ObjectReader& file, const BlockHandle& h,
                                 uint64_t max_size = kMaxBlockSize);

}  // namespace skv

#endif  // SKV_SSTABLE_BLOCK_FORMAT_H_
