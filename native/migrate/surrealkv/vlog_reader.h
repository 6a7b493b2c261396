// The SurrealKV 0.20/0.21 value log (vlog/%020u.vlog): values that a table or the WAL stores as
// a ValuePointer.
//
// Grammar (big-endian):
//   header (31 bytes): magic u32 0x564C4F47 "VLOG" | version u16 (=1) | file_id u32 |
//                      created_at u64 ms | max_file_size u64 | compression u8 (=0) | reserved u32
//   entry:             key_len u32 | value_len u32 | key | value | crc u32
//                      (crc = IEEE CRC-32 of key ‖ value; key = the full encoded internal key)
// A pointer's offset is that of its entry's key_len.
//
// Not thread-safe (files are opened on first use). Not copyable.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_VLOG_READER_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_VLOG_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "native/migrate/source_file.h"
#include "native/migrate/surrealkv/surrealkv_format.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

class VLogReader {
 public:
  // `dir` is the database's vlog/ folder (it may be missing when nothing points into it).
  explicit VLogReader(std::string dir) : dir_(std::move(dir)) {}
  VLogReader(const VLogReader&) = delete;
  VLogReader& operator=(const VLogReader&) = delete;

  // Reads the value `p` points to into `value`. `internal_key` is the encoded internal key of
  // the entry holding the pointer, which the VLog entry must repeat. `from` and `from_offset`
  // name where the pointer was read, for errors about the pointer itself. Corruption (naming
  // the VLog file and offset) when the file is missing, its header is wrong, the entry's lengths
  // differ from the pointer's, its CRC fails or its key differs; NotSupported for an unknown
  // version or compression.
  Status get(const ValuePointer& p, std::string_view internal_key, const SourceFile& from,
             uint64_t from_offset, std::string* value);

  uint64_t bytes_read() const { return bytes_read_; }

 private:
  Result<const SourceFile*> file(uint32_t id, const SourceFile& from, uint64_t from_offset);

  std::string dir_;
  std::map<uint32_t, SourceFile> files_;  // opened, header checked
  uint64_t bytes_read_ = 0;
};

// "<dir>/<id as 20 digits>.<ext>".
std::string numbered_path(const std::string& dir, uint64_t id, std::string_view ext);

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_VLOG_READER_H_
