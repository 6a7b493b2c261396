#include "native/migrate/surrealkv/version_merge.h"

#include <algorithm>

#include "util/status_macros.h"

namespace skv::migration::surrealkv {

VersionMerge::VersionMerge(std::vector<std::unique_ptr<TableReader>> tables, std::vector<Entry> wal)
    : tables_(std::move(tables)), wal_(std::move(wal)) {
  std::stable_sort(wal_.begin(), wal_.end(), [](const Entry& a, const Entry& b) {
    if (a.user_key != b.user_key) return a.user_key < b.user_key;
    return a.seq > b.seq;
  });
  for (auto& t : tables_) sources_.push_back(Source{t.get(), false, {}});
  sources_.push_back(Source{nullptr, false, {}});
}

Status VersionMerge::advance(Source* s) {
  if (s->table == nullptr) {
    s->has = wal_pos_ < wal_.size();
    if (s->has) s->cur = std::move(wal_[wal_pos_++]);
    return Status::OK();
  }
  bool done = false;
  SKV_RETURN_IF_ERROR(s->table->next(&s->cur, &done));
  s->has = !done;
  return Status::OK();
}

Status VersionMerge::next_key(std::vector<Entry>* versions, bool* end) {
  versions->clear();
  if (!started_) {
    started_ = true;
    for (Source& s : sources_) SKV_RETURN_IF_ERROR(advance(&s));
  }
  const std::string* smallest = nullptr;
  for (const Source& s : sources_) {
    if (s.has && (smallest == nullptr || s.cur.user_key < *smallest)) smallest = &s.cur.user_key;
  }
  *end = smallest == nullptr;
  if (*end) return Status::OK();
  std::string key = *smallest;
  for (Source& s : sources_) {
    while (s.has && s.cur.user_key == key) {
      versions->push_back(std::move(s.cur));
      SKV_RETURN_IF_ERROR(advance(&s));
    }
  }
  std::stable_sort(versions->begin(), versions->end(),
                   [](const Entry& a, const Entry& b) { return a.seq > b.seq; });
  // One (key, seq) seen twice: keep one copy if both agree.
  size_t kept = 0;
  for (size_t i = 0; i < versions->size(); ++i) {
    Entry& e = (*versions)[i];
    if (kept > 0) {
      const Entry& prev = (*versions)[kept - 1];
      if (prev.seq == e.seq) {
        if (prev.kind != e.kind || prev.timestamp != e.timestamp || prev.value != e.value) {
          return Status::corruption(
              e.file->where(e.offset, "entry with sequence number " + std::to_string(e.seq) +
                                          " differs from the one at " + prev.file->path() +
                                          " offset " + std::to_string(prev.offset)));
        }
        continue;
      }
    }
    if (kept != i) (*versions)[kept] = std::move(e);
    ++kept;
  }
  versions->resize(kept);
  return Status::OK();
}

}  // namespace skv::migration::surrealkv
