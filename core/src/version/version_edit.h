// FileMetaData and VersionEdit: what the manifest records.
//
// A FileMetaData describes one SSTable as the version set knows it, with the value log bytes its
// pointers reference; a VlogFileMeta describes one value log file. A VersionEdit is one change to
// the set of live tables (files added to or deleted from levels) and live value log files, plus
// the counters that must survive a restart (oldest WAL still needed, next file number, last
// sequence, last commit timestamp) and the database's versioning settings. The manifest is a log
// of encoded edits (docs/manifest.md); replaying them in order rebuilds the current Version.
//
// Thread safety: FileMetaData is an immutable value once shared (std::shared_ptr<const ...>),
// apart from its table pin, a cache that is safe to fill from many threads (table_pin.h).
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

#include "format/file_header.h"
#include "format/internal_key.h"
#include "skv/options.h"
#include "skv/status.h"
#include "version/table_pin.h"

namespace skv {

// No database has more levels than this; decoding rejects larger level numbers.
constexpr int kMaxLevelCount = 16;

// The entries of one value log that a table points at: their total size (entry_size(), header
// included), so that the live bytes of a value log are the sum over the tables of a version.
struct VlogRef {
  uint64_t vlog_number = 0;
  uint64_t bytes = 0;

  bool operator==(const VlogRef&) const = default;
};

// One value log file (vlog_file_name(number)) as the manifest records it once it is complete.
struct VlogFileMeta {
  uint64_t number = 0;
  uint64_t file_size = 0;  // bytes, file header included
  uint64_t num_entries = 0;

  // The bytes of its entries: everything after the file header.
  uint64_t entry_bytes() const { return file_size - kFileHeaderSize; }
  bool operator==(const VlogFileMeta&) const = default;
};

struct FileMetaData {
  uint64_t number = 0;     // the table is table_file_name(number)
  uint64_t file_size = 0;  // bytes
  std::string smallest;    // smallest internal key in the table
  std::string largest;     // largest internal key in the table
  SequenceNumber smallest_seq = 0;
  SequenceNumber largest_seq = 0;
  uint64_t num_entries = 0;
  // The value logs this table points into, by ascending vlog_number (empty without pointers).
  std::vector<VlogRef> vlog_refs;
  // The open table, once the TableCache has pinned it. Not encoded; empty in every copy.
  TablePin table;
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
  // A value log file becomes live (tables added by the same or a later edit point into it).
  void add_vlog_file(const VlogFileMeta& meta) { new_vlog_files_.push_back(meta); }
  // A value log file is no longer live: no table of the resulting version points into it.
  void delete_vlog_file(uint64_t number) { deleted_vlog_files_.push_back(number); }

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
  const std::vector<VlogFileMeta>& new_vlog_files() const { return new_vlog_files_; }
  const std::vector<uint64_t>& deleted_vlog_files() const { return deleted_vlog_files_; }

  // Appends the encoding of this edit to *dst (grammar in version_edit.cpp and docs/manifest.md).
  void encode_to(std::string* dst) const;

  // Replaces this edit with the one encoded in `input`. Every field is checked (tags, varints,
  // lengths, levels, key shapes, key and sequence order, value log sizes and references); any
  // failure, and trailing bytes, is
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
  std::vector<VlogFileMeta> new_vlog_files_;
  std::vector<uint64_t> deleted_vlog_files_;
};

}  // namespace skv

#endif  // SKV_VERSION_VERSION_EDIT_H_
