// skv-test-modules: util wal sstable memtable version memory fault
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cache/block_cache.h"
#include "compaction/compaction_job.h"
#include "compaction/compaction_picker.h"
#include "format/file_names.h"
#include "format/internal_key.h"
#include "iterator/merging_iterator.h"
#include "memtable/memtable.h"
#include "platform/fault/fault_platform.h"
#include "platform/memory/memory_platform.h"
#include "version/table_cache.h"
#include "version/version_set.h"

using namespace skv;

namespace {

const std::string kPath = "cdb";

struct Write {
  std::string key;
  ValueKind kind;
  std::string value;
};

struct ModelEntry {
  ValueKind kind;
  std::string value;
};
// user key -> sequence (newest first) -> entry.
using Model = std::map<std::string, std::map<SequenceNumber, ModelEntry, std::greater<>>>;

// The version of `key` a reader at `snap` sees, or null.
const ModelEntry* model_get(const Model& m, const std::string& key, SequenceNumber snap,
                            SequenceNumber* seq = nullptr) {
  auto it = m.find(key);
  if (it == m.end()) return nullptr;
  auto v = it->second.lower_bound(snap);  // first with sequence <= snap (newest first)
  if (v == it->second.end()) return nullptr;
  if (seq != nullptr) *seq = v->first;
  return &v->second;
}

// (user key, sequence, kind) of every entry of an iterator, in order.
using RawEntries = std::vector<std::tuple<std::string, SequenceNumber, ValueKind>>;

RawEntries scan_raw(InternalIterator* it) {
  RawEntries out;
  for (it->seek_first(); it->valid(); it->next()) {
    ParsedInternalKey p;
    REQUIRE(parse_internal_key(it->key(), &p));
    out.emplace_back(std::string(p.user_key), p.sequence, p.kind);
  }
  REQUIRE(it->status().ok());
  return out;
}

struct Fixture {
  FaultPlatform platform{std::make_shared<MemoryPlatform>()};
  Options options;
  std::unique_ptr<Storage> storage;
  std::shared_ptr<BlockCache> cache;
  std::shared_ptr<TableCache> tables;
  std::unique_ptr<VersionSet> vset;
  SequenceNumber seq = 0;
  Model model;
  std::vector<SequenceNumber> snapshots;

  explicit Fixture(std::function<void(Options*)> tweak = nullptr) {
    options.level_count = 4;
    options.block_size = 512;
    options.compression = Compression::None;
    options.l0_compaction_trigger = 2;
    options.level_base_bytes = 16 * 1024;
    options.level_multiplier = 4;
    options.target_file_size = 4 * 1024;
    if (tweak) tweak(&options);
    auto s = platform.open_storage(kPath, StorageOptions{});
    REQUIRE(s.ok());
    storage = std::move(*s);
    cache = std::make_shared<BlockCache>(1 << 20);
    tables = std::make_shared<TableCache>(storage.get(), cache, 8);
    vset = std::make_unique<VersionSet>(storage.get(), options, tables);
    REQUIRE(vset->create_new().ok());
  }

  JobContext ctx() {
    JobContext c;
    c.storage = storage.get();
    c.options = &vset->options();
    c.table_cache = tables.get();
    c.new_file_number = [this] { return vset->new_file_number(); };
    c.snapshots = snapshots;
    return c;
  }

  std::set<std::string> object_names() {
    auto names = storage->objects().list();
    REQUIRE(names.ok());
    return {names->begin(), names->end()};
  }

  // Writes `writes` (one sequence number each) through a memtable into a table recorded at
  // `level`. Returns the table (number 0 if everything was dropped).
  FileMetaData flush(const std::vector<Write>& writes, int level = 0) {
    MemTable mem;
    for (const auto& w : writes) {
      ++seq;
      mem.add(seq, w.kind, w.key, w.value, seq);
      model[w.key][seq] = ModelEntry{w.kind, w.value};
    }
    auto it = mem.new_iterator();
    FileMetaData meta;
    REQUIRE(write_level0_table(it.get(), ctx(), vset->current().get(), &meta).ok());
    VersionEdit e;
    if (meta.num_entries > 0) e.add_file(level, meta);
    vset->set_last_sequence(seq);
    REQUIRE(vset->log_and_apply(&e).ok());
    return meta;
  }

  void apply(const Compaction& c, SortedRunOutput* out = nullptr) {
    VersionEdit e;
    Status s = run_compaction(c, ctx(), &e, out);
    INFO(s.to_string());
    REQUIRE(s.ok());
    REQUIRE(vset->log_and_apply(&e).ok());
    check_shape();
  }

  int compact_auto() {
    int n = 0;
    while (auto c = pick_compaction(*vset)) {
      apply(*c);
      REQUIRE(++n < 100);
    }
    return n;
  }

  void compact_all() {
    int start = 0;
    while (auto c = pick_manual_all(*vset, start)) {
      apply(*c);
      start = c->level + 1;
    }
  }

  // L0 newest first; L1+ sorted and disjoint by user key; metadata consistent.
  void check_shape() {
    auto v = vset->current();
    for (size_t i = 1; i < v->files(0).size(); ++i) {
      REQUIRE(v->files(0)[i - 1]->largest_seq >= v->files(0)[i]->largest_seq);
    }
    for (int level = 1; level < v->level_count(); ++level) {
      const auto& files = v->files(level);
      for (size_t i = 0; i < files.size(); ++i) {
        REQUIRE(compare_internal_keys(files[i]->smallest, files[i]->largest) <= 0);
        if (i > 0) {
          REQUIRE(compare_user_keys(extract_user_key(files[i - 1]->largest),
                                    extract_user_key(files[i]->smallest)) < 0);
        }
      }
    }
  }

  // Point reads at `snap` agree with the model (a tombstone and no entry both mean absent).
  void check_reads(SequenceNumber snap, const std::vector<std::string>& extra_keys = {}) {
    auto v = vset->current();
    std::vector<std::string> keys = extra_keys;
    for (const auto& [k, versions] : model) keys.push_back(k);
    for (const auto& k : keys) {
      Table::GetResult r;
      bool found = false;
      Status s = v->get(k, snap, &r, &found);
      INFO("key " << k << " snapshot " << snap << " " << s.to_string());
      REQUIRE(s.ok());
      REQUIRE(found == r.found);
      const ModelEntry* want = model_get(model, k, snap);
      bool want_live = want != nullptr && want->kind == ValueKind::Value;
      bool got_live = found && r.kind == ValueKind::Value;
      REQUIRE(got_live == want_live);
      if (want_live) REQUIRE(r.value == want->value);
    }
  }

  // A merged scan at `snap`, forward and backward, yields exactly the model's live keys.
  void check_scan(SequenceNumber snap) {
    std::vector<std::unique_ptr<InternalIterator>> children;
    vset->current()->add_iterators(TableReadOptions(), &children);
    auto it = new_merging_iterator(std::move(children));
    std::vector<std::pair<std::string, std::string>> got;
    std::string last;
    bool have_last = false;
    for (it->seek_first(); it->valid(); it->next()) {
      ParsedInternalKey p;
      REQUIRE(parse_internal_key(it->key(), &p));
      if (p.sequence > snap) continue;
      if (have_last && p.user_key == last) continue;
      last.assign(p.user_key.data(), p.user_key.size());
      have_last = true;
      if (p.kind == ValueKind::Value) got.emplace_back(last, std::string(it->value()));
    }
    REQUIRE(it->status().ok());
    std::vector<std::pair<std::string, std::string>> want;
    for (const auto& [k, versions] : model) {
      const ModelEntry* e = model_get(model, k, snap);
      if (e != nullptr && e->kind == ValueKind::Value) want.emplace_back(k, e->value);
    }
    REQUIRE(got == want);

    // Backward: the same internal entries in reverse.
    RawEntries fwd = scan_raw(it.get());
    RawEntries bwd;
    for (it->seek_last(); it->valid(); it->prev()) {
      ParsedInternalKey p;
      REQUIRE(parse_internal_key(it->key(), &p));
      bwd.emplace_back(std::string(p.user_key), p.sequence, p.kind);
    }
    REQUIRE(it->status().ok());
    std::reverse(bwd.begin(), bwd.end());
    REQUIRE(fwd == bwd);
  }

  RawEntries all_entries() {
    std::vector<std::unique_ptr<InternalIterator>> children;
    vset->current()->add_iterators(TableReadOptions(), &children);
    auto it = new_merging_iterator(std::move(children));
    return scan_raw(it.get());
  }

  RawEntries table_entries(uint64_t number) {
    FileMetaData f;
    f.number = number;
    auto t = tables->get(f);
    REQUIRE(t.ok());
    auto it = (*t)->new_iterator();
    return scan_raw(it.get());
  }
};

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", i);
  return buf;
}

}  // namespace

TEST_CASE("flushes and compactions agree with a model", "[compaction]") {
  const uint32_t seed = GENERATE(1u, 2u, 3u);
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  Fixture f;
  for (int round = 0; round < 14; ++round) {
    std::vector<Write> writes;
    std::set<std::string> seen;
    for (int i = 0; i < 120; ++i) {
      std::string k = key_of(static_cast<int>(rng() % 400));
      if (!seen.insert(k).second) continue;  // one version per key per memtable batch
      bool del = rng() % 4 == 0;
      writes.push_back(
          {k, del ? ValueKind::Delete : ValueKind::Value,
           del ? "" : "v" + std::to_string(round) + "-" + std::string(rng() % 40, 'x')});
    }
    f.flush(writes);
    if (rng() % 3 == 0) f.snapshots.push_back(f.seq);
    if (f.snapshots.size() > 2 && rng() % 2 == 0) {
      f.snapshots.erase(f.snapshots.begin() + static_cast<long>(rng() % f.snapshots.size()));
    }
    f.compact_auto();
    f.check_shape();
    f.check_reads(f.seq, {"absent", "zzz"});
    for (SequenceNumber s : f.snapshots) f.check_reads(s);
    f.check_scan(f.seq);
  }
  REQUIRE(f.vset->current()->total_files() > 0);
  int deep = 0;
  for (int level = 1; level < f.vset->level_count(); ++level)
    deep += f.vset->num_level_files(level);
  REQUIRE(deep > 0);

  // With every snapshot released, compacting everything leaves one live version per key and no
  // tombstones.
  f.snapshots.clear();
  f.compact_all();
  f.check_reads(f.seq);
  f.check_scan(f.seq);
  RawEntries all = f.all_entries();
  size_t live = 0;
  for (const auto& [k, versions] : f.model) {
    if (model_get(f.model, k, f.seq)->kind == ValueKind::Value) ++live;
  }
  REQUIRE(all.size() == live);
  for (const auto& e : all) REQUIRE(std::get<2>(e) == ValueKind::Value);
  auto v = f.vset->current();
  int nonempty = 0;
  for (int level = 0; level < v->level_count(); ++level) nonempty += v->num_files(level) > 0;
  REQUIRE(nonempty == 1);
  REQUIRE(v->num_files(0) == 0);
}

TEST_CASE("garbage collection keeps exactly the versions some snapshot sees", "[compaction]") {
  const uint32_t seed = GENERATE(11u, 12u, 13u, 14u);
  const bool bottommost = GENERATE(true, false);
  INFO("seed " << seed << " bottommost " << bottommost);
  std::mt19937 rng(seed);
  Fixture f;

  // 40 keys with 1..6 versions each, interleaved in sequence order.
  MemTable mem;
  std::vector<std::string> pending;
  for (int k = 0; k < 40; ++k) {
    int n = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) pending.push_back(key_of(k));
  }
  std::shuffle(pending.begin(), pending.end(), rng);
  for (const auto& k : pending) {
    ++f.seq;
    bool del = rng() % 3 == 0;
    ValueKind kind = del ? ValueKind::Delete : ValueKind::Value;
    std::string value = del ? "" : "v" + std::to_string(f.seq);
    mem.add(f.seq, kind, k, value, f.seq);
    f.model[k][f.seq] = ModelEntry{kind, value};
  }
  const int nsnap = static_cast<int>(rng() % 4);
  for (int i = 0; i < nsnap; ++i) f.snapshots.push_back(1 + rng() % f.seq);
  std::sort(f.snapshots.begin(), f.snapshots.end());
  INFO("snapshots " << f.snapshots.size());

  // "Deeper" data: a file covering every key one level below (metadata only).
  FileMetaData cover;
  cover.number = 999999;
  cover.file_size = 1;
  cover.smallest = make_internal_key("", 0, ValueKind::Value, 0);
  cover.largest = make_internal_key("~", 0, ValueKind::Value, 0);
  cover.num_entries = 1;
  Version deeper(nullptr, {{}, {std::make_shared<const FileMetaData>(cover)}});

  auto it = mem.new_iterator();
  SortedRunOutput out;
  REQUIRE(write_sorted_run(it.get(), f.ctx(), bottommost ? nullptr : &deeper, 1, UINT64_MAX, &out)
              .ok());

  // Expected: the union over readers (each snapshot and "latest") of the version each sees,
  // minus, at the bottom, the tombstones the oldest reader sees.
  std::set<std::pair<std::string, SequenceNumber>> want;
  std::vector<SequenceNumber> readers = f.snapshots;
  readers.push_back(kMaxSequenceNumber);
  for (const auto& [k, versions] : f.model) {
    for (size_t r = 0; r < readers.size(); ++r) {
      SequenceNumber s = 0;
      const ModelEntry* e = model_get(f.model, k, readers[r], &s);
      if (e == nullptr) continue;
      // At the bottom, a tombstone the oldest reader already sees is dropped for every reader
      // that sees it: with nothing below, "deleted" and "absent" read the same.
      if (bottommost && e->kind == ValueKind::Delete && s <= readers[0]) continue;
      want.emplace(k, s);
    }
  }
  std::set<std::pair<std::string, SequenceNumber>> got;
  for (const auto& meta : out.files) {
    for (const auto& [k, s, kind] : f.table_entries(meta.number)) got.emplace(k, s);
  }
  REQUIRE(got == want);
  REQUIRE(out.entries_read == pending.size());
  REQUIRE(out.entries_dropped == pending.size() - want.size());
  REQUIRE(out.files.size() == 1);

  // And every reader still reads what it read before.
  VersionEdit e;
  for (const auto& meta : out.files) e.add_file(0, meta);
  f.vset->set_last_sequence(f.seq);
  REQUIRE(f.vset->log_and_apply(&e).ok());
  for (SequenceNumber s : readers) f.check_reads(std::min(s, f.seq));
}

TEST_CASE("tombstones are dropped only where nothing lies below", "[compaction]") {
  Fixture f([](Options* o) { o->l0_compaction_trigger = 1; });
  // Old data in L2.
  FileMetaData old = f.flush({{"k", ValueKind::Value, "old"}, {"other", ValueKind::Value, "x"}}, 2);
  REQUIRE(old.num_entries == 2);
  // A tombstone for "k" arrives in L0: L2 covers "k", so the flush keeps it.
  FileMetaData tomb = f.flush({{"k", ValueKind::Delete, ""}});
  REQUIRE(tomb.num_entries == 1);
  // A tombstone for a key nothing below holds is dropped at once.
  FileMetaData gone = f.flush({{"zzz", ValueKind::Delete, ""}});
  REQUIRE(gone.num_entries == 0);
  REQUIRE(gone.number == 0);

  // L0 -> L1 keeps the tombstone: L2 still has "k".
  auto c = pick_compaction(*f.vset);
  REQUIRE(c != nullptr);
  REQUIRE(c->level == 0);
  f.apply(*c);
  REQUIRE(f.vset->num_level_files(1) == 1);
  RawEntries l1 = f.table_entries(f.vset->current()->files(1)[0]->number);
  REQUIRE(l1.size() == 1);
  REQUIRE(std::get<2>(l1[0]) == ValueKind::Delete);
  f.check_reads(f.seq);
  Table::GetResult r;
  bool found = false;
  REQUIRE(f.vset->current()->get("k", f.seq, &r, &found).ok());
  REQUIRE(found);
  REQUIRE(r.kind == ValueKind::Delete);
  REQUIRE(f.vset->current()->get("k", 1, &r, &found).ok());  // the old snapshot view
  REQUIRE(found);
  REQUIRE(r.value == "old");

  // L1 -> L2 is the bottom for "k": the tombstone and the value it hides both go.
  f.compact_all();
  RawEntries all = f.all_entries();
  REQUIRE(all.size() == 1);
  REQUIRE(std::get<0>(all[0]) == "other");
  f.check_reads(f.seq);
}

TEST_CASE("tombstones weigh what they hide: they are compacted down and free the space",
          "[compaction]") {
  Fixture f;  // L1 holds 16 KiB, L2 64 KiB; L3 is the last level
  // 300 rows of 1,000 bytes in the last level.
  std::vector<Write> rows, tombstones;
  for (int k = 0; k < 300; ++k) {
    rows.push_back(
        {key_of(k), ValueKind::Value, std::string(1000, static_cast<char>('a' + k % 26))});
    tombstones.push_back({key_of(k), ValueKind::Delete, ""});
  }
  const FileMetaData data = f.flush(rows, 3);
  // Every row deleted: the tombstones land in L1, far below its 16 KiB target in bytes.
  const FileMetaData tomb = f.flush(tombstones, 1);
  REQUIRE(tomb.num_entries == 300);
  auto v = f.vset->current();
  REQUIRE(v->level_bytes(1) < f.options.level_base_bytes);
  // Counted at the tree's average entry (about half a row), they weigh what they hide.
  REQUIRE(v->compensated_bytes(1) >= 300 * 400);
  REQUIRE(v->compensated_bytes(3) == v->level_bytes(3));  // large entries count as they are
  REQUIRE(level_score(*v, f.options, 1) >= 1);
  auto c = pick_compaction(*f.vset);
  REQUIRE(c != nullptr);
  REQUIRE(c->level == 1);
  // Compacting until no level is over its target drops every row and every tombstone.
  f.compact_auto();
  CHECK(f.all_entries().empty());
  v = f.vset->current();
  uint64_t bytes = 0;
  for (int level = 0; level < v->level_count(); ++level) bytes += v->level_bytes(level);
  CHECK(bytes == 0);
  CHECK(data.file_size > 300 * 1000);
  f.check_reads(f.seq);
}

TEST_CASE("a level of ordinary entries is scored by its bytes", "[compaction]") {
  Fixture f;
  std::vector<Write> rows;
  for (int k = 0; k < 40; ++k) rows.push_back({key_of(k), ValueKind::Value, std::string(100, 'v')});
  f.flush(rows, 1);
  f.flush(rows, 2);
  auto v = f.vset->current();
  // Entries of one size: each table is at the average, so nothing is added.
  CHECK(v->compensated_bytes(1) <= v->level_bytes(1) + 1);
  CHECK(v->compensated_bytes(2) <= v->level_bytes(2) + 1);
  CHECK(level_score(*v, f.options, 1) < 1);
  CHECK(pick_compaction(*f.vset) == nullptr);
}

TEST_CASE("outputs split by size, never between versions of a key", "[compaction]") {
  Fixture f([](Options* o) {
    o->target_file_size = 2048;
    o->block_size = 256;
  });
  // Five flushes, each writing every key: five versions per key, spread over five L0 files.
  for (int round = 0; round < 5; ++round) {
    std::vector<Write> writes;
    for (int k = 0; k < 150; ++k) {
      writes.push_back(
          {key_of(k), ValueKind::Value, "round" + std::to_string(round) + std::string(30, 'v')});
    }
    f.flush(writes);
  }
  // A snapshot at every sequence number keeps every version.
  for (SequenceNumber s = 1; s <= f.seq; ++s) f.snapshots.push_back(s);
  auto c = pick_manual_all(*f.vset, 0);
  REQUIRE(c != nullptr);
  REQUIRE(c->inputs.size() == 5);
  SortedRunOutput out;
  f.apply(*c, &out);
  REQUIRE(out.entries_dropped == 0);
  REQUIRE(out.files.size() >= 5);
  uint64_t entries = 0;
  for (size_t i = 0; i < out.files.size(); ++i) {
    entries += out.files[i].num_entries;
    REQUIRE(out.files[i].num_entries % 5 == 0);  // whole keys only
    if (i + 1 < out.files.size()) REQUIRE(out.files[i].file_size >= 2048);
  }
  REQUIRE(entries == 750);
  auto v = f.vset->current();
  REQUIRE(v->num_files(0) == 0);
  REQUIRE(v->num_files(1) == static_cast<int>(out.files.size()));
  for (const auto& meta : v->files(1)) {
    RawEntries e = f.table_entries(meta->number);
    for (size_t i = 0; i < e.size(); i += 5) {
      for (size_t j = 1; j < 5; ++j) REQUIRE(std::get<0>(e[i + j]) == std::get<0>(e[i]));
    }
  }
  for (SequenceNumber s :
       {SequenceNumber{1}, SequenceNumber{150}, SequenceNumber{151}, SequenceNumber{600}, f.seq}) {
    f.check_reads(s);
  }
  f.check_scan(f.seq);
  f.check_scan(300);
}

TEST_CASE("a file that overlaps nothing below moves down without a rewrite, round robin",
          "[compaction]") {
  Fixture f([](Options* o) { o->level_base_bytes = 1; });
  std::vector<uint64_t> numbers;
  for (const char* k : {"a", "f", "m"}) {
    numbers.push_back(f.flush({{k, ValueKind::Value, "v"}}, 1).number);
  }
  const auto before = f.object_names();
  std::vector<uint64_t> moved;
  for (int i = 0; i < 3; ++i) {
    auto c = pick_compaction(*f.vset);
    REQUIRE(c != nullptr);
    REQUIRE(c->level == 1);
    REQUIRE(c->is_trivial_move());
    moved.push_back(c->inputs[0]->number);
    f.apply(*c);
  }
  REQUIRE(moved == numbers);            // each file in turn, by key
  REQUIRE(f.object_names() == before);  // nothing rewritten
  REQUIRE(f.vset->num_level_files(2) == 3);
  f.check_reads(f.seq);
}

TEST_CASE("a missing table is an error for reads, scans and compactions", "[compaction]") {
  Fixture f;
  FileMetaData a = f.flush({{"a", ValueKind::Value, "1"}, {"b", ValueKind::Value, "2"}});
  f.flush({{"c", ValueKind::Value, "3"}});
  REQUIRE(f.storage->objects().remove(table_file_name(a.number)).ok());
  f.tables->evict(a.number);

  Table::GetResult r;
  bool found = true;
  Status s = f.vset->current()->get("a", f.seq, &r, &found);
  REQUIRE(s.is_corruption());
  REQUIRE(s.message().find(table_file_name(a.number)) != std::string::npos);
  REQUIRE(!found);

  std::vector<std::unique_ptr<InternalIterator>> children;
  f.vset->current()->add_iterators(TableReadOptions(), &children);
  auto it = new_merging_iterator(std::move(children));
  it->seek_first();
  while (it->valid()) it->next();
  REQUIRE(!it->status().ok());

  const auto before = f.object_names();
  auto c = pick_manual_all(*f.vset, 0);
  REQUIRE(c != nullptr);
  VersionEdit e;
  REQUIRE(!run_compaction(*c, f.ctx(), &e).ok());
  REQUIRE(f.object_names() == before);  // no output left behind
}

TEST_CASE("point iterators take only the tables that may hold the key", "[compaction]") {
  Fixture f;
  f.flush({{"a", ValueKind::Value, "1"}, {"m", ValueKind::Value, "2"}});     // L0 [a, m]
  f.flush({{"b", ValueKind::Value, "3"}, {"z", ValueKind::Value, "4"}});     // L0 [b, z]
  f.flush({{"c", ValueKind::Value, "5"}}, 2);                                // L2 [c, c]
  f.flush({{"a", ValueKind::Delete, ""}, {"k", ValueKind::Value, "6"}}, 3);  // L3 [a, k]

  // "a": the two tables that hold it, and its two versions, newest first.
  std::vector<std::unique_ptr<InternalIterator>> children;
  REQUIRE(f.vset->current()->add_point_iterators("a", TableReadOptions(), &children).ok());
  CHECK(children.size() == 2);
  auto it = new_merging_iterator(std::move(children));
  RawEntries want{{"a", 1, ValueKind::Value}, {"a", 6, ValueKind::Delete}};
  RawEntries got;
  for (const auto& e : scan_raw(it.get())) {
    if (std::get<0>(e) == "a") got.push_back(e);
  }
  std::sort(got.begin(), got.end());
  CHECK(got == want);

  // Keys inside three tables' ranges that none of them holds: the filters leave out nearly
  // every table (at ten bits a key a false positive is about one in a hundred).
  size_t taken = 0;
  for (int i = 0; i < 100; ++i) {
    std::vector<std::unique_ptr<InternalIterator>> c;
    REQUIRE(f.vset->current()
                ->add_point_iterators("d" + std::to_string(i), TableReadOptions(), &c)
                .ok());
    taken += c.size();
  }
  CHECK(taken < 30);  // 300 without the filters

  // A table that cannot be opened is an error, for a key in its range only. An open table stays
  // pinned to its metadata, so the set is reopened first and the file removed before it is read.
  const uint64_t first_number = f.vset->current()->files(0).back()->number;  // oldest L0: [a, m]
  REQUIRE(extract_user_key(f.vset->current()->files(0).back()->smallest) == "a");
  f.vset.reset();
  f.tables = std::make_shared<TableCache>(f.storage.get(), f.cache, 8);
  f.vset = std::make_unique<VersionSet>(f.storage.get(), f.options, f.tables);
  REQUIRE(f.vset->recover().ok());
  REQUIRE(f.storage->objects().remove(table_file_name(first_number)).ok());
  children.clear();
  Status s = f.vset->current()->add_point_iterators("a", TableReadOptions(), &children);
  REQUIRE(s.is_corruption());
  CHECK(s.message().find(table_file_name(first_number)) != std::string::npos);
  children.clear();
  CHECK(f.vset->current()->add_point_iterators("y", TableReadOptions(), &children).ok());
}

TEST_CASE("a failed compaction removes its outputs", "[compaction]") {
  Fixture f([](Options* o) { o->target_file_size = 1024; });
  for (int round = 0; round < 3; ++round) {
    std::vector<Write> writes;
    for (int k = 0; k < 100; ++k) {
      writes.push_back(
          {key_of(k), ValueKind::Value, std::string(40, static_cast<char>('a' + round))});
    }
    f.flush(writes);
  }
  const auto before = f.object_names();
  const std::string shape = f.vset->current()->debug_string();

  SECTION("a table fails to finish") {
    f.platform.set_fault_policy(FaultPolicy{{FaultRule::nth_call(FaultOp::Sync, 3)}, 0});
  }
  SECTION("the directory sync fails") {
    f.platform.set_fault_policy(FaultPolicy{{FaultRule::nth_call(FaultOp::SyncDir, 1)}, 0});
  }
  auto c = pick_manual_all(*f.vset, 0);
  REQUIRE(c != nullptr);
  VersionEdit e;
  Status s = run_compaction(*c, f.ctx(), &e);
  REQUIRE(s.is_io_error());
  f.platform.clear_faults();
  REQUIRE(f.object_names() == before);
  REQUIRE(f.vset->current()->debug_string() == shape);

  // The same compaction succeeds afterwards.
  f.apply(*c);
  f.check_reads(f.seq);
}
