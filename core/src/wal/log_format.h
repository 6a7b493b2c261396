// The record framing shared by WAL segments and the manifest.
//
//   log_file := file_header record*
//   record   := masked_crc:fixed32 length:fixed32 payload[length]
//
// masked_crc is crc32c::mask(CRC32C(length:fixed32 ‖ payload)). A record is never empty
// (length >= 1) and never longer than kMaxRecordSize. Records are written back to back; a group
// of records may be written with one append.
//
// Sealed records. In an encrypted file (the header's cipher is not 0) the stored payload is
//
//   payload  := FileCipher::seal(position = the record's offset, plaintext payload)
//             = ciphertext[plaintext length] tag[16]
//
// and length and masked_crc cover those stored bytes, so the framing and the torn-tail rules below
// are the same on the physical bytes. A reader checks the checksum first and then opens the
// payload at the record's offset: a failure to authenticate is corruption, never a torn tail.
// A plaintext payload is at most kMaxRecordSize - 16 bytes when sealed.
//
// On reading (log_reader.h has the exact rules), damage that a crash during an unsynced write can
// leave is a torn tail: a record whose length runs past the end of the file, or a record that
// fails its checksum while being zero from a sector boundary inside it to the end of the file. Any
// other failed check (a bad CRC with a good record inside its claimed length or after it, an
// impossible length) is corruption, reported with the file name and the record's offset.

#ifndef SKV_WAL_LOG_FORMAT_H_
#define SKV_WAL_LOG_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace skv::log {

constexpr size_t kRecordHeaderSize = 8;
constexpr uint32_t kMaxRecordSize = 1u << 30;
// The unit storage writes atomically: a crash leaves each sector either written or not.
constexpr uint64_t kSectorSize = 512;

}  // namespace skv::log

#endif  // SKV_WAL_LOG_FORMAT_H_
