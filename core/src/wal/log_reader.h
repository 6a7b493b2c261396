// LogReader: reads framed records (log_format.h) back from a LogFile, in order, opening sealed
// payloads when the file is encrypted.
//
// Thread safety: one reader is used by one thread at a time.

#ifndef SKV_WAL_LOG_READER_H_
#define SKV_WAL_LOG_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "crypto/cipher_source.h"
#include "crypto/file_cipher.h"
#include "format/file_header.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "util/log_window.h"

namespace skv::log {

class Reader {
 public:
  // Does not own `file`, which must outlive the reader. `expected_kind` is checked against the
  // file header. `ciphers` (not owned; must outlive the reader) is the database's CipherSource,
  // or null for a plaintext database.
  Reader(const LogFile* file, FileKind expected_kind, crypto::CipherSource* ciphers = nullptr);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Checks the header (Corruption naming the file if bad) and fills *header. An empty file, a
  // file cut inside its header, or a file of zero bytes only, is accepted as a torn tail at
  // offset 0: OK, *header untouched, torn_tail() true, valid_end() 0, and read_record returns
  // false. So is a first sector of zeros with data after it (a hole, below; hole() true). Called by
  // the first read_record if not called before; later calls return the header read the first time.
  //
  // Then the file's cipher is found with crypto::cipher_for_header(ciphers, header, file name),
  // and its errors are returned here, by name, before any record is read: Encryption/
  // NotConfigured for a sealed file with no CipherSource; Corruption for a plaintext file with
  // one, or a header naming another database; Encryption/UnknownKeyId, KeyRetired or WrongKey;
  // NotSupported for a cipher this build cannot run. Such an error is sticky: read_record
  // returns it too.
  Status read_header(FileHeader* header);

  // Reads the next record into *record and sets *offset to its position in the file.
  // Returns true with a record, false at the clean end of the file or at a torn tail (then
  // torn_tail() is true and valid_end() is where the good data ends), or an error:
  // Corruption naming the file and offset, or the platform's I/O error. After an error the
  // position does not move: calling again reports the same error. The size of the file is taken
  // when the header is read; bytes appended later are not seen.
  //
  // Torn tail (false): the file ends inside a record header; a record's length runs past the
  // end of the file and no intact record starts anywhere after that header (a cut write); a
  // record's checksum fails and it is zero from a 512-byte boundary inside it to the end of the
  // file; everything from the record on is zero bytes. Corruption: a zero or oversized length with
  // non-zero bytes after it, a checksum failure with non-zero bytes after the record, or a length
  // past the end of the file while an intact record starts inside the claimed extent (the length
  // itself is damaged).
  //
  // Hole (also false, torn_tail() and hole() true): a record with a zero length or a failed
  // checksum that is zero from its start to the end of that 512-byte sector, or over an aligned
  // sector of zeros that starts inside it (inside the header for a zero length), whatever
  // follows. Pages of an unsynced write can reach storage in any order, so one that did not
  // reads as the zeros that were there before (room reserved ahead, or a file's unwritten
  // blocks) while later ones hold data. Nothing synced lies at or after such a hole: a sync
  // writes every page before it returns.
  //
  // In an encrypted file the framing is checked on the stored (sealed) bytes as above, so a torn
  // tail is told exactly as in a plaintext file; a record whose checksum passes is then opened at
  // its offset and *record is the opened payload. A record that fails authentication (moved,
  // swapped, copied from another file or database, replayed, or edited with a matching checksum)
  // is Corruption "<file>: sealed unit at offset <o> fails authentication (...)": never data and
  // never a torn tail.
  Result<bool> read_record(std::string* record, uint64_t* offset);

  // The file's cipher after read_header succeeded; null for a plaintext file.
  const std::shared_ptr<const crypto::FileCipher>& cipher() const { return cipher_; }

  // After read_record returned false: whether the end was a torn tail rather than a clean end.
  bool torn_tail() const { return torn_tail_; }
  // After a torn tail: whether it was a hole with data after it rather than a cut end.
  bool hole() const { return hole_; }
  // The file offset just past the last good record (or header).
  uint64_t valid_end() const { return valid_end_; }

 private:
  const LogFile* file_;
  FileKind kind_;
  crypto::CipherSource* const ciphers_;
  std::shared_ptr<const crypto::FileCipher> cipher_;  // null: plaintext
  std::string sealed_;                                // a sealed record, while it is opened
  bool header_checked_ = false;
  Status header_status_;  // a sticky error of read_header
  bool torn_tail_ = false;
  bool hole_ = false;
  uint64_t pos_ = 0;
  uint64_t valid_end_ = 0;
  bool at_end_ = false;  // read_record returned false; it keeps doing so
  FileHeader header_;
  LogWindow in_;

  Result<bool> intact_record_after(uint64_t begin, uint64_t end);
  Result<bool> record_checks_out(uint64_t offset, uint32_t length, uint32_t masked_crc,
                                 uint64_t* budget);
  Status corruption(uint64_t offset, const std::string& what) const;
  Result<bool> over_hole(uint64_t begin, uint64_t end);
  bool end_with_torn_tail();
  bool end_with_hole();
};

}  // namespace skv::log

#endif  // SKV_WAL_LOG_READER_H_
