// TableBuilder: writes one SSTable from internal keys added in strictly increasing order.
//
// Thread safety: one builder is used by one thread.

#ifndef SKV_SSTABLE_TABLE_BUILDER_H_
#define SKV_SSTABLE_TABLE_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "crypto/file_cipher.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "sstable/table_options.h"

namespace skv {

class TableBuilder {
 public:
  // Takes ownership of `writer`; `file_number` goes into the file header. With a `cipher` (made
  // for this file: kind Table, `file_number`), the header records its envelope and every block
  // and the footer are sealed at their offsets (docs/sstable.md, "Encrypted tables"); without
  // one the table is plaintext.
  TableBuilder(const TableOptions& options, std::unique_ptr<ObjectWriter> writer,
               uint64_t file_number, std::shared_ptr<const crypto::FileCipher> cipher = nullptr);
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;
  // Abandons the table if neither finish() nor abandon() was called.
  ~TableBuilder();

  // REQUIRES: `ikey` sorts after every key added before (internal-key order).
  // InvalidArgument for a malformed internal key, a user key longer than kMaxKeySize, or an
  // entry too large for one block. Errors from the writer are sticky: later calls return them.
  Status add(std::string_view ikey, std::string_view value);

  uint64_t num_entries() const;
  // Bytes written so far plus the block being built: used to split compaction outputs.
  uint64_t estimated_file_size() const;

  // Writes the remaining blocks, the filter, index, properties and footer, then
  // ObjectWriter::finish() (durable). REQUIRES: at least one entry was added.
  Status finish();
  // Discards the table (ObjectWriter::abort()).
  void abandon();

  // Valid after finish(): the final size and the properties written.
  uint64_t file_size() const;
  const TableProperties& properties() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace skv

#endif  // SKV_SSTABLE_TABLE_BUILDER_H_
