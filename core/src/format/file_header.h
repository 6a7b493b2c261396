// The header that starts every skv file (WAL segment, SSTable, manifest, value log).
//
//   file_header (64 bytes) :=
//     magic:fixed32 ("SKV1" read as little-endian)    offset  0
//     format_version:fixed16                          offset  4
//     file_kind:u8                                    offset  6
//     flags:u8 (0)                                    offset  7
//     file_number:fixed64                             offset  8
//     cipher:u8 (0 = none)                            offset 16
//     reserved:u8[3] (0)                              offset 17
//     key_id:fixed32 (0 when not encrypted)           offset 20
//     salt:u8[16] (0 when not encrypted)              offset 24
//     db_id:u8[16] (0 when not encrypted)             offset 40
//     key_check:fixed32 (0 when not encrypted)        offset 56
//     crc:fixed32 (masked CRC32C of bytes 0..59)      offset 60
//
// The cipher, key id, salt, database id and key check value are the encryption envelope
// (docs/encryption.md); a plaintext file has zeros there. A header that fails its checks is
// corruption, reported with the file name.
//
// Thread safety: pure values and functions.

#ifndef SKV_FORMAT_FILE_HEADER_H_
#define SKV_FORMAT_FILE_HEADER_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "skv/status.h"
#include "skv/version.h"  // kFormatVersion

namespace skv {

constexpr size_t kFileHeaderSize = 64;
constexpr uint32_t kFileMagic = 0x31564b53;  // "SKV1"

enum class FileKind : uint8_t {
  Wal = 1,
  Table = 2,
  Manifest = 3,
  ValueLog = 4,
};

struct FileHeader {
  FileKind kind = FileKind::Wal;
  uint64_t file_number = 0;
  uint16_t format_version = kFormatVersion;
  uint8_t cipher = 0;
  uint32_t key_id = 0;
  std::array<uint8_t, 16> salt{};
  std::array<uint8_t, 16> db_id{};
  uint32_t key_check = 0;
};

// Appends the 64-byte encoding of `h` to dst.
void encode_file_header(const FileHeader& h, std::string* dst);

// Decodes and checks a header read from `file`. Corruption (naming `file`) if the input is
// short, the magic or checksum is wrong, the kind is not `expected_kind`, or the format version is
// newer than this build understands.
Result<FileHeader> decode_file_header(std::string_view input, FileKind expected_kind,
                                      std::string_view file);

}  // namespace skv

#endif  // SKV_FORMAT_FILE_HEADER_H_
