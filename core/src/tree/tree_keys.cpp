// TreeImpl::rewrite_with_active_key (Tree::rewrite_with_active_key; docs/encryption.md,
// "Rotation"): moves every file of an encrypted database to the key manager's active key.
//
// The memtable is flushed (its table, and the new WAL segment, are sealed under the active key;
// older segments then go). Each table sealed under another key, or pointing into a value log
// sealed under another key, is compacted in place, one at a time, with those value logs'
// entries copied to a new value log (the machinery of value log garbage collection), until none
// is left. Then a new manifest is written and CURRENT resealed under the active key.

#include <algorithm>
#include <map>

#include "format/file_names.h"
#include "tree/tree_impl.h"
#include "util/status_macros.h"

namespace skv {

Status TreeImpl::rewrite_with_active_key() {
  SKV_RETURN_IF_ERROR(check_open());
  SKV_RETURN_IF_ERROR(check_writable("rewrite_with_active_key"));
  if (keyring_ == nullptr) {
    return Status::encryption(EncryptionError::NotEncrypted,
                              storage_->location() + ": the database is not encrypted");
  }
  SKV_RETURN_IF_ERROR(flush().wait());
  const uint32_t active = keyring_->active_key_id();
  const Status closing = Status::closed("tree closed during rewrite_with_active_key");
  std::unique_lock<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(begin_manual_compaction(lock, closing));
  Status s = run_manual_job(bg_job_, lock, closing);
  // Key ids by file number, read from the headers once; files written meanwhile use `active`.
  std::map<uint64_t, uint32_t> table_keys, vlog_keys;
  auto key_of = [&](std::map<uint64_t, uint32_t>& known, uint64_t number, const std::string& name,
                    FileKind kind) -> Result<uint32_t> {
    auto it = known.find(number);
    if (it != known.end()) return it->second;
    SKV_ASSIGN_OR_RETURN(FileHeader h, read_file_header(name, kind));
    known.emplace(number, h.key_id);
    return h.key_id;
  };
  while (s.ok()) {
    if (closing_) {
      s = closing;
      break;
    }
    std::shared_ptr<const Version> v = versions_->current();
    std::vector<uint64_t> old_vlogs;
    for (const auto& u : v->vlog_files()) {
      Result<uint32_t> k =
          key_of(vlog_keys, u.meta.number, vlog_file_name(u.meta.number), FileKind::ValueLog);
      if (!k.ok()) {
        s = k.status();
        break;
      }
      if (*k != active) old_vlogs.push_back(u.meta.number);
    }
    if (!s.ok()) break;
    std::sort(old_vlogs.begin(), old_vlogs.end());
    std::unique_ptr<Compaction> c;
    for (int level = 0; level < v->level_count() && c == nullptr && s.ok(); ++level) {
      for (const auto& f : v->files(level)) {
        Result<uint32_t> k =
            key_of(table_keys, f->number, table_file_name(f->number), FileKind::Table);
        if (!k.ok()) {
          s = k.status();
          break;
        }
        const bool points_old =
            std::any_of(f->vlog_refs.begin(), f->vlog_refs.end(), [&](const VlogRef& r) {
              return std::binary_search(old_vlogs.begin(), old_vlogs.end(), r.vlog_number);
            });
        if (*k == active && !points_old) continue;
        c = std::make_unique<Compaction>();
        c->level = level;
        c->output_level = level;
        c->version = v;
        c->manual = true;
        c->inputs.push_back(f);
        c->relocate_vlogs = old_vlogs;
        break;
      }
    }
    if (!s.ok() || c == nullptr) break;
    auto job = std::make_unique<CompactionJob>(std::move(c), job_context());
    s = run_manual_job(job, lock, closing);
  }
  if (s.ok()) {
    // A new manifest, sealed under the active key, and CURRENT resealed with it.
    versions_->roll_manifest();
    VersionEdit edit;
    s = versions_->log_and_apply(&edit);
    if (s.ok()) install_view();
  }
  if (s.ok()) delete_obsolete_files();
  end_manual_compaction();
  return s;
}

}  // namespace skv
