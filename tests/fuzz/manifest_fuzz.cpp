// libFuzzer target: the manifest decoders, VersionEdit::decode_from (version/version_edit.h) and
// manifest replay, VersionSet::recover (version/version_set.h).
//
// The input is read as one edit payload, then as a manifest file on the in-memory platform: once
// as it is and once with its header and record checksums recomputed (fuzz_support.h). CURRENT
// names MANIFEST-<the number in the input's header>, and every table and value log the manifest's
// edits add exists as a stand-in file (the version set checks only that they exist).
//
// Properties: nothing crashes; decode and recover fail only with Corruption (InvalidArgument for
// a level beyond the configured level count), and a failed decode leaves the edit cleared. An edit
// that decodes round-trips: decoding its encoding gives equal fields, the encoding is never longer
// than the input (the decoder accepts over-long varints) and encoding is idempotent. A manifest
// that recovers gives a consistent state (next file number above every number in use, L1+ sorted
// and non-overlapping, value log references that agree with the live value logs), and writing
// that state out (log_and_apply starts a new manifest holding a
// snapshot) and recovering it again gives the same state. (A state at the top of the file
// number space, a known issue described at numbers_exhausted, is checked only with
// SKV_FUZZ_STRICT=1.)

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "format/file_names.h"
#include "fuzz_support.h"
#include "platform/memory/memory_platform.h"
#include "version/table_cache.h"
#include "version/version_edit.h"
#include "version/version_set.h"
#include "wal/log_reader.h"

using namespace skv;

namespace {

constexpr int kLevelCount = 7;
constexpr size_t kMaxStandIns = 64;

bool same_meta(const FileMetaData& a, const FileMetaData& b) {
  return a.number == b.number && a.file_size == b.file_size && a.smallest == b.smallest &&
         a.largest == b.largest && a.smallest_seq == b.smallest_seq &&
         a.largest_seq == b.largest_seq && a.num_entries == b.num_entries &&
         a.vlog_refs == b.vlog_refs;
}

bool same_edit(const VersionEdit& a, const VersionEdit& b) {
  if (a.log_number() != b.log_number() || a.next_file_number() != b.next_file_number() ||
      a.last_sequence() != b.last_sequence() || a.compact_pointers() != b.compact_pointers() ||
      a.deleted_files().size() != b.deleted_files().size() ||
      a.new_files().size() != b.new_files().size() || a.new_vlog_files() != b.new_vlog_files() ||
      a.deleted_vlog_files() != b.deleted_vlog_files()) {
    return false;
  }
  for (size_t i = 0; i < a.deleted_files().size(); ++i) {
    const auto& x = a.deleted_files()[i];
    const auto& y = b.deleted_files()[i];
    if (x.level != y.level || x.number != y.number) return false;
  }
  for (size_t i = 0; i < a.new_files().size(); ++i) {
    const auto& x = a.new_files()[i];
    const auto& y = b.new_files()[i];
    if (x.level != y.level || !same_meta(x.meta, y.meta)) return false;
  }
  return true;
}

bool is_empty(const VersionEdit& e) {
  return !e.log_number() && !e.next_file_number() && !e.last_sequence() &&
         e.compact_pointers().empty() && e.deleted_files().empty() && e.new_files().empty() &&
         e.new_vlog_files().empty() && e.deleted_vlog_files().empty();
}

void check_edit(std::string_view input) {
  VersionEdit edit;
  edit.set_log_number(99);  // decode_from must replace, not merge
  Status s = edit.decode_from(input, "fuzz", 0);
  (void)edit.debug_string();
  if (!s.ok()) {
    SKV_FUZZ_CHECK(s.is_corruption(), s.to_string());
    SKV_FUZZ_CHECK(is_empty(edit), "a failed decode must leave the edit cleared");
    return;
  }
  for (const auto& nf : edit.new_files()) {
    const FileMetaData& m = nf.meta;
    SKV_FUZZ_CHECK(nf.level >= 0 && nf.level < kMaxLevelCount, "new file level");
    SKV_FUZZ_CHECK(m.number >= 1 && m.file_size >= 1 && m.num_entries >= 1, "new file fields");
    SKV_FUZZ_CHECK(
        m.smallest.size() >= kInternalKeySuffix && m.largest.size() >= kInternalKeySuffix,
        "new file keys");
    SKV_FUZZ_CHECK(compare_internal_keys(m.smallest, m.largest) <= 0, "new file key order");
    SKV_FUZZ_CHECK(m.smallest_seq <= m.largest_seq && m.largest_seq <= kMaxSequenceNumber,
                   "new file sequences");
    for (size_t i = 0; i < m.vlog_refs.size(); ++i) {
      SKV_FUZZ_CHECK(m.vlog_refs[i].vlog_number >= 1 && m.vlog_refs[i].bytes >= 13,
                     "value log reference fields");
      SKV_FUZZ_CHECK(i == 0 || m.vlog_refs[i - 1].vlog_number < m.vlog_refs[i].vlog_number,
                     "value log references out of order");
    }
  }
  for (const auto& v : edit.new_vlog_files()) {
    SKV_FUZZ_CHECK(v.number >= 1 && v.num_entries >= 1 && v.file_size > kFileHeaderSize &&
                       v.entry_bytes() / 13 >= v.num_entries,
                   "new value log fields");
  }
  std::string enc;
  edit.encode_to(&enc);
  SKV_FUZZ_CHECK(enc.size() <= input.size(), "edit re-encoding is longer than the input");
  VersionEdit again;
  Status s2 = again.decode_from(enc, "fuzz", 0);
  SKV_FUZZ_CHECK(s2.ok(), "re-encoded edit fails to decode: " + s2.to_string());
  SKV_FUZZ_CHECK(same_edit(edit, again), "decode(encode(x)) != x");
  std::string enc2;
  again.encode_to(&enc2);
  SKV_FUZZ_CHECK(enc2 == enc, "edit encoding is not deterministic");
}

// The recovered state of a version set, for comparison.
struct State {
  std::vector<std::vector<FileMetaData>> levels;
  uint64_t log_number = 0;
  SequenceNumber last_sequence = 0;
  uint64_t next_file_number = 0;
  std::vector<std::string> compact_pointers;
  std::vector<VlogFileMeta> vlogs;
  std::vector<uint64_t> vlog_live;
};

State capture(const VersionSet& vs) {
  State st;
  std::shared_ptr<const Version> v = vs.current();
  for (int level = 0; level < v->level_count(); ++level) {
    st.levels.emplace_back();
    for (const auto& f : v->files(level)) st.levels.back().push_back(*f);
    st.compact_pointers.push_back(vs.compact_pointer(level));
  }
  for (const auto& u : v->vlog_files()) {
    st.vlogs.push_back(u.meta);
    st.vlog_live.push_back(u.live_bytes);
  }
  st.log_number = vs.log_number();
  st.last_sequence = vs.last_sequence();
  st.next_file_number = vs.next_file_number();
  return st;
}

bool same_levels(const State& a, const State& b) {
  if (a.levels.size() != b.levels.size()) return false;
  for (size_t l = 0; l < a.levels.size(); ++l) {
    if (a.levels[l].size() != b.levels[l].size()) return false;
    for (size_t i = 0; i < a.levels[l].size(); ++i) {
      if (!same_meta(a.levels[l][i], b.levels[l][i])) return false;
    }
  }
  return true;
}

void check_state(const State& st, uint64_t manifest_number) {
  SKV_FUZZ_CHECK(st.next_file_number > manifest_number, "next file number <= the manifest's");
  SKV_FUZZ_CHECK(st.next_file_number > st.log_number, "next file number <= the log number");
  for (size_t i = 0; i < st.vlogs.size(); ++i) {
    SKV_FUZZ_CHECK(st.next_file_number > st.vlogs[i].number, "next file number <= a value log's");
    SKV_FUZZ_CHECK(st.vlog_live[i] >= 1 && st.vlog_live[i] <= st.vlogs[i].entry_bytes(),
                   "a live value log's live bytes out of range");
  }
  for (size_t l = 0; l < st.levels.size(); ++l) {
    const auto& files = st.levels[l];
    for (size_t i = 0; i < files.size(); ++i) {
      SKV_FUZZ_CHECK(st.next_file_number > files[i].number, "next file number <= a table's");
      for (const auto& ref : files[i].vlog_refs) {
        bool live = false;
        for (const auto& v : st.vlogs) live = live || v.number == ref.vlog_number;
        SKV_FUZZ_CHECK(live, "a table points into a value log that is not live");
      }
      if (l > 0 && i > 0) {
        SKV_FUZZ_CHECK(compare_user_keys(extract_user_key(files[i - 1].largest),
                                         extract_user_key(files[i].smallest)) < 0,
                       "L1+ tables overlap or are out of order");
      }
    }
  }
}

// Known issue (reported to the engine owner): recover() accepts file numbers up to UINT64_MAX
// (in the manifest's name and header, its tables, its log number and next file number), and
// VersionSet::mark_file_number_used(UINT64_MAX) wraps the next file number to 0, so the engine
// would hand out numbers of files that exist. Until recover rejects such numbers, a state that
// reaches the top of the number space is not checked further (SKV_FUZZ_STRICT=1 checks it).
bool numbers_exhausted(const State& st, uint64_t manifest_number) {
  constexpr uint64_t kTop = UINT64_MAX - 1;
  if (manifest_number >= kTop || st.log_number >= kTop || st.next_file_number >= kTop ||
      st.next_file_number == 0) {
    return true;
  }
  for (const auto& level : st.levels) {
    for (const FileMetaData& f : level) {
      if (f.number >= kTop) return true;
    }
  }
  return false;
}

// The table and value log numbers the edits of a manifest add, as far as it reads (at most
// kMaxStandIns of each).
struct Named {
  std::set<uint64_t> tables;
  std::set<uint64_t> vlogs;
};

Named files_named(std::string bytes) {
  Named out;
  fuzz::StringLogFile file("scan", &bytes);
  log::Reader reader(&file, FileKind::Manifest);
  std::string record;
  uint64_t offset = 0;
  for (size_t i = 0; i < bytes.size() / 9 + 1 && out.tables.size() < kMaxStandIns &&
                     out.vlogs.size() < kMaxStandIns;
       ++i) {
    Result<bool> got = reader.read_record(&record, &offset);
    if (!got.ok() || !*got) break;
    VersionEdit e;
    if (!e.decode_from(record).ok()) break;
    for (const auto& nf : e.new_files()) out.tables.insert(nf.meta.number);
    for (const auto& v : e.new_vlog_files()) out.vlogs.insert(v.number);
  }
  return out;
}

void check_recover(const std::string& bytes) {
  const uint64_t number = bytes.size() >= 16 ? decode_fixed64(bytes.data() + 8) : 1;
  const std::string name = manifest_file_name(number);
  MemoryPlatform platform;
  Result<std::unique_ptr<Storage>> opened = platform.open_storage("fuzz", StorageOptions{});
  SKV_FUZZ_CHECK(opened.ok(), opened.status().to_string());
  std::unique_ptr<Storage> storage = std::move(*opened);
  {
    Result<std::unique_ptr<LogFile>> f = storage->logs().create(name);
    SKV_FUZZ_CHECK(f.ok(), f.status().to_string());
    SKV_FUZZ_CHECK((*f)->append(bytes).ok() && (*f)->sync().ok(), "write manifest");
    SKV_FUZZ_CHECK((*f)->close().ok(), "close manifest");
  }
  const Named named = files_named(bytes);
  for (uint64_t t : named.tables) {
    const std::string tname = table_file_name(t);
    if (tname == name) continue;
    Result<std::unique_ptr<ObjectWriter>> w = storage->objects().create(tname);
    if (!w.ok()) continue;
    SKV_FUZZ_CHECK((*w)->append("stand-in").ok() && (*w)->finish().ok(), "stand-in");
  }
  for (uint64_t n : named.vlogs) {
    Result<std::unique_ptr<LogFile>> f = storage->logs().create(vlog_file_name(n));
    if (!f.ok()) continue;
    SKV_FUZZ_CHECK((*f)->append("stand-in").ok() && (*f)->close().ok(), "value log stand-in");
  }
  SKV_FUZZ_CHECK(storage->sync_dir().ok(), "sync_dir");
  SKV_FUZZ_CHECK(storage->write_pointer(current_file_name(), name + "\n").ok(), "CURRENT");

  Options options;
  options.level_count = kLevelCount;
  auto tables = std::make_shared<TableCache>(storage.get(), nullptr, 4);
  State first;
  {
    VersionSet vs(storage.get(), options, tables);
    Status s = vs.recover();
    if (!s.ok()) {
      SKV_FUZZ_CHECK(fuzz::is_header_refusal(s) || s.code() == Code::InvalidArgument,
                     s.to_string());
      return;
    }
    SKV_FUZZ_CHECK(vs.manifest_file_number() == number, "manifest number");
    first = capture(vs);
    if (!fuzz::strict_mode() && numbers_exhausted(first, number)) return;
    check_state(first, number);
    // Write the recovered state out: a new manifest holding a snapshot of it.
    VersionEdit nothing;
    Status w = vs.log_and_apply(&nothing);
    SKV_FUZZ_CHECK(w.ok(), "rewriting a recovered state failed: " + w.to_string());
  }
  VersionSet again(storage.get(), options, tables);
  Status s = again.recover();
  SKV_FUZZ_CHECK(s.ok(), "recovering a rewritten manifest failed: " + s.to_string());
  const State second = capture(again);
  check_state(second, again.manifest_file_number());
  SKV_FUZZ_CHECK(same_levels(first, second), "tables differ after a rewrite");
  SKV_FUZZ_CHECK(first.log_number == second.log_number, "log number differs after a rewrite");
  SKV_FUZZ_CHECK(first.last_sequence == second.last_sequence, "last sequence differs");
  SKV_FUZZ_CHECK(first.compact_pointers == second.compact_pointers, "compact pointers differ");
  SKV_FUZZ_CHECK(first.vlogs == second.vlogs && first.vlog_live == second.vlog_live,
                 "value logs differ after a rewrite");
  SKV_FUZZ_CHECK(second.next_file_number > first.next_file_number,
                 "next file number did not move past the new manifest");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_view(data, size);
  check_edit(input);
  std::string raw(input);
  check_recover(raw);
  std::string fixed(input);
  fuzz::fix_file_header(&fixed);
  fuzz::fix_log_records(&fixed, kFileHeaderSize);
  if (fixed != raw) check_recover(fixed);
  return 0;
}
