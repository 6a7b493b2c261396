// VlogScanner: reads the entries of one value log (vlog_format.h) in order, from the header to
// the end, for recovery and garbage collection. It tells a torn tail (the end of an unsynced write
// a crash cut short) from damage, which is Corruption.
//
// In an encrypted value log every check on the framing (lengths, checksum, torn tails) is made on
// the stored bytes, as in a plaintext file; an entry whose checksum passes is then opened at its
// offset (vlog_format.h, "Sealed entries").
//
// Thread safety: one scanner is used by one thread at a time. The file may be appended to
// meanwhile; the scanner sees the size the file had when the header was read.

#ifndef SKV_VLOG_VLOG_SCANNER_H_
#define SKV_VLOG_VLOG_SCANNER_H_

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
#include "vlog/value_pointer.h"

namespace skv::vlog {

// One entry as the scanner hands it out. Copyable.
struct VlogEntry {
  ValuePointer pointer;  // where the entry is: what a VlogWriter returned for it
  std::string key;
  std::string value;
};

class VlogScanner {
 public:
  // Does not own `file`, the value log numbered `file_number`, which must outlive the scanner.
  // `ciphers` (not owned; it must outlive the scanner) is the database's CipherSource, or null
  // for a plaintext database.
  VlogScanner(const LogFile* file, uint64_t file_number, crypto::CipherSource* ciphers = nullptr);
  VlogScanner(const VlogScanner&) = delete;
  VlogScanner& operator=(const VlogScanner&) = delete;

  // Checks the header and fills *header. Corruption "<file>: bad file header at offset 0:
  // <reason>" if it is bad, or names another file number. Then the file's cipher is found with
  // crypto::cipher_for_header(ciphers, header, file name), whose errors come back by name:
  // Encryption/NotConfigured for an encrypted file and no source; Corruption for a plaintext file
  // with one, or a header naming another database; Encryption/UnknownKeyId, KeyRetired or
  // WrongKey; NotSupported for a cipher this build cannot run.
  // An empty file, or one holding a plausible start of a header (magic, kind and flags as
  // expected) followed only by zero bytes, is a torn tail at offset 0: OK with *header untouched,
  // torn_tail() true, valid_end() 0, and next() returns false. Called by the first next() if not
  // called before; later calls return what the first one found.
  Status read_header(FileHeader* header);

  // Reads the next entry into *entry. Returns true with an entry; false at the clean end of the
  // file or at a torn tail (torn_tail() then says which, and valid_end() is where the whole
  // entries end); or an error: Corruption "<file>: corrupt value log entry at offset <o>:
  // <reason>" or the platform's error. After an error the position does not move, so calling
  // again reports it again; after false, next() keeps returning false.
  //
  // Torn tail: fewer than 12 bytes left; a zero key length with only zero bytes after the
  // checksum field; an entry running past the end of the file when no intact entry starts after
  // its offset and no damaged length explains it; an entry whose checksum fails while it is zero
  // from a 512-byte boundary inside it to the end of the file and no intact entry starts after
  // it. Everything else that fails is Corruption (docs/vlog.md lists every case); in an encrypted
  // file that includes an entry whose checksum passes but whose body fails authentication,
  // "<file>: sealed unit at offset <o> fails authentication (...)".
  Result<bool> next(VlogEntry* entry);

  bool torn_tail() const { return torn_tail_; }
  // The file offset just past the last whole entry (or the header; 0 for a torn header).
  uint64_t valid_end() const { return valid_end_; }

 private:
  const LogFile* file_;
  const uint64_t file_number_;
  crypto::CipherSource* const ciphers_;
  std::shared_ptr<const crypto::FileCipher> cipher_;  // null: plaintext
  uint64_t overhead_ = 0;                             // kSealOverhead when cipher_ is set
  bool header_checked_ = false;
  Status header_status_;
  bool torn_tail_ = false;
  bool at_end_ = false;
  uint64_t pos_ = 0;
  uint64_t valid_end_ = 0;
  FileHeader header_;
  LogWindow in_;

  Result<bool> entry_checks_out(uint64_t offset, uint32_t key_len, uint32_t value_len,
                                uint32_t masked_crc, uint64_t* budget);
  Result<bool> intact_entry_after(uint64_t begin, uint64_t end);
  Result<bool> lengths_damaged(uint32_t masked_crc, uint32_t key_len, uint32_t value_len);
  Status check_header(std::string_view bytes);
  Status corruption(uint64_t offset, const std::string& what) const;
  bool end_with_torn_tail();
};

}  // namespace skv::vlog

#endif  // SKV_VLOG_VLOG_SCANNER_H_
