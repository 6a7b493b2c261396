// TreeImpl::checkpoint: a consistent copy of the database that opens as a database of its own
// (tree.h; docs/cli.md, "Checkpoints").
//
// A writable tree first flushes its memtable, through the commit pipeline's barrier, so every
// commit acknowledged before the call is in a table. It then captures, under mu_, the current
// Version and a snapshot edit of the version set (every counter and live file). Holding that
// Version keeps its tables and value log files from being deleted while they are copied; flushes,
// compactions and commits go on meanwhile. Memtables are flushed in order, so the tables of any
// Version hold exactly the commits up to some sequence number: the copy is a prefix.
//
// The checkpoint's files: every table and value log of the Version (linked or copied; both kinds
// are immutable once recorded), a new manifest holding the snapshot edit, sealed under the
// database's keys when it is encrypted, and last CURRENT. Until CURRENT is written the target is
// no database, so a crash or failure part-way leaves nothing that opens as one. A read-only tree
// cannot flush: it copies (never links) the WAL segments the snapshot still needs, which the
// checkpoint replays when it is opened.

#include <optional>
#include <vector>

#include "format/file_names.h"
#include "tree/tree_impl.h"
#include "util/file_copy.h"
#include "util/status_macros.h"
#include "wal/log_writer.h"

namespace skv {

Status TreeImpl::checkpoint(const std::string& path) {
  SKV_RETURN_IF_ERROR(check_open());
  if (path.empty()) return Status::invalid_argument("checkpoint: the path is empty");
  if (!options_.read_only) SKV_RETURN_IF_ERROR(await(flush()));

  // The files to copy, captured at one instant.
  std::shared_ptr<const Version> version;
  VersionEdit snapshot;
  std::vector<uint64_t> wals;
  uint64_t manifest_number = 0;
  std::optional<FileReaderScope> reading;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (closing_) return Status::closed("tree closed before the checkpoint");
    SKV_RETURN_IF_ERROR(bg_error_);
    SKV_ASSIGN_OR_RETURN(manifest_number, versions_->new_file_number());
    version = versions_->current();
    snapshot = versions_->snapshot_edit();  // after the allocation: its next number is above
    if (options_.read_only) {
      for (const auto& imm : imms_) wals.push_back(imm.wal_number);
    }
    reading.emplace(this);
  }

  StorageOptions target_options;
  target_options.create_new = true;
  target_options.marker = current_file_name();
  target_options.file_mode = options_.file_mode;
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<Storage> target,
                       platform_->open_storage(path, target_options));

  struct Item {
    std::string name;
    bool object;
    FileCopy how;
  };
  std::vector<Item> items;
  for (int level = 0; level < version->level_count(); ++level) {
    for (const auto& f : version->files(level)) {
      items.push_back({table_file_name(f->number), true, FileCopy::LinkOrCopy});
    }
  }
  for (const auto& u : version->vlog_files()) {
    items.push_back({vlog_file_name(u.meta.number), false, FileCopy::LinkOrCopy});
  }
  for (uint64_t n : wals) items.push_back({wal_file_name(n), false, FileCopy::Copy});

  std::vector<const Item*> written;
  auto undo = [&](Status s) {
    for (const Item* item : written) {
      if (item->object) {
        (void)target->objects().remove(item->name);
      } else {
        (void)target->logs().remove(item->name);
      }
    }
    (void)target->sync_dir();
    return s;
  };
  for (const Item& item : items) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_) return undo(Status::closed("tree closed during the checkpoint"));
    }
    Status s = copy_file(*storage_, *target, item.name, item.object, item.how);
    if (!s.ok()) return undo(s.with_context("checkpoint"));
    written.push_back(&item);
  }
  // Durable names of the copies before CURRENT can name a manifest that points at them.
  if (Status s = target->sync_dir(); !s.ok()) return undo(s.with_context("checkpoint"));
  Result<std::unique_ptr<log::Writer>> manifest =
      write_manifest(target.get(), keyring_.get(), manifest_number, snapshot);
  if (!manifest.ok()) return undo(manifest.status().with_context("checkpoint"));
  return (*manifest)->close();
}

}  // namespace skv
