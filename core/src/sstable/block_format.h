// The physical framing of SSTable blocks: block handles, the per-block trailer (compression type
// and checksum), the table footer, and the functions that write and read framed blocks.
//
//   stored_block := payload ‖ compression_type:u8 ‖ crc:fixed32
//     crc     = masked CRC32C of payload ‖ compression_type
//     payload = contents                                   when compression_type = 0 (none)
//             | raw_size:varint64 ‖ zstd_frame             when compression_type = 1 (zstd)
//   block_handle := offset:varint64 ‖ size:varint64        size = payload bytes, trailer excluded
//
// In an encrypted table (a FileCipher given) every block is sealed at its own file offset:
//
//   sealed_block := seal(offset, payload ‖ compression_type) ‖ crc:fixed32
//     seal(p, x) = ciphertext of x ‖ 16-byte tag (crypto/file_cipher.h), so |seal| = |x| + 16
//     crc        = masked CRC32C of the sealed bytes (a cheap check before the AEAD's)
//   block_handle.size is still the payload size: a sealed block takes size + 21 bytes
//   (kSealedBlockTrailerSize: compression type, tag and crc).
//
//   footer (64 bytes, the last bytes of the file) :=
//     index_offset:fixed64 index_size:fixed64              offset  0
//     filter_offset:fixed64 filter_size:fixed64            offset 16   (0, 0 when no filter)
//     properties_offset:fixed64 properties_size:fixed64    offset 32
//     reserved:fixed32 (0)                                 offset 48
//     magic:fixed64 ("SKVTABLE" read as little-endian)     offset 52
//     crc:fixed32 (masked CRC32C of bytes 0..59)           offset 60
//
//   sealed footer (80 bytes, the last bytes of an encrypted table) :=
//     seal(footer_offset, index_offset:fixed64 index_size:fixed64
//                         filter_offset:fixed64 filter_size:fixed64
//                         properties_offset:fixed64 properties_size:fixed64
//                         file_size:fixed64 magic:fixed64)
//     footer_offset = file_size - 80; file_size is the size of the whole table
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

#include "cache/block_buffer_pool.h"
#include "crypto/file_cipher.h"
#include "skv/options.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

constexpr size_t kBlockTrailerSize = 5;  // compression type + crc
// compression type + AEAD tag + crc, after the payload of a sealed block.
constexpr size_t kSealedBlockTrailerSize = 1 + crypto::FileCipher::kOverhead + 4;
constexpr size_t kTableFooterSize = 64;
// 64 bytes of footer fields sealed with a tag.
constexpr size_t kSealedTableFooterSize = 64 + crypto::FileCipher::kOverhead;
constexpr uint64_t kTableMagic = 0x454c424154564b53ull;  // "SKVTABLE"
// No decoded block may be larger than this; a stored length beyond it is corruption. It leaves
// room for one entry of the largest key and value the engine accepts.
constexpr size_t kMaxBlockSize = 128 * 1024 * 1024;

// Values of the compression_type byte.
constexpr uint8_t kBlockTypeNone = 0;
constexpr uint8_t kBlockTypeZstd = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // payload bytes, without the trailer (sealed or not)
  // The first byte after the block's trailer; `trailer` is kSealedBlockTrailerSize for a sealed
  // block.
  uint64_t end(size_t trailer = kBlockTrailerSize) const { return offset + size + trailer; }
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

// Appends the 80-byte sealed footer of an encrypted table whose footer starts at `offset`
// (so the table is offset + kSealedTableFooterSize bytes long).
void encode_sealed_table_footer(const TableFooter& f, const crypto::FileCipher& cipher,
                                uint64_t offset, std::string* dst);
// Opens and decodes the sealed footer read at `offset` of `file`, whose size is `file_size`.
// Corruption (naming the file and offset) if the input is short, it fails authentication (a
// truncated or extended file, a footer from elsewhere, any edit), or the magic or recorded file
// size is wrong.
Status decode_sealed_table_footer(std::string_view input, const crypto::FileCipher& cipher,
                                  uint64_t offset, uint64_t file_size, TableFooter* out);

// The decoded contents of a block, owned. `data` may hold more bytes than `size`.
struct BlockContents {
  BlockBuffer data;
  size_t size = 0;

  std::string_view view() const { return {data.get(), size}; }
  // The bytes held in memory for these contents (at least size).
  size_t memory_usage() const { return data.capacity(); }
  // A copy of `bytes`, in memory from `buffers` when it is not null, from the heap otherwise.
  static BlockContents copy_of(std::string_view bytes, BlockBufferPool* buffers = nullptr);
};

// Frames blocks for writing: compresses (when asked and worthwhile) and adds the trailer, and
// seals them when given a cipher.
class BlockEncoder {
 public:
  // `cipher` null writes plaintext blocks; otherwise every block is sealed.
  BlockEncoder(Compression compression, int zstd_level,
               std::shared_ptr<const crypto::FileCipher> cipher = nullptr);
  BlockEncoder(const BlockEncoder&) = delete;
  BlockEncoder& operator=(const BlockEncoder&) = delete;
  ~BlockEncoder();

  // Replaces *out with stored_block for `raw`. The zstd form is kept only when it saves at least
  // an eighth of the raw size (stored payload <= raw - raw/8); otherwise the block is stored
  // uncompressed. `allow_compression` false forces the uncompressed form.
  // With a cipher the result is sealed_block, sealed at `position`, the file offset the block
  // will be written at; without one `position` is unused.
  // REQUIRES: raw.size() <= kMaxBlockSize; with a cipher, each position is encoded at most once.
  void encode(std::string_view raw, bool allow_compression, std::string* out,
              uint64_t position = 0);

  // Bytes after the payload of every block this encoder makes.
  size_t trailer_size() const {
    return cipher_ != nullptr ? kSealedBlockTrailerSize : kBlockTrailerSize;
  }

 private:
  // Replaces *out with payload ‖ compression_type for `raw`.
  void encode_payload(std::string_view raw, bool allow_compression, std::string* out);

  Compression compression_;
  int level_;
  std::shared_ptr<const crypto::FileCipher> cipher_;
  std::string plain_;     // payload ‖ type before sealing
  void* cctx_ = nullptr;  // ZSTD_CCtx, created on first use
};

// Reads the block at `h` from `file`, checks its trailer and checksum, and decompresses it.
// The result is a single copy of the decoded bytes. `max_size` is the most the block may hold,
// stored or decoded (what its table allows, table_properties.h; kMaxBlockSize at most): a
// larger stored size or claimed raw_size is refused before anything is allocated for it.
// Corruption naming the file and the block offset if the handle leaves the file, a size exceeds
// max_size, the read is short, the checksum or compression type is wrong, or decompression fails
// or yields a different length. I/O errors from the file are returned as they are.
// With a `cipher` the block is a sealed_block: after the checksum it is opened with h.offset as
// its position, and Corruption (naming the file and offset) if it fails authentication, before
// its compression type or contents are looked at.
// The block's bytes are read (and decoded) into memory from `buffers` when it is not null (the
// block cache's pool, for data blocks), from the heap otherwise.
Result<BlockContents> read_block(const ObjectReader& file, const BlockHandle& h,
                                 uint64_t max_size = kMaxBlockSize,
                                 const crypto::FileCipher* cipher = nullptr,
                                 BlockBufferPool* buffers = nullptr);

}  // namespace skv

#endif  // SKV_SSTABLE_BLOCK_FORMAT_H_
