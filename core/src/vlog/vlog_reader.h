// VlogReader: reads single entries of one value log (vlog_format.h) at the positions pointers
// give (value_pointer.h), with positional reads. Sequential reads are VlogScanner's
// (vlog_scanner.h).
//
// Every check a read makes is on bytes: the pointer against the file's size, the entry's lengths
// and key against the pointer and the caller's key, and the checksum. Any failure is Corruption
// "<file>: corrupt value log entry at offset <o>: <reason>"; a missing file is Corruption too,
// since a pointer names it. Errors of the platform itself (I/O) are passed on. In an encrypted
// value log the sealed body is opened at the pointer's offset after the checksum passes; a body
// that fails authentication is Corruption "<file>: sealed unit at offset <o> fails
// authentication (...)".
//
// Thread safety: get() is const and may be called from several threads at once, also while a
// VlogWriter appends to the same file through another handle.

#ifndef SKV_VLOG_VLOG_READER_H_
#define SKV_VLOG_VLOG_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "crypto/cipher_source.h"
#include "crypto/file_cipher.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_format.h"

namespace skv::vlog {

class VlogReader {
 public:
  // Opens the value log numbered `file_number` in `store` and checks its header. Corruption if
  // the file does not exist ("<file>: value log file is missing"), or its header is short or bad
  // ("<file>: bad file header at offset 0: <reason>", a number that is not the file's own
  // included); the platform's error if opening or reading fails. The file's cipher is found with
  // crypto::cipher_for_header(ciphers, header, file name): `ciphers` (not owned; it must outlive
  // the reader) is the database's CipherSource, or null for a plaintext database. Its errors are
  // returned by name: Encryption/NotConfigured for an encrypted file and no source; Corruption for
  // a plaintext file with one, or a header naming another database; Encryption/UnknownKeyId,
  // KeyRetired or WrongKey; NotSupported for a cipher this build cannot run.
  static Result<std::unique_ptr<VlogReader>> open(LogStore& store, uint64_t file_number,
                                                  crypto::CipherSource* ciphers = nullptr);
  // The same over a file already open, which the reader takes.
  static Result<std::unique_ptr<VlogReader>> open(std::unique_ptr<LogFile> file,
                                                  uint64_t file_number,
                                                  crypto::CipherSource* ciphers = nullptr);

  VlogReader(const VlogReader&) = delete;
  VlogReader& operator=(const VlogReader&) = delete;
  ~VlogReader();

  // Reads the entry `p` points at, which must hold `key`, and sets *value to its value. One
  // positional read of p.size bytes when they lie inside the size this handle knows; otherwise
  // (the file may have grown through another handle) the entry's header is read first and must
  // agree with p before p.size bytes are allocated.
  // InvalidArgument if p names another file or `key` is empty or too long; Corruption (naming the
  // file and p.offset) if p is out of range (check_value_pointer) or runs past the end of the
  // file, the entry's lengths do not add up to p.size (which counts the seal's 16 bytes in an
  // encrypted file), its checksum fails, its sealed body fails authentication, or it holds
  // another key. On error *value is unspecified (for an encrypted file: empty, or the sealed
  // bytes read, never plaintext).
  Status get(const ValuePointer& p, std::string_view key, std::string* value) const;

  // Reads up to `n` bytes at `offset` (fewer at the end of the file) into scratch[0, n), which
  // the caller owns, and sets *got to them (they always lie at the start of `scratch`). For a
  // caller that keeps a stretch of the file to decode several entries from (get_in); the buffer
  // need not be zeroed first, so a chunk costs one allocation and one read. The platform's error
  // for I/O.
  Status read_span(uint64_t offset, size_t n, char* scratch, std::string_view* got) const;

  // get() on bytes already read: `span` holds the file's bytes from `span_offset` on (from
  // read_span). Makes the same checks as get() and gives the same errors; an entry that runs
  // past the end of `span` is Corruption "runs past the end of the file", so `span` must hold
  // either the whole entry or everything the file has after span_offset.
  Status get_in(const ValuePointer& p, std::string_view key, std::string_view span,
                uint64_t span_offset, std::string* value) const;

  uint64_t file_number() const { return file_number_; }
  const std::string& name() const;
  // Whether the file is encrypted.
  bool encrypted() const { return cipher_ != nullptr; }

 private:
  VlogReader(std::unique_ptr<LogFile> file, uint64_t file_number,
             std::shared_ptr<const crypto::FileCipher> cipher);

  Status corruption(uint64_t offset, const std::string& what) const;
  // Corruption unless an entry with these stored lengths has the pointer's size.
  Status check_lengths(const ValuePointer& p, uint32_t key_len, uint32_t value_len) const;
  // The checks of `p` and `key` that need no bytes of the file.
  Status check_request(const ValuePointer& p, std::string_view key) const;
  // Checks the entry `got` holds (all of it: p.size bytes, or fewer if the file ended) against
  // `p` and `key` and sets *value to its value. `got` may point into *value.
  Status decode(const ValuePointer& p, std::string_view key, std::string_view got,
                std::string* value) const;

  uint64_t overhead() const { return cipher_ != nullptr ? kSealOverhead : 0; }

  std::unique_ptr<LogFile> file_;
  const uint64_t file_number_;
  const std::shared_ptr<const crypto::FileCipher> cipher_;  // null: plaintext
};

// One read without keeping a reader: opens the file p names in `store`, reads the entry and
// closes the file. Errors as VlogReader::open and get(); a missing file is Corruption
// "<file>: value log file is missing (value at offset <o>)".
Status read_value(LogStore& store, const ValuePointer& p, std::string_view key, std::string* value,
                  crypto::CipherSource* ciphers = nullptr);

}  // namespace skv::vlog

#endif  // SKV_VLOG_VLOG_READER_H_
