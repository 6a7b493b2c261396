// Version: one immutable snapshot of which SSTables make up the tree, level by level.
//
//   L0      files written by memtable flushes, ordered newest first (by largest_seq); their key
//           ranges may overlap, so a lookup may consult several of them.
//   L1..Ln  files sorted by smallest key whose key ranges do not overlap; one user key lives in
//           at most one file of a level (outputs are never split between versions of a key).
//
// For one user key, versions in a shallower level are always newer than versions in a deeper one.
// A Version is built by the VersionSet and shared as std::shared_ptr<const Version>: whoever holds
// one (a read, an iterator, a compaction) keeps its files from being deleted, because the tree
// deletes only files that VersionSet::live_files() no longer reports.
//
// A Version also holds the live value log files (docs/vlog.md): those its tables point into, each
// with the bytes its tables point at (the sum of their VlogRefs), so the rest of each file is
// garbage.
//
// Thread safety: immutable once built; every const method may be called from many threads at once
// without the tree's mutex. A Version shares ownership of its TableCache, so whoever holds the
// Version (an iterator pins it) can still open its tables' cached blocks.

#ifndef SKV_VERSION_VERSION_H_
#define SKV_VERSION_VERSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iterator/internal_iterator.h"
#include "sstable/table.h"
#include "version/table_cache.h"
#include "version/version_edit.h"

namespace skv {

// One live value log file of a Version and how much of it the Version's tables point at.
struct VlogUsage {
  VlogFileMeta meta;
  uint64_t live_bytes = 0;  // entry bytes some table of the version points at

  uint64_t garbage_bytes() const {
    return live_bytes >= meta.entry_bytes() ? 0 : meta.entry_bytes() - live_bytes;
  }
  // garbage_bytes() / entry bytes, in [0, 1].
  double garbage_share() const {
    return static_cast<double>(garbage_bytes()) / static_cast<double>(meta.entry_bytes());
  }
};

class Version : public std::enable_shared_from_this<Version> {
 public:
  // REQUIRES: files.size() is the level count; files[0] is ordered newest first; every deeper
  // level is sorted by smallest key and non-overlapping (VersionSet checks this). `vlog_files`
  // are the live value logs, each entry_bytes() > 0 (vlog_inconsistency() tells whether the
  // tables' references agree with them).
  Version(std::shared_ptr<TableCache> table_cache, std::vector<std::vector<FileMetaPtr>> files,
          std::vector<VlogFileMeta> vlog_files = {});
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  int level_count() const { return static_cast<int>(files_.size()); }
  const std::vector<FileMetaPtr>& files(int level) const { return files_[level]; }
  int num_files(int level) const { return static_cast<int>(files_[level].size()); }
  uint64_t level_bytes(int level) const { return level_bytes_[level]; }
  // The level's bytes with each table counted at least as its entries times the average entry
  // size over every table of this version: a table of small entries (tombstones above all) weighs
  // as much as the data it may hide. The compaction picker scores levels by it.
  uint64_t compensated_bytes(int level) const { return compensated_bytes_[level]; }
  // Total number of files over all levels.
  int total_files() const;

  // The live value log files, by ascending number, with the bytes the tables point at.
  const std::vector<VlogUsage>& vlog_files() const { return vlogs_; }
  // The usage of value log `number`, or null if it is not live in this version.
  const VlogUsage* find_vlog(uint64_t number) const;
  // Empty when the tables' value log references agree with the live value logs: every reference
  // names a live file, no file is pointed at for more bytes than it holds, and every file is
  // pointed into. Otherwise what is wrong, in words (the version set reports it).
  const std::string& vlog_inconsistency() const { return vlog_inconsistency_; }

  // Finds the newest version of `user_key` with sequence <= `snapshot`: L0 newest first, then one
  // candidate file per deeper level (binary search). On OK, *found tells whether a version
  // (value or tombstone) exists and *out holds it (out->found == *found). Errors opening or
  // reading a table (missing file, corruption, I/O) are returned as errors, never as not found.
  Status get(std::string_view user_key, SequenceNumber snapshot, Table::GetResult* out,
             bool* found) const;

  // Appends cursors that together cover every entry of this version: one per L0 file and one
  // concatenating cursor per non-empty deeper level. Tables open lazily; each cursor keeps this
  // Version alive. Merge them with new_merging_iterator.
  void add_iterators(const TableReadOptions& options,
                     std::vector<std::unique_ptr<InternalIterator>>* out) const;

  // add_iterators() for a reader of one user key: only the files whose key range holds
  // `user_key` and whose bloom filter does not rule it out, at most one per deeper level. The
  // tables are opened here (to ask their filters), so an error opening one is returned.
  Status add_point_iterators(std::string_view user_key, const TableReadOptions& options,
                             std::vector<std::unique_ptr<InternalIterator>>* out) const;

  // Files of `level` whose user-key range intersects [begin, end] (inclusive user keys; nullopt
  // is unbounded on that side), in the level's order. For L0 every intersecting file is returned
  // without widening the range by the files found.
  std::vector<FileMetaPtr> overlapping_files(int level, std::optional<std::string_view> begin,
                                             std::optional<std::string_view> end) const;
  // True if some file of `level` intersects [begin, end] (same conventions).
  bool overlaps(int level, std::optional<std::string_view> begin,
                std::optional<std::string_view> end) const;

  // "L0: #7[a..k] #5[c..d]\nL1: ..." for tests and tools.
  std::string debug_string() const;

 private:
  // Fills vlogs_[].live_bytes from the tables' references, and vlog_inconsistency_.
  void count_vlog_references();

  const std::shared_ptr<TableCache> table_cache_;
  const std::vector<std::vector<FileMetaPtr>> files_;
  std::vector<uint64_t> level_bytes_;
  std::vector<uint64_t> compensated_bytes_;
  std::vector<VlogUsage> vlogs_;
  std::string vlog_inconsistency_;
};

// True if the user-key range of `f` intersects [begin, end] (nullopt: unbounded).
bool file_overlaps_range(const FileMetaData& f, std::optional<std::string_view> begin,
                         std::optional<std::string_view> end);

}  // namespace skv

#endif  // SKV_VERSION_VERSION_H_
