// The SurrealKV 0.20/0.21 SourceReader (docs/migration-surrealkv.md): the manifest says which
// tables are live and which WAL segments still need replaying; read() merges the tables (one
// data block at a time each) with the WAL's entries (held in memory) by user key ascending and
// sequence number descending, resolves value-log pointers and applies 0.21's version rules.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "native/migrate/source.h"
#include "native/migrate/surrealkv/manifest.h"
#include "native/migrate/surrealkv/surrealkv_format.h"
#include "native/migrate/surrealkv/table_reader.h"
#include "native/migrate/surrealkv/version_merge.h"
#include "native/migrate/surrealkv/vlog_reader.h"
#include "native/migrate/surrealkv/wal_reader.h"
#include "util/status_macros.h"

namespace skv::migration {

namespace {

using namespace surrealkv;  // NOLINT: this file is the reader of that format

constexpr std::string_view kManifestName = "00000000000000000000.manifest";

// Busy when another process holds the LOCK file's lock (SurrealKV takes an exclusive flock while
// the database is open). Opens the file read-only; creates nothing.
Status check_lock(const std::string& dir) {
  std::string path = dir + "/LOCK";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::OK();
    return Status::io_error(path + ": open: " + std::strerror(errno));
  }
  Status s;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      s = Status::busy(path +
                       ": the database is open in SurrealKV (its lock is held); close it "
                       "or import from a checkpoint");
    } else {
      s = Status::io_error(path + ": flock: " + std::strerror(errno));
    }
  } else {
    (void)::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return s;
}

// A 20-digit id followed by `ext`, or nothing.
bool parse_numbered(const std::string& name, std::string_view ext, uint64_t* id) {
  if (name.size() != 20 + ext.size() || name.compare(20, ext.size(), ext) != 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < 20; ++i) {
    char ch = name[i];
    if (ch < '0' || ch > '9') return false;
    uint64_t d = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *id = v;
  return true;
}

struct TableInfo {
  std::string path;
  uint64_t id = 0;
  uint64_t size = 0;
};

class SurrealKvReader : public SourceReader {
 public:
  SurrealKvReader(std::string dir, std::vector<TableInfo> tables, std::vector<std::string> wal,
                  uint64_t total)
      : dir_(std::move(dir)), tables_(std::move(tables)), wal_(std::move(wal)), total_(total) {}

  MigrationSource kind() const override { return MigrationSource::SurrealKv; }
  std::vector<std::string> families() const override { return {""}; }
  bool has_versions() const override { return true; }
  uint64_t total_bytes() const override { return total_; }

  Status read(const SourceReadOptions& options, RecordSink& sink) override {
    std::vector<std::string> families = options.families;
    if (families.empty()) families.push_back("");
    for (const std::string& f : families) {
      if (!f.empty()) {
        return Status::invalid_argument(dir_ + ": SurrealKV has no family \"" + f +
                                        "\" (it has one, named \"\")");
      }
    }
    for (size_t i = 0; i < families.size(); ++i) {
      SKV_RETURN_IF_ERROR(read_once(options, sink));
    }
    return Status::OK();
  }

 private:
  Status read_once(const SourceReadOptions& options, RecordSink& sink) {
    std::vector<std::unique_ptr<TableReader>> tables;
    for (const TableInfo& t : tables_) {
      SKV_ASSIGN_OR_RETURN(auto reader, TableReader::open(t.path, t.id));
      tables.push_back(std::move(reader));
    }
    std::vector<SourceFile> wal_files;
    wal_files.reserve(wal_.size());
    uint64_t wal_bytes = 0;
    std::vector<Entry> wal_entries;
    for (const std::string& path : wal_) {
      SKV_ASSIGN_OR_RETURN(SourceFile f, SourceFile::open(path));
      wal_files.push_back(std::move(f));
      SKV_RETURN_IF_ERROR(read_wal_segment(wal_files.back(), &wal_entries));
      wal_bytes += wal_files.back().size();
    }
    VLogReader vlog(dir_ + "/vlog");
    auto done_bytes = [&] {
      uint64_t n = wal_bytes + vlog.bytes_read();
      for (const auto& t : tables) n += t->bytes_read();
      return n;
    };
    VersionMerge merge(std::move(tables), std::move(wal_entries));
    std::vector<Entry> versions;
    std::string value;
    std::string ikey;
    uint64_t reported = 0;
    for (;;) {
      bool end = false;
      SKV_RETURN_IF_ERROR(merge.next_key(&versions, &end));
      if (end) break;
      for (const Entry& e : versions) {
        bool tombstone = e.kind == kDelete || e.kind == kSoftDelete;
        if (!options.versions && tombstone) break;  // the newest version deletes the key
        SourceRecord r;
        r.key = e.user_key;
        r.timestamp = options.versions ? e.timestamp : 0;
        r.tombstone = tombstone;
        if (!tombstone) {
          ValueLocation loc;
          SKV_RETURN_IF_ERROR(decode_value_location(e.value, *e.file, e.offset, &loc));
          if (loc.is_pointer) {
            ikey.clear();
            append_internal_key(&ikey, e.user_key, e.seq, e.kind, e.timestamp);
            SKV_RETURN_IF_ERROR(vlog.get(loc.pointer, ikey, *e.file, e.offset, &value));
            r.value = value;
          } else {
            r.value = loc.inline_value;
          }
        }
        SKV_RETURN_IF_ERROR(sink.put(r));
        // Without versions only the newest matters; a hard delete and a replace hide all older.
        if (!options.versions || e.kind == kDelete || e.kind == kReplace) break;
      }
      if (options.progress && done_bytes() - reported >= (1u << 20)) {
        reported = done_bytes();
        options.progress(reported, total_);
      }
    }
    if (options.progress) options.progress(done_bytes(), total_);
    return Status::OK();
  }

  std::string dir_;
  std::vector<TableInfo> tables_;  // level 0 first, in manifest order
  std::vector<std::string> wal_;   // live segments in id order
  uint64_t total_;
};

// The checks SurrealKV itself makes when it loads a manifest.
Status check_levels(const SourceFile& mf, const Manifest& m,
                    const std::vector<std::vector<std::unique_ptr<TableReader>>>& levels) {
  uint64_t max_seq = 0;
  for (size_t level = 0; level < levels.size(); ++level) {
    const auto& tables = levels[level];
    for (size_t i = 0; i < tables.size(); ++i) {
      const TableMeta& t = tables[i]->meta();
      max_seq = std::max(max_seq, t.largest_seq);
      if (t.smallest_seq > t.largest_seq) {
        return Status::corruption(
            tables[i]->file().where(0, "table's smallest seq above its largest"));
      }
      // SurrealKV's own rule for levels 1 and up: each table's sequence numbers lie above the
      // previous table's. (The merge needs no order of tables, so no other is imposed.)
      if (i == 0 || level == 0) continue;
      const TableMeta& prev = tables[i - 1]->meta();
      if (t.smallest_seq <= prev.largest_seq) {
        return Status::corruption(
            mf.where(0, "level " + std::to_string(level) + " tables " + std::to_string(prev.id) +
                            " and " + std::to_string(t.id) + " have overlapping sequence numbers"));
      }
    }
  }
  if (max_seq != m.last_sequence) {
    return Status::corruption(
        mf.where(18, "manifest last_sequence " + std::to_string(m.last_sequence) +
                         " differs from the tables' largest, " + std::to_string(max_seq)));
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<SourceReader>> open_surrealkv(const std::string& dir) {
  if (!path_exists(dir)) return Status::not_found(dir + ": no such directory");
  SKV_RETURN_IF_ERROR(check_lock(dir));
  std::string mpath = dir + "/manifest/" + std::string(kManifestName);
  SKV_ASSIGN_OR_RETURN(SourceFile mf, SourceFile::open(mpath));
  SKV_ASSIGN_OR_RETURN(Manifest m, read_manifest(mf));
  uint64_t total = 0;

  std::vector<std::vector<std::unique_ptr<TableReader>>> levels(m.levels.size());
  std::vector<TableInfo> tables;
  for (size_t level = 0; level < m.levels.size(); ++level) {
    for (uint64_t id : m.levels[level]) {
      std::string path = numbered_path(dir + "/sstables", id, "sst");
      if (!path_exists(path)) {
        return Status::corruption(mpath + ": names table " + std::to_string(id) + ", but " + path +
                                  " does not exist");
      }
      SKV_ASSIGN_OR_RETURN(auto t, TableReader::open(path, id));
      tables.push_back(TableInfo{path, id, t->file().size()});
      total += t->file().size();
      levels[level].push_back(std::move(t));
    }
  }
  SKV_RETURN_IF_ERROR(check_levels(mf, m, levels));

  std::vector<std::string> wal;
  std::string wal_dir = dir + "/wal";
  if (path_exists(wal_dir)) {
    SKV_ASSIGN_OR_RETURN(std::vector<std::string> names, list_dir(wal_dir));
    std::vector<uint64_t> ids;
    for (const std::string& name : names) {
      uint64_t id = 0;
      if (!parse_numbered(name, ".wal", &id)) {
        return Status::not_supported(wal_dir + "/" + name +
                                     ": not a WAL segment (a repair leftover or a foreign file); "
                                     "open the database in SurrealKV once, or remove it");
      }
      ids.push_back(id);
    }
    if (!ids.empty() && m.log_number > ids.back() + 1) {
      return Status::corruption(mf.where(10, "manifest log_number " + std::to_string(m.log_number) +
                                                 " past the last WAL segment " +
                                                 std::to_string(ids.back())));
    }
    for (uint64_t id : ids) {
      if (id < m.log_number) continue;  // already flushed into tables
      std::string path = numbered_path(wal_dir, id, "wal");
      SKV_ASSIGN_OR_RETURN(SourceFile f, SourceFile::open(path));
      total += f.size();
      wal.push_back(path);
    }
  }
  std::string vlog_dir = dir + "/vlog";
  if (path_exists(vlog_dir)) {
    SKV_ASSIGN_OR_RETURN(std::vector<std::string> names, list_dir(vlog_dir));
    for (const std::string& name : names) {
      uint64_t id = 0;
      if (!parse_numbered(name, ".vlog", &id)) continue;  // pointers name files by id
      SKV_ASSIGN_OR_RETURN(SourceFile f, SourceFile::open(vlog_dir + "/" + name));
      total += f.size();
    }
  }
  return std::unique_ptr<SourceReader>(
      new SurrealKvReader(dir, std::move(tables), std::move(wal), total));
}

}  // namespace skv::migration
