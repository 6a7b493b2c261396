// The RocksDB source reader: manifest replay, then per family a merge of its live tables and its
// WAL entries, resolved the way RocksDB's own iterator sees the data (point, single and range
// deletions by sequence number; blob values; user-defined u64 timestamps).

#include <algorithm>
#include <cstdio>
#include <map>

#include "native/migrate/rocksdb/blob_reader.h"
#include "native/migrate/rocksdb/decode.h"
#include "native/migrate/rocksdb/log_reader.h"
#include "native/migrate/rocksdb/manifest.h"
#include "native/migrate/rocksdb/merge_iterator.h"
#include "native/migrate/rocksdb/table_reader.h"
#include "native/migrate/rocksdb/write_batch.h"
#include "native/migrate/source.h"

namespace skv::migration {

namespace {

using namespace skv::migration::rocksdb;

constexpr std::string_view kBytewise = "leveldb.BytewiseComparator";
constexpr std::string_view kTsSuffix = ".u64ts";

uint64_t hlc_to_ns(uint64_t ts) { return (ts >> 16) * 1000000ull + (ts & 0xffffull); }

std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (unsigned char c : s) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o;
}

class RocksDbReader : public SourceReader {
 public:
  RocksDbReader(std::string dir, ManifestState st, std::vector<std::pair<uint64_t, uint64_t>> wals)
      : dir_(std::move(dir)), st_(std::move(st)), wals_(std::move(wals)) {}

  MigrationSource kind() const override { return MigrationSource::RocksDb; }
  std::vector<std::string> families() const override {
    std::vector<std::string> out;
    for (const auto& [id, cf] : st_.families) {
      if (!cf.dropped) out.push_back(cf.name);
    }
    return out;
  }
  bool has_versions() const override {
    for (const auto& [id, cf] : st_.families) {
      if (!cf.dropped && is_ts(cf.comparator)) return true;
    }
    return false;
  }
  uint64_t total_bytes() const override {
    uint64_t n = 0;
    for (const auto& [id, cf] : st_.families) {
      if (cf.dropped) continue;
      for (const auto& [num, m] : cf.tables) n += m.size;
    }
    for (const auto& [num, size] : wals_) n += size;
    return n;
  }
  Status read(const SourceReadOptions& options, RecordSink& sink) override;

 private:
  static bool is_ts(const std::string& cmp) {
    return cmp.size() > kTsSuffix.size() &&
           cmp.compare(cmp.size() - kTsSuffix.size(), kTsSuffix.size(), kTsSuffix) == 0;
  }
  Status read_wals(const std::map<uint32_t, std::vector<MemEntry>*>& wanted,
                   std::map<uint32_t, std::vector<RangeTombstone>>* tombstones);
  Status read_family(const ColumnFamilyState& cf, std::vector<MemEntry>* mem,
                     std::vector<RangeTombstone> tombstones, const SourceReadOptions& options,
                     RecordSink& sink);

  std::string dir_;
  ManifestState st_;
  std::vector<std::pair<uint64_t, uint64_t>> wals_;  // number, size; ascending
  uint64_t done_ = 0;
};

Status RocksDbReader::read_wals(const std::map<uint32_t, std::vector<MemEntry>*>& wanted,
                                std::map<uint32_t, std::vector<RangeTombstone>>* tombstones) {
  for (size_t i = 0; i < wals_.size(); ++i) {
    uint64_t number = wals_[i].first;
    char name[32];
    std::snprintf(name, sizeof name, "/%06llu.log", static_cast<unsigned long long>(number));
    auto f = SourceFile::open(dir_ + name);
    if (!f.ok()) return f.status();
    LogReader log(&*f, number,
                  i + 1 == wals_.size() ? LogReader::Tail::kPointInTime : LogReader::Tail::kStrict);
    std::string rec;
    uint64_t off = 0;
    while (log.next(&rec, &off)) {
      auto where = [&](const std::string& what) { return f->where(off, what); };
      Status s = decode_write_batch(rec, where, [&](const BatchOp& op) -> Status {
        auto cf = st_.families.find(op.cf);
        if (cf == st_.families.end() || cf->second.dropped) return Status::OK();
        if (number < cf->second.log_number) return Status::OK();  // already in its tables
        auto w = wanted.find(op.cf);
        if (w == wanted.end()) return Status::OK();
        if (op.type == kTypeRangeDeletion) {
          (*tombstones)[op.cf].push_back(
              RangeTombstone{std::string(op.key), std::string(op.value), op.seq});
          return Status::OK();
        }
        w->second->push_back(MemEntry{std::string(op.key), op.seq, op.type, std::string(op.value)});
        return Status::OK();
      });
      if (!s.ok()) return s;
    }
    if (!log.status().ok()) return log.status();
    done_ += f->size();
  }
  return Status::OK();
}

Status RocksDbReader::read(const SourceReadOptions& options, RecordSink& sink) {
  done_ = 0;
  std::vector<std::string> names = options.families;
  if (names.empty()) names.push_back("default");
  std::vector<const ColumnFamilyState*> cfs;
  for (const std::string& n : names) {
    const ColumnFamilyState* found = nullptr;
    for (const auto& [id, cf] : st_.families) {
      if (!cf.dropped && cf.name == n) found = &cf;
    }
    if (found == nullptr) {
      return Status::invalid_argument(dir_ + ": no column family named '" + n + "'");
    }
    const std::string& cmp = found->comparator;
    std::string base = is_ts(cmp) ? cmp.substr(0, cmp.size() - kTsSuffix.size()) : cmp;
    if (base != kBytewise) {
      return Status::not_supported(dir_ + "/" + st_.manifest_name + ": column family '" + n +
                                   "' uses the comparator '" + cmp +
                                   "'; only bytewise order (optionally with .u64ts) is read");
    }
    cfs.push_back(found);
  }
  std::map<uint32_t, std::vector<MemEntry>> mem;
  std::map<uint32_t, std::vector<MemEntry>*> wanted;
  for (const ColumnFamilyState* cf : cfs) wanted[cf->id] = &mem[cf->id];
  std::map<uint32_t, std::vector<RangeTombstone>> wal_tombstones;
  if (Status s = read_wals(wanted, &wal_tombstones); !s.ok()) return s;
  for (const ColumnFamilyState* cf : cfs) {
    Status s = read_family(*cf, &mem[cf->id], std::move(wal_tombstones[cf->id]), options, sink);
    if (!s.ok()) return s;
    mem[cf->id].clear();
  }
  if (options.progress) options.progress(total_bytes(), total_bytes());
  return Status::OK();
}

Status RocksDbReader::read_family(const ColumnFamilyState& cf, std::vector<MemEntry>* mem,
                                  std::vector<RangeTombstone> tombstones,
                                  const SourceReadOptions& options, RecordSink& sink) {
  bool ts = is_ts(cf.comparator);
  std::stable_sort(mem->begin(), mem->end(), [ts](const MemEntry& a, const MemEntry& b) {
    return entry_before(ParsedEntry{a.key, a.seq, a.type, a.value},
                        ParsedEntry{b.key, b.seq, b.type, b.value}, ts);
  });
  std::vector<std::unique_ptr<TableReader>> tables;
  std::vector<const TableReader*> ptrs;
  for (const auto& [num, meta] : cf.tables) {
    if (meta.path_id != 0) {
      return Status::not_supported(dir_ + "/" + st_.manifest_name + ": table " +
                                   std::to_string(num) + " lives in another db_path");
    }
    char name[32];
    std::snprintf(name, sizeof name, "/%06llu.sst", static_cast<unsigned long long>(num));
    auto f = SourceFile::open(dir_ + name);
    if (!f.ok()) return f.status();
    auto t = TableReader::open(std::move(*f), meta.largest_seqno);
    if (!t.ok()) return t.status();
    const TableProperties& p = (*t)->properties();
    if (!p.comparator.empty() && p.comparator != cf.comparator) {
      return Status::corruption((*t)->file().where(
          0, "table comparator '" + p.comparator + "' differs from its family's"));
    }
    for (const RangeTombstone& r : (*t)->range_tombstones()) tombstones.push_back(r);
    ptrs.push_back(t->get());
    tables.push_back(std::move(*t));
  }
  if (ts && !tombstones.empty()) {
    return Status::not_supported(dir_ + ": column family '" + cf.name +
                                 "' holds range deletions over timestamped keys");
  }
  BlobReader blobs(dir_, cf.blob_files);
  MergeIterator it(ptrs, mem, ts);
  std::string group;  // the key (without timestamp) being resolved
  bool have_group = false;
  bool decided = false;  // the key's newest visible state is known
  bool ts_seen = false;
  uint64_t last_ts = 0;
  std::vector<std::string> merges;
  std::string value;
  uint64_t counter = 0;
  auto covered = [&](std::string_view key, uint64_t seq) {
    for (const RangeTombstone& r : tombstones) {
      if (r.seq > seq && key >= r.start && key < r.end) return true;
    }
    return false;
  };
  while (it.next()) {
    const ParsedEntry& e = it.entry();
    if (ts && e.user_key.size() < 8) {
      return Status::corruption(dir_ + ": key shorter than its timestamp in '" + cf.name + "'");
    }
    std::string_view key = ts ? e.user_key.substr(0, e.user_key.size() - 8) : e.user_key;
    uint64_t t = ts ? load64(e.user_key.data() + key.size()) : 0;
    if (!have_group || key != group) {
      group.assign(key);
      have_group = true;
      decided = false;
      ts_seen = false;
    }
    bool versioned = ts && options.versions;
    if (versioned) {
      if (ts_seen && t == last_ts) continue;  // an older write of the same version
      ts_seen = true;
      last_ts = t;
    } else if (decided) {
      continue;
    }
    decided = true;
    if (!ts && covered(key, e.seq)) continue;
    SourceRecord r;
    r.family = cf.name;
    r.key = key;
    r.timestamp = versioned ? hlc_to_ns(t) : 0;
    switch (e.type) {
      case kTypeValue:
        r.value = e.value;
        break;
      case kTypeBlobIndex: {
        Status s = blobs.resolve(e.user_key, e.value,
                                 dir_ + ": blob index of key " + hex(key) + " in '" + cf.name + "'",
                                 &value);
        if (!s.ok()) return s;
        r.value = value;
        break;
      }
      case kTypeDeletion:
      case kTypeSingleDeletion:
      case kTypeDeletionWithTimestamp:
        if (!versioned) continue;
        r.tombstone = true;
        break;
      case kTypeMerge:
        merges.push_back(hex(key));
        if (merges.size() >= 10) break;
        continue;
      case kTypeWideColumnEntity:
        return Status::not_supported(dir_ + ": key " + hex(key) + " in '" + cf.name +
                                     "' is a wide-column entity, which is not read");
      default:
        return Status::corruption(dir_ + ": entry of unknown type " + std::to_string(e.type) +
                                  " for key " + hex(key) + " in '" + cf.name + "'");
    }
    if (merges.size() >= 10) break;
    if (!merges.empty()) continue;  // the read fails: nothing more goes to the sink
    if (Status s = sink.put(r); !s.ok()) return s;
    if (options.progress && (++counter % 4096) == 0) {
      options.progress(done_ + it.table_bytes_read(), total_bytes());
    }
  }
  if (!it.status().ok()) return it.status();
  if (!merges.empty()) {
    std::string list;
    for (const std::string& k : merges) list += (list.empty() ? "" : ", ") + k;
    return Status::not_supported(dir_ + ": column family '" + cf.name +
                                 "' holds merge operands, which need the application's merge "
                                 "operator (keys, hex: " +
                                 list + ")");
  }
  done_ += it.table_bytes_read();
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<SourceReader>> open_rocksdb(const std::string& dir) {
  if (!path_exists(dir)) return Status::not_found(dir + ": no such directory");
  auto st = replay_manifest(dir);
  if (!st.ok()) return st.status();
  uint64_t min_log = UINT64_MAX;
  for (const auto& [id, cf] : st->families) {
    if (!cf.dropped) min_log = std::min(min_log, cf.log_number);
  }
  auto names = list_dir(dir);
  if (!names.ok()) return names.status();
  std::vector<std::pair<uint64_t, uint64_t>> wals;
  for (const std::string& n : *names) {
    if (n.size() < 5 || n.compare(n.size() - 4, 4, ".log") != 0) continue;
    std::string digits = n.substr(0, n.size() - 4);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    uint64_t num = std::stoull(digits);
    if (num < min_log) continue;
    auto f = SourceFile::open(dir + "/" + n);
    if (!f.ok()) return f.status();
    wals.emplace_back(num, f->size());
  }
  std::sort(wals.begin(), wals.end());
  return std::unique_ptr<SourceReader>(new RocksDbReader(dir, std::move(*st), std::move(wals)));
}

}  // namespace skv::migration
