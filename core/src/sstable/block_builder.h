// BlockBuilder: builds the contents of one SSTable block (data or index) with prefix-compressed
// keys and restart points.
//
//   block     := entry* ‖ restart:fixed32[num_restarts] ‖ num_restarts:fixed32
//   entry     := shared:varint32 ‖ non_shared:varint32 ‖ value_len:varint32 ‖
//                key_delta:u8[non_shared] ‖ value:u8[value_len]
//   restart   := offset of an entry whose shared = 0, ascending; the first is 0
//
// An entry's key is the first `shared` bytes of the previous entry's key followed by key_delta.
// Every `restart_interval` entries the key is stored whole (shared = 0) and its offset is added
// to the restart array, so a reader can binary-search the restarts. With `restart_bytes` set, an
// entry also starts a restart when the entries since the last restart hold at least that many
// bytes, so a reader's walk from a restart stays short when entries are large. An empty block is a
// single restart (0) and num_restarts = 1. The block is then framed by BlockEncoder
// (block_format.h).
//
// Thread safety: one builder is used by one thread.

#ifndef SKV_SSTABLE_BLOCK_BUILDER_H_
#define SKV_SSTABLE_BLOCK_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace skv {

// The most one entry adds to a block beyond its key delta and value: three varint32 headers and a
// restart slot.
constexpr size_t kMaxBlockEntryOverhead = 3 * 5 + 4;
// The restart count at the end of every block.
constexpr size_t kBlockCountSize = 4;

class BlockBuilder {
 public:
  // `restart_interval` below 1 is treated as 1; `restart_bytes` 0 restarts by count only.
  explicit BlockBuilder(int restart_interval, size_t restart_bytes = 0);
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // Forgets everything added; the builder can start a new block.
  void reset();

  // Appends an entry. REQUIRES: finish() was not called since the last reset(); `key` sorts
  // after the previous key (the caller checks the order); sizes fit in 32 bits.
  void add(std::string_view key, std::string_view value);

  // Appends the restart array and returns the block contents, valid until the next reset() or
  // the builder's destruction.
  std::string_view finish();

  // The size of the block if finish() were called now.
  size_t size_estimate() const;
  bool empty() const { return num_entries_ == 0; }
  size_t num_entries() const { return num_entries_; }
  // The last key added (empty if none).
  std::string_view last_key() const { return last_key_; }

 private:
  const int restart_interval_;
  const size_t restart_bytes_;  // 0: no byte limit
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  int counter_ = 0;  // entries since the last restart
  size_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace skv

#endif  // SKV_SSTABLE_BLOCK_BUILDER_H_
