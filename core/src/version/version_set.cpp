#include "version/version_set.h"

#include "util/status_macros.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "crypto/sealed_pointer.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace skv {

// Accumulates edits on top of a base Version and produces the resulting Version, checking that
// every edit is consistent with the state it applies to.
class VersionSet::Builder {
 public:
  // `code` is the error code for an inconsistent edit: Corruption while recovering (the manifest
  // is damaged), InvalidArgument for a new edit (the caller's bug).
  Builder(int level_count, const Version* base, Code code)
      : level_count_(level_count), code_(code), levels_(static_cast<size_t>(level_count)) {
    if (base == nullptr) return;
    for (int level = 0; level < base->level_count(); ++level) {
      for (const auto& f : base->files(level)) {
        levels_[static_cast<size_t>(level)].emplace(f->number, f);
        level_of_[f->number] = level;
      }
    }
    for (const auto& u : base->vlog_files()) vlogs_.emplace(u.meta.number, u.meta);
  }

  // `where` names the edit in messages ("MANIFEST-000004 at offset 120").
  Status apply(const VersionEdit& edit, const std::string& where) {
    for (const auto& d : edit.deleted_files()) {
      SKV_RETURN_IF_ERROR(check_level(d.level, where));
      auto it = level_of_.find(d.number);
      if (it == level_of_.end() || it->second != d.level) {
        return fail(where, "deletes table #" + std::to_string(d.number) + " which is not in L" +
                               std::to_string(d.level));
      }
      levels_[static_cast<size_t>(d.level)].erase(d.number);
      level_of_.erase(it);
    }
    for (const auto& nf : edit.new_files()) {
      SKV_RETURN_IF_ERROR(check_level(nf.level, where));
      if (level_of_.count(nf.meta.number) != 0) {
        return fail(where, "adds table #" + std::to_string(nf.meta.number) + " which is live");
      }
      levels_[static_cast<size_t>(nf.level)].emplace(nf.meta.number,
                                                     std::make_shared<const FileMetaData>(nf.meta));
      level_of_[nf.meta.number] = nf.level;
    }
    for (const auto& cp : edit.compact_pointers()) {
      SKV_RETURN_IF_ERROR(check_level(cp.first, where));
    }
    for (uint64_t number : edit.deleted_vlog_files()) {
      if (vlogs_.erase(number) == 0) {
        return fail(where, "deletes value log #" + std::to_string(number) + " which is not live");
      }
    }
    for (const auto& v : edit.new_vlog_files()) {
      if (!vlogs_.emplace(v.number, v).second) {
        return fail(where, "adds value log #" + std::to_string(v.number) + " which is live");
      }
    }
    return Status::OK();
  }

  // The live value logs that no table points into any more.
  std::vector<uint64_t> unreferenced_vlogs() const {
    std::set<uint64_t> referenced;
    for (const auto& level : levels_) {
      for (const auto& [number, f] : level) {
        for (const auto& ref : f->vlog_refs) referenced.insert(ref.vlog_number);
      }
    }
    std::vector<uint64_t> out;
    for (const auto& [number, meta] : vlogs_) {
      if (referenced.count(number) == 0) out.push_back(number);
    }
    return out;
  }

  // Orders each level and checks that L1+ do not overlap.
  Status finish(const std::shared_ptr<TableCache>& cache, const std::string& where,
                std::shared_ptr<const Version>* out) {
    std::vector<std::vector<FileMetaPtr>> files(levels_.size());
    for (size_t level = 0; level < levels_.size(); ++level) {
      auto& v = files[level];
      for (const auto& [number, f] : levels_[level]) v.push_back(f);
      if (level == 0) {
        std::sort(v.begin(), v.end(), [](const FileMetaPtr& a, const FileMetaPtr& b) {
          if (a->largest_seq != b->largest_seq) return a->largest_seq > b->largest_seq;
          return a->number > b->number;
        });
        continue;
      }
      std::sort(v.begin(), v.end(), [](const FileMetaPtr& a, const FileMetaPtr& b) {
        return compare_internal_keys(a->smallest, b->smallest) < 0;
      });
      for (size_t i = 1; i < v.size(); ++i) {
        if (compare_user_keys(extract_user_key(v[i - 1]->largest),
                              extract_user_key(v[i]->smallest)) >= 0) {
          return fail(where, "tables #" + std::to_string(v[i - 1]->number) + " and #" +
                                 std::to_string(v[i]->number) + " overlap in L" +
                                 std::to_string(level));
        }
      }
    }
    std::vector<VlogFileMeta> vlogs;
    vlogs.reserve(vlogs_.size());
    for (const auto& [number, meta] : vlogs_) vlogs.push_back(meta);
    auto v = std::make_shared<const Version>(cache, std::move(files), std::move(vlogs));
    if (!v->vlog_inconsistency().empty()) return fail(where, v->vlog_inconsistency());
    *out = std::move(v);
    return Status::OK();
  }

  uint64_t max_number() const {
    uint64_t n = level_of_.empty() ? 0 : level_of_.rbegin()->first;
    return vlogs_.empty() ? n : std::max(n, vlogs_.rbegin()->first);
  }

 private:
  Status check_level(int level, const std::string& where) const {
    if (level >= 0 && level < level_count_) return Status::OK();
    return Status(code_ == Code::Corruption ? Code::InvalidArgument : code_,
                  where + ": names level " + std::to_string(level) + " but level_count is " +
                      std::to_string(level_count_));
  }
  Status fail(const std::string& where, const std::string& what) const {
    return Status(code_, where + ": " + what);
  }

  const int level_count_;
  const Code code_;
  std::vector<std::map<uint64_t, FileMetaPtr>> levels_;
  std::map<uint64_t, int> level_of_;
  std::map<uint64_t, VlogFileMeta> vlogs_;
};

VersionSet::VersionSet(Storage* storage, const Options& options,
                       std::shared_ptr<TableCache> table_cache)
    : storage_(storage),
      options_(options),
      table_cache_(std::move(table_cache)),
      level_count_(std::clamp(options.level_count, 2, kMaxLevelCount)),
      compact_pointers_(static_cast<size_t>(level_count_)) {
  install(std::make_shared<const Version>(
      table_cache_, std::vector<std::vector<FileMetaPtr>>(static_cast<size_t>(level_count_))));
}

VersionSet::~VersionSet() {
  if (manifest_ != nullptr) (void)manifest_->close();
}

void VersionSet::install(std::shared_ptr<const Version> v) {
  current_ = std::move(v);
  std::erase_if(handed_out_, [](const std::weak_ptr<const Version>& w) { return w.expired(); });
  handed_out_.push_back(current_);
}

Result<uint64_t> VersionSet::new_file_number() {
  uint64_t n = next_file_number_.load();
  do {
    if (n >= kMaxFileNumber) {
      return Status::corruption(
          storage_->location() + ": file numbers are exhausted (the next would be " +
          std::to_string(n) + ", the limit is " + std::to_string(kMaxFileNumber) +
          "): a file in the database's directory, or its manifest, carries a number near the " +
          "limit; nothing new is written");
    }
  } while (!next_file_number_.compare_exchange_weak(n, n + 1));
  return n;
}

void VersionSet::mark_file_number_used(uint64_t number) {
  uint64_t cur = next_file_number_.load();
  while (cur <= number && !next_file_number_.compare_exchange_weak(cur, number + 1)) {
  }
}

void VersionSet::set_last_sequence(SequenceNumber s) {
  assert(s >= last_sequence_);
  last_sequence_ = s;
}

std::set<uint64_t> VersionSet::live_files() {
  std::set<uint64_t> live;
  std::erase_if(handed_out_, [](const std::weak_ptr<const Version>& w) { return w.expired(); });
  for (const auto& w : handed_out_) {
    std::shared_ptr<const Version> v = w.lock();
    if (v == nullptr) continue;
    for (int level = 0; level < v->level_count(); ++level) {
      for (const auto& f : v->files(level)) live.insert(f->number);
    }
  }
  return live;
}

std::set<uint64_t> VersionSet::live_vlog_files() {
  std::set<uint64_t> live;
  std::erase_if(handed_out_, [](const std::weak_ptr<const Version>& w) { return w.expired(); });
  for (const auto& w : handed_out_) {
    std::shared_ptr<const Version> v = w.lock();
    if (v == nullptr) continue;
    for (const auto& u : v->vlog_files()) live.insert(u.meta.number);
  }
  return live;
}

VersionEdit VersionSet::snapshot_edit() const {
  VersionEdit edit;
  append_snapshot(&edit);
  return edit;
}

void VersionSet::append_snapshot(VersionEdit* edit) const {
  edit->set_log_number(log_number_);
  edit->set_next_file_number(next_file_number_.load());
  edit->set_last_sequence(last_sequence_);
  edit->set_last_timestamp(last_timestamp_);
  edit->set_versioning(versioning_);
  for (int level = 0; level < level_count_; ++level) {
    if (!compact_pointers_[static_cast<size_t>(level)].empty()) {
      edit->set_compact_pointer(level, compact_pointers_[static_cast<size_t>(level)]);
    }
    for (const auto& f : current_->files(level)) edit->add_file(level, *f);
  }
  for (const auto& u : current_->vlog_files()) edit->add_vlog_file(u.meta);
}

Result<std::unique_ptr<log::Writer>> write_manifest(Storage* storage, crypto::Keyring* keyring,
                                                    uint64_t number, const VersionEdit& snapshot) {
  const std::string name = manifest_file_name(number);
  std::string record;
  snapshot.encode_to(&record);

  const std::string label = storage->location() + "/" + name;
  std::shared_ptr<const crypto::FileCipher> cipher;
  std::string pointer = name + "\n";
  if (keyring != nullptr) {
    SKV_ASSIGN_OR_RETURN(cipher, keyring->for_new_file(FileKind::Manifest, number, label));
    SKV_ASSIGN_OR_RETURN(pointer, crypto::seal_pointer(*keyring, pointer));
  }
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, storage->logs().create(name));
  FileHeader header;
  header.kind = FileKind::Manifest;
  header.file_number = number;
  auto writer = std::make_unique<log::Writer>(std::move(file), header, std::move(cipher));
  Status s = writer->add_record(record);
  if (s.ok()) s = writer->sync();
  if (s.ok()) s = storage->sync_dir();
  if (!s.ok()) {
    // CURRENT still names the old manifest (or none), so the new file is garbage: drop it.
    (void)writer->close();
    (void)storage->logs().remove(name);
    return s;
  }
  s = storage->write_pointer(current_file_name(), pointer);
  if (!s.ok()) {
    // CURRENT may name either manifest now; both stay.
    (void)writer->close();
    return s;
  }
  return writer;
}

Status VersionSet::write_new_manifest(uint64_t number) {
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<log::Writer> writer,
                       write_manifest(storage_, keyring_, number, snapshot_edit()));
  const uint64_t old = manifest_number_;
  if (manifest_ != nullptr) (void)manifest_->close();
  manifest_ = std::move(writer);
  manifest_number_ = number;
  if (old != 0 && old != number) {
    // Obsolete once CURRENT moved on; a failed removal only leaves a stray file behind.
    (void)storage_->logs().remove(manifest_file_name(old));
  }
  return Status::OK();
}

Status VersionSet::create_new() {
  next_file_number_.store(2);
  last_sequence_ = 0;
  last_timestamp_ = 0;
  versioning_ = options_.versioning.value_or(Versioning{});
  log_number_ = 0;
  return write_new_manifest(1);
}

Status VersionSet::check_tables_exist(const Version& v, const std::string& manifest) {
  SKV_ASSIGN_OR_RETURN(std::vector<std::string> objects, storage_->objects().list());
  std::set<std::string> present(objects.begin(), objects.end());
  for (int level = 0; level < v.level_count(); ++level) {
    for (const auto& f : v.files(level)) {
      const std::string name = table_file_name(f->number);
      if (present.count(name) == 0) {
        return Status::corruption(storage_->location() + ": table " + name + " (L" +
                                  std::to_string(level) + ") named by " + manifest + " is missing");
      }
    }
  }
  SKV_ASSIGN_OR_RETURN(std::vector<std::string> logs, storage_->logs().list());
  std::set<std::string> present_logs(logs.begin(), logs.end());
  for (const auto& u : v.vlog_files()) {
    const std::string name = vlog_file_name(u.meta.number);
    if (present_logs.count(name) == 0) {
      return Status::corruption(storage_->location() + ": value log " + name + " named by " +
                                manifest + " is missing");
    }
  }
  // Never hand out a number that some file already has, even an orphan of a crashed job.
  for (const auto& name : objects) {
    FileType type;
    uint64_t number = 0;
    if (parse_file_name(name, &type, &number)) mark_file_number_used(number);
  }
  for (const auto& name : logs) {
    FileType type;
    uint64_t number = 0;
    if (parse_file_name(name, &type, &number)) mark_file_number_used(number);
  }
  return Status::OK();
}

Status VersionSet::recover() {
  SKV_ASSIGN_OR_RETURN(std::string contents, storage_->read_pointer(current_file_name()));
  const std::string current_label = storage_->location() + "/" + current_file_name();
  std::string_view pointer;
  std::optional<crypto::PointerSeal> seal;
  SKV_RETURN_IF_ERROR(crypto::split_pointer(contents, current_label, &pointer, &seal));
  if (seal.has_value() != (keyring_ != nullptr)) {
    return seal ? Status::encryption(EncryptionError::NotConfigured,
                                     current_label + ": the database is encrypted")
                : Status::corruption(current_label + ": not sealed in an encrypted database");
  }
  FileType type = FileType::Unknown;
  uint64_t number = 0;
  if (pointer.empty() || pointer.back() != '\n' ||
      !parse_file_name(std::string_view(pointer).substr(0, pointer.size() - 1), &type, &number) ||
      type != FileType::Manifest) {
    return Status::corruption(storage_->location() + ": " + current_file_name() +
                              " does not name a manifest");
  }
  const std::string name = manifest_file_name(number);
  auto opened = storage_->logs().open(name);
  if (!opened.ok()) {
    if (!opened.status().is_not_found()) return opened.status();
    return Status::corruption(storage_->location() + ": " + current_file_name() + " names " + name +
                              ", which is missing");
  }
  std::unique_ptr<LogFile> file = std::move(*opened);

  log::Reader reader(file.get(), FileKind::Manifest, keyring_);
  FileHeader header;
  SKV_RETURN_IF_ERROR(reader.read_header(&header));
  // The manifest's header checked the key (WrongKey, UnknownKeyId, ... by name); now CURRENT's
  // MAC, before any record is trusted.
  if (seal) SKV_RETURN_IF_ERROR(crypto::verify_pointer(*keyring_, pointer, *seal, current_label));

  Builder builder(level_count_, nullptr, Code::Corruption);
  std::optional<uint64_t> log_number, next_file;
  std::optional<SequenceNumber> last_seq;
  std::optional<uint64_t> last_ts;
  Versioning versioning;
  std::vector<std::string> pointers(static_cast<size_t>(level_count_));
  std::string record;
  uint64_t offset = 0;
  bool any = false;
  while (true) {
    SKV_ASSIGN_OR_RETURN(bool got, reader.read_record(&record, &offset));
    if (!got) break;
    any = true;
    VersionEdit edit;
    SKV_RETURN_IF_ERROR(edit.decode_from(record, name, offset));
    const std::string where = name + " at offset " + std::to_string(offset);
    SKV_RETURN_IF_ERROR(builder.apply(edit, where));
    if (edit.log_number()) {
      if (log_number && *edit.log_number() < *log_number) {
        return Status::corruption(where + ": log number goes backwards");
      }
      log_number = edit.log_number();
    }
    if (edit.next_file_number()) next_file = edit.next_file_number();
    if (edit.last_sequence()) {
      if (last_seq && *edit.last_sequence() < *last_seq) {
        return Status::corruption(where + ": last sequence goes backwards");
      }
      last_seq = edit.last_sequence();
    }
    if (edit.last_timestamp()) {
      if (last_ts && *edit.last_timestamp() < *last_ts) {
        return Status::corruption(where + ": last timestamp goes backwards");
      }
      last_ts = edit.last_timestamp();
    }
    if (edit.versioning()) versioning = *edit.versioning();
    for (const auto& [level, key] : edit.compact_pointers()) {
      pointers[static_cast<size_t>(level)] = key;
    }
  }
  (void)file->close();
  // A torn tail (reader.torn_tail()) is what an interrupted final append leaves: the edit never
  // took effect, so it is dropped. The next log_and_apply writes a new manifest.
  if (!any || !log_number || !next_file || !last_seq) {
    return Status::corruption(name +
                              ": no snapshot record (log number, next file number and "
                              "last sequence are required)");
  }
  if (header.file_number != number) {
    return Status::corruption(name + ": header names file number " +
                              std::to_string(header.file_number));
  }

  std::shared_ptr<const Version> v;
  SKV_RETURN_IF_ERROR(builder.finish(table_cache_, name, &v));
  next_file_number_.store(*next_file);
  mark_file_number_used(number);
  mark_file_number_used(builder.max_number());
  mark_file_number_used(*log_number);
  last_sequence_ = *last_seq;
  last_timestamp_ = last_ts.value_or(0);
  versioning_ = versioning;
  log_number_ = *log_number;
  compact_pointers_ = std::move(pointers);
  SKV_RETURN_IF_ERROR(check_tables_exist(*v, name));

  install(std::move(v));
  manifest_number_ = number;
  manifest_.reset();  // the next log_and_apply starts a new manifest
  return Status::OK();
}

Status VersionSet::log_and_apply(VersionEdit* edit) {
  if (edit->log_number()) {
    if (*edit->log_number() < log_number_) {
      return Status::invalid_argument("log number " + std::to_string(*edit->log_number()) +
                                      " is below the recorded " + std::to_string(log_number_));
    }
    if (*edit->log_number() >= next_file_number_.load()) {
      return Status::invalid_argument("log number " + std::to_string(*edit->log_number()) +
                                      " was never allocated");
    }
  }
  Builder builder(level_count_, current_.get(), Code::InvalidArgument);
  SKV_RETURN_IF_ERROR(builder.apply(*edit, "version edit"));
  // A value log no table points into any more leaves the version with this edit.
  if (std::vector<uint64_t> dead = builder.unreferenced_vlogs(); !dead.empty()) {
    VersionEdit drop;
    for (uint64_t n : dead) {
      drop.delete_vlog_file(n);
      edit->delete_vlog_file(n);
    }
    SKV_RETURN_IF_ERROR(builder.apply(drop, "version edit"));
  }
  std::shared_ptr<const Version> v;
  SKV_RETURN_IF_ERROR(builder.finish(table_cache_, "version edit", &v));

  if (!edit->log_number()) edit->set_log_number(log_number_);
  const bool roll = manifest_ == nullptr || force_roll_ || manifest_->size() >= max_manifest_size_;
  uint64_t new_manifest = 0;
  if (roll) {
    SKV_ASSIGN_OR_RETURN(new_manifest, new_file_number());
  }
  edit->set_next_file_number(next_file_number_.load());
  edit->set_last_sequence(last_sequence_);
  edit->set_last_timestamp(last_timestamp_);

  // The state after the edit, installed only once it is durable.
  std::shared_ptr<const Version> previous = current_;
  const uint64_t previous_log = log_number_;
  std::vector<std::string> previous_pointers = compact_pointers_;
  const Versioning previous_versioning = versioning_;
  if (edit->versioning()) versioning_ = *edit->versioning();
  log_number_ = *edit->log_number();
  for (const auto& [level, key] : edit->compact_pointers()) {
    compact_pointers_[static_cast<size_t>(level)] = key;
  }
  current_ = v;

  Status s;
  if (roll) {
    s = write_new_manifest(new_manifest);
    if (s.ok()) force_roll_ = false;
  } else {
    std::string record;
    edit->encode_to(&record);
    s = manifest_->add_record(record);
    if (s.ok()) s = manifest_->sync();
  }
  if (!s.ok()) {
    current_ = std::move(previous);
    log_number_ = previous_log;
    compact_pointers_ = std::move(previous_pointers);
    versioning_ = previous_versioning;
    if (manifest_ != nullptr) (void)manifest_->close();
    manifest_.reset();
    return s.with_context("manifest write failed");
  }
  install(std::move(v));
  return Status::OK();
}

}  // namespace skv
