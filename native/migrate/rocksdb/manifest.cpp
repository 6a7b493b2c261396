#include "native/migrate/rocksdb/manifest.h"

#include <optional>

#include "native/migrate/rocksdb/decode.h"
#include "native/migrate/rocksdb/log_reader.h"
#include "native/migrate/source_file.h"

namespace skv::migration::rocksdb {

namespace {

// One decoded version edit, applied later (atomic groups wait for their last member).
struct Edit {
  uint32_t cf = 0;
  std::optional<std::string> add_cf;
  bool drop_cf = false;
  std::optional<std::string> comparator;
  std::optional<uint64_t> log_number, next_file, last_seq;
  std::vector<std::pair<int, uint64_t>> deleted;
  std::vector<std::pair<int, TableFileMeta>> added;
  std::vector<uint64_t> blobs_added;
  std::optional<uint32_t> remaining_in_group;
};

// Skips {tag v32, lenprefixed value} pairs until `end_tag`.
bool skip_custom(std::string_view* in, uint32_t end_tag) {
  for (;;) {
    uint32_t t;
    if (!get_varint32(in, &t)) return false;
    if (t == end_tag) return true;
    std::string_view v;
    if (!get_lenprefixed(in, &v)) return false;
  }
}

Status decode_edit(std::string_view in, const SourceFile& f, uint64_t off, Edit* e) {
  auto bad = [&](const std::string& what) {
    return Status::corruption(f.where(off, "version edit: " + what));
  };
  while (!in.empty()) {
    uint32_t tag;
    if (!get_varint32(&in, &tag)) return bad("tag");
    std::string_view s;
    uint64_t v = 0;
    uint32_t v32 = 0;
    switch (tag) {
      case 1:
        if (!get_lenprefixed(&in, &s)) return bad("comparator");
        e->comparator = std::string(s);
        break;
      case 2:
        if (!get_varint64(&in, &v)) return bad("log number");
        e->log_number = v;
        break;
      case 3:
        if (!get_varint64(&in, &v)) return bad("next file number");
        e->next_file = v;
        break;
      case 4:
        if (!get_varint64(&in, &v)) return bad("last sequence");
        e->last_seq = v;
        break;
      case 5:
        if (!get_varint32(&in, &v32) || !get_lenprefixed(&in, &s)) return bad("compact cursor");
        break;
      case 6: {
        if (!get_varint32(&in, &v32) || !get_varint64(&in, &v)) return bad("deleted file");
        e->deleted.emplace_back(static_cast<int>(v32), v);
        break;
      }
      case 9:
      case 10:
        if (!get_varint64(&in, &v)) return bad("log number");
        break;
      case 7:
      case 100:
      case 102:
      case 103: {
        TableFileMeta m;
        std::string_view smallest, largest;
        if (!get_varint32(&in, &v32) || !get_varint64(&in, &m.number)) return bad("new file");
        int level = static_cast<int>(v32);
        if (tag == 102 && !get_varint32(&in, &m.path_id)) return bad("new file path");
        if (!get_varint64(&in, &m.size) || !get_lenprefixed(&in, &smallest) ||
            !get_lenprefixed(&in, &largest)) {
          return bad("new file");
        }
        if (tag != 7 &&
            (!get_varint64(&in, &m.smallest_seqno) || !get_varint64(&in, &m.largest_seqno))) {
          return bad("new file seqnos");
        }
        if (tag == 103) {
          for (;;) {
            uint32_t t;
            if (!get_varint32(&in, &t)) return bad("new file field");
            if (t == 1) break;
            if (!get_lenprefixed(&in, &s)) return bad("new file field");
            if (t == 65) {
              if (s.size() != 1) return bad("path id");
              m.path_id = static_cast<unsigned char>(s[0]);
            } else if (t & 64) {
              return Status::not_supported(f.where(off, "version edit: new-file field " +
                                                            std::to_string(t) +
                                                            " that must be understood"));
            }
          }
        }
        e->added.emplace_back(level, m);
        break;
      }
      case 200:
        if (!get_varint32(&in, &e->cf)) return bad("column family");
        break;
      case 201:
        if (!get_lenprefixed(&in, &s)) return bad("column family name");
        e->add_cf = std::string(s);
        break;
      case 202:
        e->drop_cf = true;
        break;
      case 203:
        if (!get_varint32(&in, &v32)) return bad("max column family");
        break;
      case 300:
        if (!get_varint32(&in, &v32)) return bad("atomic group");
        e->remaining_in_group = v32;
        break;
      case 400:
      case 401: {
        uint64_t num, a, b;
        if (!get_varint64(&in, &num) || !get_varint64(&in, &a) || !get_varint64(&in, &b)) {
          return bad("blob file");
        }
        if (tag == 400 && (!get_lenprefixed(&in, &s) || !get_lenprefixed(&in, &s))) {
          return bad("blob file checksum");
        }
        if (!skip_custom(&in, 0)) return bad("blob file field");
        if (tag == 400) e->blobs_added.push_back(num);
        break;
      }
      default:
        if (tag & 8192) {
          if (tag == 8194 || tag == 8195) {
            // Old blob addition / garbage records without a length prefix.
            uint64_t num, a, b;
            if (!get_varint64(&in, &num) || !get_varint64(&in, &a) || !get_varint64(&in, &b)) {
              return bad("blob file");
            }
            if (tag == 8194 && (!get_lenprefixed(&in, &s) || !get_lenprefixed(&in, &s))) {
              return bad("blob file checksum");
            }
            if (!skip_custom(&in, 0)) return bad("blob file field");
            if (tag == 8194) e->blobs_added.push_back(num);
          } else if (tag == 8196) {
            if (!get_varint64(&in, &v) || !skip_custom(&in, 1)) return bad("wal addition");
          } else if (tag == 8197) {
            if (!get_varint64(&in, &v)) return bad("wal deletion");
          } else if (!get_lenprefixed(&in, &s)) {
            return bad("ignorable field " + std::to_string(tag));
          }
          break;
        }
        return Status::not_supported(
            f.where(off, "version edit tag " + std::to_string(tag) + " is not known"));
    }
  }
  return Status::OK();
}

Status apply(const Edit& e, ManifestState* st, const SourceFile& f, uint64_t off) {
  if (e.next_file) st->next_file_number = *e.next_file;
  if (e.last_seq) st->last_sequence = *e.last_seq;
  if (e.add_cf) {
    auto it = st->families.find(e.cf);
    if (it != st->families.end() && !it->second.dropped) {
      return Status::corruption(
          f.where(off, "column family " + std::to_string(e.cf) + " is added twice"));
    }
    ColumnFamilyState cf;
    cf.id = e.cf;
    cf.name = *e.add_cf;
    st->families[e.cf] = cf;
  }
  auto it = st->families.find(e.cf);
  if (it == st->families.end()) {
    return Status::corruption(
        f.where(off, "edit of unknown column family " + std::to_string(e.cf)));
  }
  ColumnFamilyState& cf = it->second;
  if (cf.dropped) return Status::OK();  // edits after a drop change nothing readable
  if (e.drop_cf) {
    cf.dropped = true;
    return Status::OK();
  }
  if (e.comparator) cf.comparator = *e.comparator;
  if (e.log_number) cf.log_number = *e.log_number;
  for (const auto& [level, num] : e.deleted) {
    auto lv = cf.level_of.find(num);
    if (lv == cf.level_of.end() || lv->second != static_cast<uint64_t>(level)) {
      return Status::corruption(f.where(off, "deletes table file " + std::to_string(num) +
                                                 " that level " + std::to_string(level) +
                                                 " does not hold"));
    }
    cf.level_of.erase(lv);
    cf.tables.erase(num);
  }
  for (const auto& [level, m] : e.added) {
    cf.tables[m.number] = m;
    cf.level_of[m.number] = static_cast<uint64_t>(level);
  }
  for (uint64_t b : e.blobs_added) cf.blob_files.insert(b);
  return Status::OK();
}

}  // namespace

Result<ManifestState> replay_manifest(const std::string& dir) {
  auto current = SourceFile::open(dir + "/CURRENT");
  if (!current.ok()) return current.status();
  std::string name;
  if (Status s = current->read_all(&name); !s.ok()) return s;
  if (name.empty() || name.back() != '\n' || name.find('/') != std::string::npos ||
      name.rfind("MANIFEST-", 0) != 0) {
    return Status::corruption(current->where(0, "CURRENT does not name a MANIFEST"));
  }
  name.pop_back();
  auto mf = SourceFile::open(dir + "/" + name);
  if (!mf.ok()) {
    if (mf.status().is_not_found()) {
      return Status::corruption(current->where(0, "names " + name + ", which is missing"));
    }
    return mf.status();
  }
  ManifestState st;
  st.manifest_name = name;
  st.manifest_size = mf->size();
  ColumnFamilyState def;
  def.name = "default";
  st.families[0] = def;
  LogReader log(&*mf, 0, LogReader::Tail::kTruncation);
  std::string rec;
  uint64_t off = 0;
  std::vector<std::pair<Edit, uint64_t>> group;
  bool any = false;
  while (log.next(&rec, &off)) {
    Edit e;
    if (Status s = decode_edit(rec, *mf, off, &e); !s.ok()) return s;
    any = true;
    if (e.remaining_in_group || !group.empty()) {
      if (!e.remaining_in_group) {
        return Status::corruption(mf->where(off, "edit without its atomic group marker"));
      }
      uint32_t left = *e.remaining_in_group;
      if (!group.empty() && *group.back().first.remaining_in_group != left + 1) {
        return Status::corruption(mf->where(off, "atomic group count out of order"));
      }
      group.emplace_back(std::move(e), off);
      if (left == 0) {
        for (const auto& [ge, goff] : group) {
          if (Status s = apply(ge, &st, *mf, goff); !s.ok()) return s;
        }
        group.clear();
      }
      continue;
    }
    if (Status s = apply(e, &st, *mf, off); !s.ok()) return s;
  }
  if (!log.status().ok()) return log.status();
  // An atomic group left incomplete at the end is dropped, as RocksDB's recovery does.
  if (!any) return Status::corruption(mf->where(0, "MANIFEST holds no version edit"));
  return st;
}

}  // namespace skv::migration::rocksdb
