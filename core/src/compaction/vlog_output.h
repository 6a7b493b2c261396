// VlogOutput: the value log files one flush or compaction job writes (docs/vlog.md).
//
// add() appends an entry to the file being written and returns its pointer. The first add()
// creates a file (a fresh number) and syncs the directory at once, so the file's name is durable
// before any table can point into it; once the file reaches `max_file_size`, the next add() syncs
// and closes it and starts another. sync() makes every entry added so far durable: the job calls
// it before it finishes a table that points into them. finish() syncs and closes the last file
// and hands back every file written, for the job's VersionEdit.
//
// Unless finish() succeeded, the destructor removes every file the output created (a job that
// fails or is dropped leaves nothing behind).
//
// Thread safety: one thread at a time (the job's).

#ifndef SKV_COMPACTION_VLOG_OUTPUT_H_
#define SKV_COMPACTION_VLOG_OUTPUT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "crypto/cipher_source.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "version/version_edit.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_writer.h"

namespace skv {

class VlogOutput {
 public:
  // `storage` must outlive the output; `new_file_number` allocates file numbers. `ciphers` (not
  // owned; it must outlive the output) is the database's CipherSource: each file gets a cipher of
  // its own from for_new_file and its entries are sealed. Null for a plaintext database.
  VlogOutput(Storage* storage, std::function<Result<uint64_t>()> new_file_number,
             uint64_t max_file_size, crypto::CipherSource* ciphers = nullptr);
  VlogOutput(const VlogOutput&) = delete;
  VlogOutput& operator=(const VlogOutput&) = delete;
  ~VlogOutput();

  // Appends one entry (user key, value); returns where it is. Errors of the platform, of
  // CipherSource::for_new_file (before the file is created), or of VlogWriter::add
  // (InvalidArgument for a key or value beyond the limits).
  Result<vlog::ValuePointer> add(std::string_view user_key, std::string_view value);
  // Makes every entry added so far durable (OK when nothing was added).
  Status sync();
  // Syncs and closes the file being written and appends every file written to *files. The files
  // are then the caller's: the destructor leaves them.
  Status finish(std::vector<VlogFileMeta>* files);

  // Entry bytes added so far, over every file.
  uint64_t bytes_added() const { return bytes_added_; }

 private:
  // Syncs and closes the file being written and records it in done_.
  Status close_current();

  Storage* const storage_;
  const std::function<Result<uint64_t>()> new_file_number_;
  const uint64_t max_file_size_;
  crypto::CipherSource* const ciphers_;
  std::unique_ptr<vlog::VlogWriter> writer_;
  uint64_t entries_ = 0;  // in writer_'s file
  std::vector<VlogFileMeta> done_;
  std::vector<uint64_t> created_;  // every file number created, removed unless kept
  uint64_t bytes_added_ = 0;
  bool kept_ = false;
};

}  // namespace skv

#endif  // SKV_COMPACTION_VLOG_OUTPUT_H_
