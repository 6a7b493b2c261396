#include "version/version.h"
#include "util/status_macros.h"

#include <algorithm>
#include <utility>

#include "format/internal_key.h"
#include "version/level_iterator.h"

namespace skv {

bool file_overlaps_range(const FileMetaData& f, std::optional<std::string_view> begin,
                         std::optional<std::string_view> end) {
  if (begin && compare_user_keys(extract_user_key(f.largest), *begin) < 0) return false;
  if (end && compare_user_keys(extract_user_key(f.smallest), *end) > 0) return false;
  return true;
}

Version::Version(std::shared_ptr<TableCache> table_cache,
                 std::vector<std::vector<FileMetaPtr>> files, std::vector<VlogFileMeta> vlog_files)
    : table_cache_(std::move(table_cache)), files_(std::move(files)) {
  level_bytes_.reserve(files_.size());
  uint64_t total_bytes = 0, total_entries = 0;
  for (const auto& level : files_) {
    uint64_t bytes = 0;
    for (const auto& f : level) {
      bytes += f->file_size;
      total_entries += f->num_entries;
    }
    level_bytes_.push_back(bytes);
    total_bytes += bytes;
  }
  // A table counts at least its entries times the average entry of the whole tree, so a level of
  // tombstones weighs what the data they hide weighs (compaction_picker.h).
  const double average =
      total_entries == 0 ? 0.0
                         : static_cast<double>(total_bytes) / static_cast<double>(total_entries);
  compensated_bytes_.reserve(files_.size());
  for (const auto& level : files_) {
    double bytes = 0;
    for (const auto& f : level) {
      bytes += std::max(static_cast<double>(f->file_size),
                        static_cast<double>(f->num_entries) * average);
    }
    compensated_bytes_.push_back(static_cast<uint64_t>(bytes));
  }
  std::sort(vlog_files.begin(), vlog_files.end(),
            [](const VlogFileMeta& a, const VlogFileMeta& b) { return a.number < b.number; });
  vlogs_.reserve(vlog_files.size());
  for (const auto& m : vlog_files) vlogs_.push_back(VlogUsage{m, 0});
  count_vlog_references();
}

void Version::count_vlog_references() {
  auto fail = [this](std::string what) {
    if (vlog_inconsistency_.empty()) vlog_inconsistency_ = std::move(what);
  };
  for (const auto& level : files_) {
    for (const auto& f : level) {
      for (const auto& ref : f->vlog_refs) {
        auto it =
            std::lower_bound(vlogs_.begin(), vlogs_.end(), ref.vlog_number,
                             [](const VlogUsage& u, uint64_t n) { return u.meta.number < n; });
        if (it == vlogs_.end() || it->meta.number != ref.vlog_number) {
          fail("table #" + std::to_string(f->number) + " points into value log #" +
               std::to_string(ref.vlog_number) + ", which is not live");
          continue;
        }
        // Saturating: a damaged manifest must not wrap the sum around.
        it->live_bytes =
            ref.bytes > UINT64_MAX - it->live_bytes ? UINT64_MAX : it->live_bytes + ref.bytes;
      }
    }
  }
  for (const auto& u : vlogs_) {
    if (u.live_bytes > u.meta.entry_bytes()) {
      fail("tables point at " + std::to_string(u.live_bytes) + " bytes of value log #" +
           std::to_string(u.meta.number) + ", which holds " + std::to_string(u.meta.entry_bytes()));
    } else if (u.live_bytes == 0) {
      fail("value log #" + std::to_string(u.meta.number) + " is live but no table points into it");
    }
  }
}

const VlogUsage* Version::find_vlog(uint64_t number) const {
  auto it = std::lower_bound(vlogs_.begin(), vlogs_.end(), number,
                             [](const VlogUsage& u, uint64_t n) { return u.meta.number < n; });
  return it == vlogs_.end() || it->meta.number != number ? nullptr : &*it;
}

int Version::total_files() const {
  size_t n = 0;
  for (const auto& level : files_) n += level.size();
  return static_cast<int>(n);
}

Status Version::get(std::string_view user_key, SequenceNumber snapshot, Table::GetResult* out,
                    bool* found) const {
  *found = false;
  *out = Table::GetResult();

  auto probe = [&](const FileMetaData& f, Table::GetResult* r) -> Status {
    SKV_ASSIGN_OR_RETURN(TableCache::Ref table, table_cache_->get(f));
    return table->get(user_key, snapshot, r);
  };

  // L0: files may overlap. They are ordered by largest_seq, newest first, so once a version is
  // found no file whose largest_seq is not above it can hold a newer one.
  Table::GetResult best;
  static const std::vector<FileMetaPtr> kNoFiles;
  for (const auto& f : files_.empty() ? kNoFiles : files_[0]) {
    if (best.found && f->largest_seq <= best.sequence) break;
    if (f->smallest_seq > snapshot) continue;
    if (!file_overlaps_range(*f, user_key, user_key)) continue;
    Table::GetResult r;
    SKV_RETURN_IF_ERROR(probe(*f, &r));
    if (r.found && (!best.found || r.sequence > best.sequence)) best = std::move(r);
  }
  if (best.found) {
    *out = std::move(best);
    *found = true;
    return Status::OK();
  }

  for (size_t level = 1; level < files_.size(); ++level) {
    const auto& files = files_[level];
    auto it = std::partition_point(files.begin(), files.end(), [&](const FileMetaPtr& f) {
      return compare_user_keys(extract_user_key(f->largest), user_key) < 0;
    });
    if (it == files.end()) continue;
    const FileMetaData& f = **it;
    if (compare_user_keys(extract_user_key(f.smallest), user_key) > 0) continue;
    if (f.smallest_seq > snapshot) continue;
    Table::GetResult r;
    SKV_RETURN_IF_ERROR(probe(f, &r));
    if (r.found) {
      *out = std::move(r);
      *found = true;
      return Status::OK();
    }
  }
  return Status::OK();
}

void Version::add_iterators(const TableReadOptions& options,
                            std::vector<std::unique_ptr<InternalIterator>>* out) const {
  std::shared_ptr<const void> pin = weak_from_this().lock();
  for (size_t level = 0; level < files_.size(); ++level) {
    if (files_[level].empty()) continue;
    if (level == 0) {
      for (const auto& f : files_[0]) {
        out->push_back(new_level_iterator(pin, table_cache_.get(), {f}, options));
      }
    } else {
      out->push_back(new_level_iterator(pin, table_cache_.get(), files_[level], options));
    }
  }
}

Status Version::add_point_iterators(std::string_view user_key, const TableReadOptions& options,
                                    std::vector<std::unique_ptr<InternalIterator>>* out) const {
  std::shared_ptr<const void> pin = weak_from_this().lock();
  auto add = [&](const FileMetaPtr& f) -> Status {
    SKV_ASSIGN_OR_RETURN(TableCache::Ref table, table_cache_->get(*f));
    if (table->may_contain(user_key)) {
      out->push_back(new_level_iterator(pin, table_cache_.get(), {f}, options));
    }
    return Status::OK();
  };
  for (size_t level = 0; level < files_.size(); ++level) {
    for (const FileMetaPtr& f : overlapping_files(static_cast<int>(level), user_key, user_key)) {
      SKV_RETURN_IF_ERROR(add(f));
    }
  }
  return Status::OK();
}

std::vector<FileMetaPtr> Version::overlapping_files(int level,
                                                    std::optional<std::string_view> begin,
                                                    std::optional<std::string_view> end) const {
  std::vector<FileMetaPtr> result;
  const auto& files = files_[level];
  if (level == 0) {
    for (const auto& f : files) {
      if (file_overlaps_range(*f, begin, end)) result.push_back(f);
    }
    return result;
  }
  auto it = files.begin();
  if (begin) {
    it = std::partition_point(files.begin(), files.end(), [&](const FileMetaPtr& f) {
      return compare_user_keys(extract_user_key(f->largest), *begin) < 0;
    });
  }
  for (; it != files.end(); ++it) {
    if (end && compare_user_keys(extract_user_key((*it)->smallest), *end) > 0) break;
    result.push_back(*it);
  }
  return result;
}

bool Version::overlaps(int level, std::optional<std::string_view> begin,
                       std::optional<std::string_view> end) const {
  const auto& files = files_[level];
  if (level == 0) {
    return std::any_of(files.begin(), files.end(),
                       [&](const FileMetaPtr& f) { return file_overlaps_range(*f, begin, end); });
  }
  auto it = files.begin();
  if (begin) {
    it = std::partition_point(files.begin(), files.end(), [&](const FileMetaPtr& f) {
      return compare_user_keys(extract_user_key(f->largest), *begin) < 0;
    });
  }
  return it != files.end() && file_overlaps_range(**it, begin, end);
}

std::string Version::debug_string() const {
  std::string r;
  for (size_t level = 0; level < files_.size(); ++level) {
    r += "L" + std::to_string(level) + ":";
    for (const auto& f : files_[level]) {
      r += " #" + std::to_string(f->number) + "[" + std::string(extract_user_key(f->smallest)) +
           ".." + std::string(extract_user_key(f->largest)) + "]";
    }
    r += "\n";
  }
  return r;
}

}  // namespace skv
