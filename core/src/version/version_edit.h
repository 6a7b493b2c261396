// FileMetaData and VersionEdit: what the manifest records.
//
// A FileMetaData describes one SSTable as the version set knows it. A VersionEdit is one change to
// the set of live tables (files added to or deleted from levels) plus the counters that must
// survive a restart (oldest WAL still needed, next file number, last sequence, last commit
// timestamp) and the database's versioning settings. The manifest is a
// log of encoded edits (docs/manifest.md); replaying them in order rebuilds the current Version.
//
// Thread safety: FileMetaData is an immutable value once shared (std::shared_ptr<const ...>).
// A VersionEdit is a plain value used by one thread at a time. Both are copyable.

#ifndef SKV_VERSION_VERSION_EDIT_H_
#define SKV_VERSION_VERSION_EDIT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/internal_key.h"
#include "skv/options.h"
#include "skv/status.h"

namespace skv {

// No database has more levels than this; decoding rejects larger level numbers.
constexpr int kMaxLevelCount = 16;

struct FileMetaData {
  uint64_t number = 0;     // the table is table_file_name(number)
  uint64_t file_size = 0;  // bytes
  std::string smallest;    // smallest internal key in the table
  std::string largest;     // largest internal key in the table
  SequenceNumber smallest_seq = 0;
  SequenceNumber largest_seq = 0;
  uint64_t num_entries = 0;
};

using FileMetaPtr = std::shared_ptr<const FileMetaData>;

class VersionEdit {
 public:
  struct NewFile {
    int level = 0;
    FileMetaData meta;
  };
  struct DeletedFile {
    int level = 0;
    uint64_t number = 0;
  };

  // Resets to an empty edit.
  void clear() { *this = VersionEdit(); }

  // The oldest WAL segment still needed: every WAL numbered below it is fully reflected in tables.
  void set_log_number(uint64_t n) { log_number_ = n; }
  void set_next_file_number(uint64_t n) { next_file_number_ = n; }
  void set_last_sequence(SequenceNumber s) { last_sequence_ = s; }
  // The largest commit timestamp handed out (the commit clock continues above it).
  void set_last_timestamp(uint64_t ts) { last_timestamp_ = ts; }
  // Whether the database is versioned, and its retention (docs/versioning.md).
  void set_versioning(const Versioning& v) { versioning_ = v; }
  // The internal key where the next compaction of `level` starts (round robin).
  void set_compact_pointer(int level, std::string_view ikey) {
    compact_pointers_.emplace_back(level, std::string(ikey));
  }
  void add_file(int level, const FileMetaData& meta) { new_files_.push_back({level, meta}); }
  void delete_file(int level, uint64_t number) { deleted_files_.push_back({level, number}); }

  const std::optional<uint64_t>& log_number() const { return log_number_; }
  const std::optional<uint64_t>& next_file_number() const { return next_file_number_; }
  const std::optional<SequenceNumber>& last_sequence() const { return last_sequence_; }
  const std::optional<uint64_t>& last_timestamp() const { return last_timestamp_; }
  const std::optional<Versioning>& versioning() const { return versioning_; }
  const std::vector<std::pair<int, std::string>>& compact_pointers() const {
    return compact_pointers_;
  }
  const std::vector<NewFile>& new_files() const { return new_files_; }
  const std::vector<DeletedFile>& deleted_files() const { return deleted_files_; }

  // Appends the encoding of this edit to *dst (grammar in version_edit.cpp and docs/manifest.md).
  void encode_to(std::string* dst) const;

  // Replaces this edit with the one encoded in `input`. Every field is checked (tags, varints,
  // lengths, levels, key shapes, key and sequence order); any failure, and trailing bytes, is
  // Corruption naming `file` and `offset` (where the record starts). On error the edit is left
  // cleared.
  Status decode_from(std::string_view input, std::string_view file = "version edit",
                     uint64_t offset = 0);

  // A readable one-line-per-field rendering, for tools and test failures.
  std::string debug_string() const;

 private:
  std::optional<uint64_t> log_number_;
  std::optional<uint64_t> next_file_number_;
  std::optional<SequenceNumber> last_sequence_;
  std::optional<uint64_t> last_timestamp_;
  std::optional<Versioning> versioning_;
  std::vector<std::pair<int, std::string>> compact_pointers_;
  std::vector<DeletedFile> deleted_files_;
  std::vector<NewFile> new_files_;
};

}  // namespace skv

#endif  // SKV_VERSION_VERSION_EDIT_H_
