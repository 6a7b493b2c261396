// TreeImpl::verify: reads every live file and checks it (tree.h; docs/cli.md, "Verify").
//
// What is live is captured at one instant under mu_: the current Version (holding it keeps its
// tables and value logs from being deleted while they are read), the WAL segments from the
// manifest's log number on, and the manifest CURRENT names. Each file is then read from start to
// end through the platform, with no cache in between, by the same readers recovery and reads use
// (Table, VlogScanner, log::Reader), so every checksum and seal is checked as it would be on use;
// then the contents are checked against what the manifest says about the file.
//
// WAL segments and the manifest may be appended to while they are read: a torn record at the
// very end of the newest segment or of the manifest is noted, not damage. The segment being
// written is read only up to its size at the capture (LogPrefix). Either may also be
// retired meanwhile (a flush, a new manifest): a file that is gone by the time it is opened is
// noted as removed.

#include <algorithm>
#include <optional>
#include <set>

#include "crypto/sealed_pointer.h"
#include "format/file_names.h"
#include "format/internal_key.h"
#include "sstable/table.h"
#include "tree/tree_impl.h"
#include "util/status_macros.h"
#include "version/version_edit.h"
#include "vlog/vlog_scanner.h"
#include "wal/log_reader.h"
#include "wal/write_batch.h"

namespace skv {

namespace {

// Reports progress every this many bytes inside a file.
constexpr uint64_t kProgressStep = 4u << 20;

// Checks the entries of an open table against its properties and the manifest's record of it.
Status check_table_entries(const Table& table, const FileMetaData& meta, const std::string& label,
                           VerifiedFile* out, const std::function<void(uint64_t)>& advance) {
  TableReadOptions options;
  options.fill_cache = false;
  options.readahead = true;
  std::unique_ptr<InternalIterator> it = table.new_iterator(options);
  std::string previous, first;
  uint64_t entries = 0, reported = 0;
  for (it->seek_first(); it->valid(); it->next()) {
    const std::string_view key = it->key();
    if (entries > 0 && compare_internal_keys(previous, key) >= 0) {
      return Status::corruption(label + ": entry " + std::to_string(entries) +
                                " is not after the one before it");
    }
    if (entries == 0) first.assign(key);
    previous.assign(key);
    ++entries;
    out->units = entries;
    // Entries carry no offsets; advance by the table's average entry size.
    if (meta.num_entries > 0) {
      const uint64_t at = meta.file_size * entries / std::max<uint64_t>(meta.num_entries, entries);
      if (at - reported >= kProgressStep) {
        advance(at - reported);
        reported = at;
      }
    }
  }
  SKV_RETURN_IF_ERROR(it->status());
  advance(meta.file_size - std::min(reported, meta.file_size));
  const TableProperties& p = table.properties();
  if (entries != p.num_entries || entries != meta.num_entries) {
    return Status::corruption(label + ": holds " + std::to_string(entries) +
                              " entries; its properties say " + std::to_string(p.num_entries) +
                              " and the manifest " + std::to_string(meta.num_entries));
  }
  if (entries > 0 && (first != p.smallest_key || previous != p.largest_key ||
                      first != meta.smallest || previous != meta.largest)) {
    return Status::corruption(label +
                              ": its first or last key is not what its properties and the "
                              "manifest record");
  }
  return Status::OK();
}

// The first `end` bytes of a log file, read-only: the newest WAL segment as far as it was written
// when verify captured it. Past that the segment may hold zeros reserved ahead (docs/wal.md,
// "Room ahead") that the writer is overwriting while it is read, and a record header read as
// zeros an instant before the rest of the record lands would look like damage.
class LogPrefix final : public LogFile {
 public:
  LogPrefix(const LogFile& file, uint64_t end) : file_(file), end_(end) {}
  const std::string& name() const override { return file_.name(); }
  Status append(std::string_view) override { return read_only(); }
  Status sync() override { return read_only(); }
  uint64_t size() const override { return std::min(file_.size(), end_); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    const uint64_t end = size();
    const size_t want =
        offset >= end ? 0 : static_cast<size_t>(std::min<uint64_t>(n, end - offset));
    return file_.read_at(offset, want, scratch, result);
  }
  Status truncate(uint64_t) override { return read_only(); }
  Status close() override { return Status::OK(); }

 private:
  Status read_only() const { return Status::invalid_argument(name() + ": read-only view"); }

  const LogFile& file_;
  const uint64_t end_;
};

// Reads every record of a log file (WAL segment or manifest), checking each with `check`.
// `may_tear`: a torn record at the very end is noted rather than damage.
Status check_log_records(const LogFile& file, FileKind kind, uint64_t number,
                         crypto::CipherSource* ciphers, bool may_tear, const std::string& label,
                         VerifiedFile* out,
                         const std::function<Status(std::string_view, uint64_t)>& check) {
  log::Reader reader(&file, kind, ciphers);
  FileHeader header;
  header.file_number = number;
  SKV_RETURN_IF_ERROR(reader.read_header(&header));
  if (header.file_number != number && file.size() > 0) {
    return Status::corruption(label + ": header names file number " +
                              std::to_string(header.file_number));
  }
  std::string record;
  for (;;) {
    uint64_t offset = 0;
    SKV_ASSIGN_OR_RETURN(const bool more, reader.read_record(&record, &offset));
    if (!more) break;
    SKV_RETURN_IF_ERROR(check(record, offset));
    ++out->units;
  }
  if (reader.torn_tail() && file.size() > 0) {
    const std::string where =
        reader.hole() ? "ends at a hole (unwritten sectors of a write never synced) at offset " +
                            std::to_string(reader.valid_end())
                      : "ends in a torn record at offset " + std::to_string(reader.valid_end());
    if (!may_tear) return Status::corruption(label + ": " + where);
    out->note = where;
  }
  return Status::OK();
}

}  // namespace

Result<VerifyReport> TreeImpl::verify(const VerifyOptions& options) {
  SKV_RETURN_IF_ERROR(check_open());
  std::shared_ptr<const Version> version;
  std::vector<uint64_t> wals;
  uint64_t manifest_number = 0;
  // The segment being written (0: none), and the bytes written to it.
  uint64_t live_wal = 0, live_wal_end = 0;
  std::optional<FileReaderScope> reading;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return Status::closed("tree closed before verify");
    version = versions_->current();
    manifest_number = versions_->manifest_file_number();
    if (wal_ != nullptr) {
      live_wal = wal_number_;
      live_wal_end = wal_->size();
    }
    SKV_ASSIGN_OR_RETURN(std::vector<std::string> logs, storage_->logs().list());
    for (const auto& name : logs) {
      FileType type;
      uint64_t number = 0;
      if (parse_file_name(name, &type, &number) && type == FileType::Wal &&
          number >= versions_->log_number()) {
        wals.push_back(number);
      }
    }
    reading.emplace(this);
  }
  std::sort(wals.begin(), wals.end());

  // The files in the order they are read, with the bytes each is expected to hold.
  struct Item {
    VerifiedFile file;
    uint64_t number = 0;
    const FileMetaData* table = nullptr;
    const VlogFileMeta* vlog = nullptr;
  };
  std::vector<Item> items;
  for (int level = 0; level < version->level_count(); ++level) {
    for (const auto& f : version->files(level)) {
      Item item;
      item.file = {table_file_name(f->number), "table", f->file_size, 0, Status(), ""};
      item.number = f->number;
      item.table = f.get();
      items.push_back(std::move(item));
    }
  }
  for (const auto& u : version->vlog_files()) {
    Item item;
    item.file = {vlog_file_name(u.meta.number), "value log", u.meta.file_size, 0, Status(), ""};
    item.number = u.meta.number;
    item.vlog = &u.meta;
    items.push_back(std::move(item));
  }
  for (uint64_t n : wals) {
    Item item;
    item.file = {wal_file_name(n), "wal", 0, 0, Status(), ""};
    item.number = n;
    items.push_back(std::move(item));
  }
  {
    Item item;
    item.file = {manifest_file_name(manifest_number), "manifest", 0, 0, Status(), ""};
    item.number = manifest_number;
    items.push_back(std::move(item));
  }
  uint64_t total = 0;
  for (const Item& item : items) total += item.file.bytes;

  VerifyReport report;
  uint64_t done = 0;
  auto advance = [&](uint64_t bytes) {
    done += bytes;
    if (options.progress) options.progress(done, std::max(done, total));
  };
  crypto::CipherSource* ciphers = keyring_.get();
  for (Item& item : items) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_) return Status::closed("tree closed during verify");
    }
    VerifiedFile& f = item.file;
    const std::string label = storage_->location() + "/" + f.name;
    if (item.table != nullptr) {
      const FileMetaData& meta = *item.table;
      f.status = [&]() -> Status {
        SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> reader,
                             storage_->objects().open(f.name));
        if (reader->size() != meta.file_size) {
          return Status::corruption(label + ": " + std::to_string(reader->size()) +
                                    " bytes; the manifest records " +
                                    std::to_string(meta.file_size));
        }
        SKV_ASSIGN_OR_RETURN(std::shared_ptr<Table> table,
                             Table::open(std::move(reader), meta.number, nullptr, ciphers));
        return check_table_entries(*table, meta, label, &f, advance);
      }();
    } else if (item.vlog != nullptr) {
      const VlogFileMeta& meta = *item.vlog;
      f.status = [&]() -> Status {
        SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, storage_->logs().open(f.name));
        Status s = [&]() -> Status {
          if (file->size() != meta.file_size) {
            return Status::corruption(label + ": " + std::to_string(file->size()) +
                                      " bytes; the manifest records " +
                                      std::to_string(meta.file_size));
          }
          vlog::VlogScanner scanner(file.get(), meta.number, ciphers);
          FileHeader header;
          SKV_RETURN_IF_ERROR(scanner.read_header(&header));
          vlog::VlogEntry entry;
          uint64_t reported = 0;
          for (;;) {
            SKV_ASSIGN_OR_RETURN(const bool more, scanner.next(&entry));
            if (!more) break;
            ++f.units;
            const uint64_t at = entry.pointer.offset + entry.pointer.size;
            if (at - reported >= kProgressStep) {
              advance(at - reported);
              reported = at;
            }
          }
          if (scanner.torn_tail()) {
            return Status::corruption(label + ": ends in a partial entry at offset " +
                                      std::to_string(scanner.valid_end()));
          }
          if (f.units != meta.num_entries) {
            return Status::corruption(label + ": holds " + std::to_string(f.units) +
                                      " entries; the manifest records " +
                                      std::to_string(meta.num_entries));
          }
          advance(meta.file_size - std::min(reported, meta.file_size));
          return Status::OK();
        }();
        (void)file->close();
        return s;
      }();
    } else {
      const bool is_wal = f.kind == "wal";
      Result<std::unique_ptr<LogFile>> opened = storage_->logs().open(f.name);
      if (!opened.ok()) {
        if (opened.status().is_not_found()) {
          f.note = "removed during the check";
        } else {
          f.status = opened.status();
        }
      } else {
        std::unique_ptr<LogFile> file = std::move(opened).value();
        std::optional<LogPrefix> prefix;
        // A segment above the one being written was created for the next memtable and held
        // nothing yet.
        if (is_wal && item.number >= live_wal && live_wal != 0) {
          prefix.emplace(*file, item.number == live_wal ? live_wal_end : 0);
        }
        const LogFile& in = prefix ? static_cast<const LogFile&>(*prefix) : *file;
        f.bytes = in.size();
        total += f.bytes;
        const bool newest = is_wal ? item.number == wals.back() : true;
        if (is_wal) {
          f.status = check_log_records(
              in, FileKind::Wal, item.number, ciphers, newest, label, &f,
              [&](std::string_view record, uint64_t offset) {
                Status s = WriteBatch::check(record);
                if (s.ok()) return s;
                return Status::corruption(label + ": bad write batch at offset " +
                                          std::to_string(offset) + ": " + s.message());
              });
        } else {
          f.status = check_log_records(*file, FileKind::Manifest, item.number, ciphers, true, label,
                                       &f, [&](std::string_view record, uint64_t offset) {
                                         VersionEdit edit;
                                         return edit.decode_from(record, label, offset);
                                       });
        }
        (void)file->close();
        advance(f.bytes);
      }
    }
    report.bytes += f.bytes;
    report.files.push_back(std::move(f));
  }

  // CURRENT: it names the manifest checked above, and its seal holds.
  VerifiedFile current{current_file_name(), "current", 0, 0, Status(), ""};
  current.status = [&]() -> Status {
    const std::string label = storage_->location() + "/" + current_file_name();
    SKV_ASSIGN_OR_RETURN(std::string contents, storage_->read_pointer(current_file_name()));
    current.bytes = contents.size();
    current.units = 1;
    std::string_view first_line;
    std::optional<crypto::PointerSeal> seal;
    SKV_RETURN_IF_ERROR(crypto::split_pointer(contents, label, &first_line, &seal));
    if (seal.has_value() != (keyring_ != nullptr)) {
      return Status::corruption(label + (seal ? ": sealed in a plaintext database"
                                              : ": not sealed in an encrypted database"));
    }
    if (seal) SKV_RETURN_IF_ERROR(crypto::verify_pointer(*keyring_, first_line, *seal, label));
    FileType type = FileType::Unknown;
    uint64_t number = 0;
    if (first_line.empty() || first_line.back() != '\n' ||
        !parse_file_name(first_line.substr(0, first_line.size() - 1), &type, &number) ||
        type != FileType::Manifest) {
      return Status::corruption(label + ": does not name a manifest");
    }
    if (number != manifest_number) {
      std::lock_guard<std::mutex> lock(mu_);
      if (number != versions_->manifest_file_number()) {
        return Status::corruption(label + ": names " + manifest_file_name(number) +
                                  ", not the manifest in use");
      }
    }
    return Status::OK();
  }();
  report.bytes += current.bytes;
  report.files.push_back(std::move(current));
  if (options.progress) options.progress(std::max(done, total), std::max(done, total));
  return report;
}

}  // namespace skv
