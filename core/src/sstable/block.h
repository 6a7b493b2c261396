// Block: the decoded, immutable contents of one SSTable block (format in block_builder.h), and
// BlockIterator, a cursor over its entries.
//
// A Block is created only after its restart array was checked, so iterators never read outside
// it. Entries are decoded lazily; an entry that fails its checks makes the iterator invalid with
// a Corruption status naming the file and the block offset.
//
// Thread safety: a Block is immutable and shared (std::shared_ptr<const Block>, e.g. through the
// block cache) by any number of threads. A BlockIterator is used by one thread at a time.

#ifndef SKV_SSTABLE_BLOCK_H_
#define SKV_SSTABLE_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "iterator/internal_iterator.h"
#include "skv/status.h"
#include "sstable/block_format.h"
#include "util/byte_buffer.h"

namespace skv {

class Block {
 public:
  // Checks the restart array of `contents` (read from `file` at `offset`, both used only for
  // messages): at least one restart, the first at 0, ascending, all inside the entry area.
  // Corruption otherwise.
  static Result<std::shared_ptr<const Block>> create(BlockContents contents, std::string_view file,
                                                     uint64_t offset);
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  std::string_view data() const { return contents_.view(); }
  size_t size() const { return contents_.size; }
  // Offset of the restart array: the entries occupy [0, restarts_offset()).
  uint32_t restarts_offset() const { return restarts_offset_; }
  uint32_t num_restarts() const { return num_restarts_; }
  // REQUIRES: i < num_restarts().
  uint32_t restart_point(uint32_t i) const;
  // Bytes held in memory: the contents and the restart words below (what the cache charges).
  size_t memory_usage() const {
    return contents_.memory_usage() + size_t{words_ ? num_restarts_ : 0} * 8;
  }

  // Narrows a seek for an internal key with user key `target` to the restarts [*lo, *hi): every
  // restart before *lo has a key below any internal key of `target`, every restart from *hi on a
  // key above them. Between the two, keys must be compared in full. Without restart words (a
  // block whose restart keys are not all internal keys) that is every restart.
  void seek_bounds(std::string_view target, uint32_t* lo, uint32_t* hi) const;

 private:
  Block() = default;
  // Builds the restart words: for each restart, the 8 bytes of its user key that follow the
  // prefix all restarts' user keys share, big-endian, padded with zeros. A seek compares the
  // target's word with these (one dense array, a few cache lines) and decodes restart keys only
  // where the words tie. REQUIRES: the entries were checked (create()).
  void build_restart_words();

  BlockContents contents_;
  uint32_t restarts_offset_ = 0;
  uint32_t num_restarts_ = 0;
  std::unique_ptr<uint64_t[]> words_;  // null: no restart words
  uint32_t common_offset_ = 0;         // where the shared prefix starts (in restart 0's key)
  uint32_t common_size_ = 0;           // its length
};

// Iterates the entries of a block whose keys are internal keys (format/internal_key.h), in
// internal-key order. `file` names the table in error messages and must outlive the iterator;
// `block_offset` is the block's offset in that file. The iterator holds a reference to the
// block; key() views an iterator-owned buffer and value() views the block.
class BlockIterator final : public InternalIterator {
 public:
  BlockIterator(std::shared_ptr<const Block> block, std::string_view file, uint64_t block_offset);

  bool valid() const override { return current_ < restarts_offset_; }
  void seek_first() override;
  void seek_last() override;
  // REQUIRES: target is an internal key (at least kInternalKeySuffix bytes).
  void seek(std::string_view target) override;
  void next() override;
  void prev() override;
  std::string_view key() const override { return key_.view(); }
  std::string_view value() const override { return value_; }
  Status status() const override { return status_; }

 private:
  void set_invalid();
  void corrupt(const char* what, uint32_t entry_offset);
  // Positions before the entry at restart `index`; the next parse_next_entry() reads it.
  void seek_to_restart(uint32_t index);
  // Decodes the entry at next_ into key_/value_. False at the end of the block or on corruption
  // (the iterator is then invalid).
  bool parse_next_entry();
  // Decodes the full key stored at restart `index` into *key. False (and corrupt) if malformed.
  bool restart_key(uint32_t index, std::string_view* key);

  std::shared_ptr<const Block> block_;
  std::string_view file_;
  uint64_t block_offset_;
  const char* data_;
  uint32_t restarts_offset_;
  uint32_t num_restarts_;
  uint32_t current_;        // offset of the current entry; restarts_offset_ when invalid
  uint32_t next_ = 0;       // offset just past the current entry
  uint32_t restart_index_;  // the restart run that holds current_
  ByteBuffer key_;
  std::string_view value_;
  Status status_;
};

}  // namespace skv

#endif  // SKV_SSTABLE_BLOCK_H_
