// The SurrealKV 0.20/0.21 write-ahead log (wal/%020u.wal) and the batches it carries.
//
// A segment is a sequence of 32 KiB blocks of physical records:
//   crc u32 BE | length u16 BE | type u8 | payload[length]      crc = IEEE CRC-32(type ‖ payload)
//   types: 0 empty (the rest of the block is zeros), 1 full, 2 first, 3 middle, 4 last,
//          9 set compression (only first in a segment; payload 1 byte: 0 none, 1 LZ4)
// A block tail shorter than the 7-byte header is zero padding. The fragments of one logical
// record (full, or first middle* last) join into a payload, which with LZ4 is a u32 LE
// uncompressed size followed by an LZ4 block. Each logical record is one batch:
//   version u8 (=1) | starting_seq varint | count varint
//   count × { kind u8 | key_len varint | key | value_len varint | value | timestamp varint }
//   count × { 0 | 1 ValuePointer[25] }
// Entry i has seq starting_seq + i; Set/Replace values are ValueLocations, tombstones empty.
//
// Plain functions; thread-compatible.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_WAL_READER_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_WAL_READER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "native/migrate/source_file.h"
#include "native/migrate/surrealkv/surrealkv_format.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

inline constexpr size_t kWalBlockSize = 32 * 1024;
inline constexpr size_t kWalHeaderSize = 7;

// Appends every entry of every batch in the segment `file` to `out`, in log order (each
// entry's offset is that of its record's first fragment). A torn or damaged record anywhere,
// including at the end, is Corruption naming the file and offset (no valid prefix is kept
// silently); unknown record types, compression bytes and batch versions are named too.
Status read_wal_segment(const SourceFile& file, std::vector<Entry>* out);

// Decodes one batch (the logical record that starts at `offset` in `file`) into `out`.
Status decode_batch(const SourceFile& file, uint64_t offset, std::string_view batch,
                    std::vector<Entry>* out);

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_WAL_READER_H_
