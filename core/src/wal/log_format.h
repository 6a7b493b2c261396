// The record framing shared by WAL segments and the manifest.
//
//   log_file := file_header record*
//   record   := masked_crc:fixed32 length:fixed32 payload[length]
//
// masked_crc is crc32c::mask(CRC32C(length:fixed32 ‖ payload)). A record is never empty
// (length >= 1) and never longer than kMaxRecordSize. Records are written back to back; a group
// of records may be written with one append.
//
// On reading, a record that is cut short by the end of the file, or a tail of the file that is all
// zero bytes, is a torn tail: what a crash leaves behind an unsynced write. Any other failed check
// (bad CRC with data after the record, impossible length, trailing garbage) is corruption,
// reported with the file name and the record's offset.

#ifndef SKV_WAL_LOG_FORMAT_H_
#define SKV_WAL_LOG_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace skv::log {

constexpr size_t kRecordHeaderSize = 8;
constexpr uint32_t kMaxRecordSize = 1u << 30;

}  // namespace skv::log

#endif  // SKV_WAL_LOG_FORMAT_H_
