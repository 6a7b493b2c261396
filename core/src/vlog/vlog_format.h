// The value log: files that hold large values apart from the tree, which keeps a pointer to each
// (value_pointer.h). docs/vlog.md describes the format byte by byte.
//
//   vlog_file   := file_header entry*        (file_kind 4; or empty: a file never written)
//   entry       := masked_crc:fixed32 key_len:fixed32 value_len:fixed32
//                  key:u8[key_len] value:u8[value_len]
//   masked_crc  := mask(CRC32C(key_len:fixed32 ‖ value_len:fixed32 ‖ key ‖ value))
//
// 1 <= key_len <= kMaxKeySize and value_len <= kMaxValueSize (an empty value is allowed). Entries
// follow each other with no padding; the file header goes out with the first entry. The key is
// stored so that garbage collection can ask the tree whether an entry is still live.
//
// Sealed entries. In an encrypted value log (the header's cipher is not 0) the key and the value
// are sealed together, as one unit, at the entry's offset:
//
//   sealed_entry := masked_crc:fixed32 key_len:fixed32 value_len:fixed32
//                   sealed_body[key_len + value_len + 16]
//   sealed_body  := FileCipher::seal(position = the entry's offset, key ‖ value)
//   masked_crc   := mask(CRC32C(key_len:fixed32 ‖ value_len:fixed32 ‖ sealed_body))
//
// key_len and value_len stay the plaintext lengths; the entry (and its pointer's size) is 16 bytes
// longer. The checksum is checked first, on the stored bytes, so torn tails are told as in a
// plaintext file; then the body is opened at the entry's offset.
//
// On reading, damage a crash during an unsynced write can leave at the end of the file is a torn
// tail (vlog_scanner.h has the exact rules); any other failed check is corruption, reported with
// the file name and the entry's offset.
//
// Thread safety: pure values and functions.

#ifndef SKV_VLOG_VLOG_FORMAT_H_
#define SKV_VLOG_VLOG_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "crypto/file_cipher.h"
#include "skv/options.h"

namespace skv::vlog {

// masked_crc, key_len, value_len.
constexpr size_t kEntryHeaderSize = 12;
// The smallest entry: a one-byte key and an empty value.
constexpr uint64_t kMinEntrySize = kEntryHeaderSize + 1;
// Bytes sealing adds to an entry of an encrypted value log (the AEAD tag).
constexpr uint64_t kSealOverhead = crypto::FileCipher::kOverhead;
// The largest entry: a key and a value of the largest sizes the tree accepts, sealed.
constexpr uint64_t kMaxEntrySize = kEntryHeaderSize + kMaxKeySize + kMaxValueSize + kSealOverhead;
// The unit storage writes atomically, as for the WAL (wal/log_format.h): a crash leaves each
// sector either written or not.
constexpr uint64_t kSectorSize = 512;

// The size of the entry that holds `key` and `value`; `overhead` is kSealOverhead in an
// encrypted value log, 0 otherwise.
inline uint64_t entry_size(size_t key_len, size_t value_len, uint64_t overhead = 0) {
  return kEntryHeaderSize + uint64_t{key_len} + uint64_t{value_len} + overhead;
}

// Appends the encoding of one entry to dst. REQUIRES: 1 <= key.size() <= kMaxKeySize and
// value.size() <= kMaxValueSize (the writer checks before calling).
void encode_entry(std::string_view key, std::string_view value, std::string* dst);

// Appends the sealed encoding of one entry that starts at file offset `position` to dst.
// REQUIRES as encode_entry.
void encode_sealed_entry(const crypto::FileCipher& cipher, uint64_t position, std::string_view key,
                         std::string_view value, std::string* dst);

// The masked checksum an entry with these lengths and body (key ‖ value) carries.
uint32_t entry_crc(uint32_t key_len, uint32_t value_len, std::string_view body);

}  // namespace skv::vlog

#endif  // SKV_VLOG_VLOG_FORMAT_H_
