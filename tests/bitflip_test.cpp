// skv-test-modules: util wal vlog memtable sstable version engine memory
// skv-test-label: crash
// Bit-flip sweep: a real database (tables on two levels, uncompressed and zstd, value logs holding
// the larger values, a WAL holding commits no table has yet, a manifest, CURRENT) is built on the
// in-memory platform, then damaged one byte at a time: for each file, bytes at many offsets are
// XORed with a mask. Each damaged copy is opened and read completely (forward and backward scans, a
// point read of every key, then the background work the open queued, then another scan). Every
// answer must be either exactly right or a Code::Corruption error whose message names the damaged
// file. Never a wrong value, never a wrong absence.
//
// No allowance for the WAL's last record: a crash cuts a write short or leaves whole sectors
// unwritten, it does not flip a bit inside a complete record, so such damage is corruption too
// (docs/wal.md). Damage the format does not read (none is expected) would be harmless and is
// accepted when every answer is right.
//
// Each trial works on a fresh copy of the original files (opening writes: it may truncate a torn
// WAL tail, start a WAL segment and a manifest, delete files), then flips one byte of the copy
// with MemoryPlatform::flip_byte (CURRENT, a pointer record, through Storage::write_pointer).
// Offsets: every byte of small files; for larger ones the 64-byte header, the last 96 bytes
// (table footer and properties, last log records) and a stride over the middle, plus random
// offsets from a fixed seed. A failure prints the file, offset and mask that replay it.
//
// The same sweep runs over an encrypted copy of the database (the same history, opened
// with_encryption under a fixed key): there every unit is sealed, so a flip inside one must fail
// its authentication and be reported as Corruption naming the file, a flip in a header's envelope
// (cipher, key id, salt, database id, key check value) a named error (Corruption, or Encryption
// such as WrongKey or UnknownKeyId, or NotSupported, naming the file), and still never a wrong
// value. Its offsets are sampled more sparsely to keep the suite's time reasonable.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "skv/encryption.h"
#include "support/tree_fixture.h"
#include "util/status_macros.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr const char* kPath = "db";
constexpr uint64_t kSeed = 0xb17f11b5;

// --- The commit history. Commit i writes commit/<i>, sets "last" to i and sets or deletes one of
// twenty "b/" keys, all derived from i, so the contents after commits 0..n-1 are model_after(n).

std::string commit_key(uint64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "commit/%06" PRIu64, id);
  return buf;
}

std::string commit_value(uint64_t id) {
  const uint64_t h = mix64(id);
  std::string v = "value-" + std::to_string(id) + "-";
  for (size_t i = 0, n = 10 + h % 140; i < n; ++i) {
    v.push_back(static_cast<char>('a' + (i * 7 + id) % 26));
  }
  return v;
}

std::string bucket_key(uint64_t id) { return "b/" + std::to_string((mix64(id) >> 16) % 20); }
bool bucket_deletes(uint64_t id) { return ((mix64(id) >> 32) % 5) == 0; }

Status write_commit(Transaction& tx, uint64_t id) {
  SKV_RETURN_IF_ERROR(tx.set(commit_key(id), commit_value(id)));
  SKV_RETURN_IF_ERROR(tx.set("last", std::to_string(id)));
  if (bucket_deletes(id)) return tx.del(bucket_key(id));
  return tx.set(bucket_key(id), std::to_string(id));
}

Model model_after(uint64_t n) {
  Model m;
  for (uint64_t id = 0; id < n; ++id) {
    m[commit_key(id)] = commit_value(id);
    m["last"] = std::to_string(id);
    if (bucket_deletes(id)) {
      m.erase(bucket_key(id));
    } else {
      m[bucket_key(id)] = std::to_string(id);
    }
  }
  return m;
}

// The key manager of the encrypted variant: one fixed key, id 1.
std::shared_ptr<KeyManager> fixed_keys() {
  static const std::shared_ptr<KeyManager> keys = [] {
    Result<std::shared_ptr<SoftwareKeyManager>> m = SoftwareKeyManager::from_hex(
        "00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210");
    REQUIRE(m.ok());
    return std::shared_ptr<KeyManager>(*m);
  }();
  return keys;
}

TreeBuilder builder(std::shared_ptr<Platform> p, Compression compression, bool encrypted) {
  TreeBuilder b;
  if (encrypted) b.with_encryption(fixed_keys());
  b.with_path(kPath)
      .with_platform(std::move(p))
      .with_memtable_size(48 * 1024)
      .with_block_size(512)
      .with_block_cache_capacity(64 * 1024)
      .with_target_file_size(64 * 1024)
      .with_level_base_bytes(64 * 1024)
      .with_level_count(4)
      .with_l0_compaction_trigger(2)
      .with_compression(compression)
      .with_compression_start_level(1)  // so the compactions into L1 compress too
      // Values of 96 bytes or more (about half of them) live in value logs.
      .with_enable_vlog(true)
      .with_vlog_value_threshold(96)
      .with_vlog_max_file_size(16 * 1024);
  return b;
}

// --- The original database. ----------------------------------------------------------------

struct StoredFile {
  std::string name;
  std::string bytes;
  bool is_object = false;
};

struct Snapshot {
  bool encrypted = false;  // written with_encryption(fixed_keys())
  std::vector<StoredFile> files;
  std::string current;
  uint64_t commits = 0;  // commits 0..commits-1 were made, the last ones only in the WAL
  Model model;           // model_after(commits)
  Model model_but_last;  // model_after(commits - 1)
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void commit_range(const Tree& tree, MemoryPlatform* p, uint64_t from, uint64_t to, Rng* rng) {
  for (uint64_t id = from; id < to; ++id) {
    Transaction tx = begin_or_fail(tree);
    require_ok(write_commit(tx, id));
    tx.set_durability(rng->one_in(3) ? Durability::Immediate : Durability::Eventual);
    require_ok(tx.commit().wait());
    if (p != nullptr && rng->one_in(8)) p->queue_executor()->run_all();
  }
}

// Builds the database once, in three sessions. Every commit spans the whole key range ("b/...",
// "commit/...", "last"), so any compaction into L1 rewrites all of it; the sessions are ordered
// so that both kinds of table survive:
//   1. zstd: commits, compacted into L1 (compaction outputs, zstd);
//   2. no compression, L0 compactions held off: flushes every 100 commits (L0, uncompressed);
//   3. zstd: a few commits flushed (L0, zstd), then commits left in the WAL only.
Snapshot* make_original(bool encrypted) {
  {
    auto p = std::make_shared<MemoryPlatform>();
    Rng rng(kSeed);
    const uint64_t first = 400, second = 800, third = 850, total = 890;
    auto flush = [&](const Tree& tree) {
      Future<Status> f = tree.flush();
      p->queue_executor()->run_all();
      require_ok(f.wait());
    };
    {
      Tree tree = open_or_fail(builder(p, Compression::Zstd, encrypted));
      commit_range(tree, p.get(), 0, first, &rng);
      p->queue_executor()->run_all();
      require_ok(tree.compact_all());
      require_ok(tree.close());
    }
    {
      Tree tree =
          open_or_fail(builder(p, Compression::None, encrypted).with_l0_compaction_trigger(8));
      p->queue_executor()->run_all();
      for (uint64_t id = first; id < second; id += 100) {
        commit_range(tree, nullptr, id, id + 100, &rng);
        flush(tree);
      }
      require_ok(tree.close());
    }
    {
      Tree tree =
          open_or_fail(builder(p, Compression::Zstd, encrypted).with_l0_compaction_trigger(8));
      p->queue_executor()->run_all();
      commit_range(tree, nullptr, second, third, &rng);
      flush(tree);
      commit_range(tree, nullptr, third, total, &rng);
      TreeStats st = tree.stats();
      // Tables on two levels; the last commits only in memory (and the WAL).
      CHECK(st.files_per_level[0] >= 4);
      CHECK(st.files_per_level[1] >= 1);
      CHECK(st.immutable_memtables == 0);
      CHECK(st.memtable_bytes > 0);
      require_ok(tree.close());
    }
    auto* s = new Snapshot;
    s->encrypted = encrypted;
    s->commits = total;
    s->model = model_after(total);
    s->model_but_last = model_after(total - 1);
    Result<std::vector<MemoryFileInfo>> files = p->list_files(kPath);
    REQUIRE(files.ok());
    for (const MemoryFileInfo& f : *files) {
      Result<std::string> bytes = p->read_file(kPath, f.name);
      REQUIRE(bytes.ok());
      s->files.push_back(StoredFile{f.name, *bytes, f.is_object});
    }
    Result<std::unique_ptr<Storage>> storage =
        p->open_storage(kPath, StorageOptions{.create_if_missing = false, .marker = {}});
    REQUIRE(storage.ok());
    Result<std::string> current = (*storage)->read_pointer("CURRENT");
    REQUIRE(current.ok());
    s->current = *current;
    return s;
  }
}

// The database the sweeps damage, plaintext or encrypted (built once each).
const Snapshot& original(bool encrypted = false) {
  static const Snapshot* plain = make_original(false);
  if (!encrypted) return *plain;
  static const Snapshot* sealed = make_original(true);
  return *sealed;
}

// A fresh platform holding a copy of the original files.
std::shared_ptr<MemoryPlatform> restore(const Snapshot& snap) {
  auto p = std::make_shared<MemoryPlatform>();
  Result<std::unique_ptr<Storage>> storage = p->open_storage(kPath, StorageOptions{});
  REQUIRE(storage.ok());
  for (const StoredFile& f : snap.files) {
    if (f.is_object) {
      auto w = (*storage)->objects().create(f.name);
      REQUIRE(w.ok());
      require_ok((*w)->append(f.bytes));
      require_ok((*w)->finish());
    } else {
      auto w = (*storage)->logs().create(f.name);
      REQUIRE(w.ok());
      if (!f.bytes.empty()) require_ok((*w)->append(f.bytes));
      require_ok((*w)->sync());
      require_ok((*w)->close());
    }
  }
  require_ok((*storage)->write_pointer("CURRENT", snap.current));
  require_ok((*storage)->sync_dir());
  return p;
}

// --- One trial: open a damaged copy and read everything. --------------------------------------

// The contents a trial may legitimately show, narrowed as answers come in.
struct Candidates {
  std::vector<const Model*> models;

  // Keeps the models that agree with `pred`; false if none does.
  template <typename Pred>
  bool narrow(Pred pred) {
    std::vector<const Model*> keep;
    for (const Model* m : models) {
      if (pred(*m)) keep.push_back(m);
    }
    if (keep.empty()) return false;
    models = std::move(keep);
    return true;
  }
};

struct Trial {
  std::string file;  // the damaged file, as messages must name it
  bool encrypted = false;
  // Other texts an error may name instead of `file`. In an encrypted database the manifest's
  // header is checked before CURRENT's MAC (so a wrong key is told by name), so a flipped
  // database id in CURRENT's seal line is reported by the manifest as naming another database,
  // and a seal line cut off by a flipped newline as a plaintext CURRENT (NotEncrypted).
  std::vector<std::string> also_named;
  uint64_t offset = 0;
  uint8_t mask = 0;
  std::vector<std::string> problems;
  bool lost_last = false;  // the answers matched only the history without its last commit
  int errors = 0;          // answers that were (acceptable) corruption errors
  bool opened = false;

  void problem(const std::string& what) { problems.push_back(what); }

  bool names_damage(const Status& s) const {
    if (s.message().find(file) != std::string::npos) return true;
    for (const std::string& n : also_named) {
      if (s.message().find(n) != std::string::npos) return true;
    }
    return false;
  }

  // An error answer: it must be Corruption naming the file (in an encrypted database, also an
  // Encryption error with its sub-kind, or NotSupported, naming the file: a flipped envelope).
  void check_error(const std::string& what, const Status& s) {
    ++errors;
    const bool named_encryption =
        encrypted &&
        ((s.code() == Code::Encryption && s.encryption_error() != EncryptionError::None) ||
         s.code() == Code::NotSupported);
    if (named_encryption) {
      if (!names_damage(s)) {
        problem(what + " reports an encryption error without naming " + file + ": " +
                s.to_string());
      }
    } else if (s.code() != Code::Corruption) {
      problem(what + " failed with a code other than corruption: " + s.to_string());
    } else if (!names_damage(s)) {
      problem(what + " reports corruption without naming " + file + ": " + s.to_string());
    }
  }
};

using Entries = std::vector<std::pair<std::string, std::string>>;

// Scans the whole tree; nullopt after an error (checked by the trial).
std::optional<Entries> scan(const Tree& tree, bool forward, Trial* t, const char* what) {
  Result<Transaction> tx = tree.begin_with_mode(Mode::ReadOnly);
  if (!tx.ok()) {
    t->check_error(std::string(what) + ": begin", tx.status());
    return std::nullopt;
  }
  Result<Iterator> it = tx->range("", "");
  if (!it.ok()) {
    t->check_error(std::string(what) + ": range", it.status());
    return std::nullopt;
  }
  Entries out;
  Status s;
  for (forward ? it->seek_first() : it->seek_last(); it->valid();
       forward ? it->next() : it->prev()) {
    Result<std::string_view> v = it->value();
    if (!v.ok()) {
      s = v.status();
      break;
    }
    out.emplace_back(std::string(it->key()), std::string(*v));
  }
  if (s.ok()) s = it->status();
  if (!s.ok()) {
    t->check_error(what, s);
    return std::nullopt;
  }
  if (!forward) std::reverse(out.begin(), out.end());
  return out;
}

bool same(const Entries& got, const Model& want) {
  if (got.size() != want.size()) return false;
  auto w = want.begin();
  for (const auto& kv : got) {
    if (kv.first != w->first || kv.second != w->second) return false;
    ++w;
  }
  return true;
}

void check_scan(const Tree& tree, bool forward, Trial* t, Candidates* c, const char* what) {
  std::optional<Entries> got = scan(tree, forward, t, what);
  if (!got) return;
  if (!c->narrow([&](const Model& m) { return same(*got, m); })) {
    t->problem(std::string(what) + " returned wrong contents (" + std::to_string(got->size()) +
               " keys)");
  }
}

void check_gets(const Tree& tree, const Snapshot& snap, Trial* t, Candidates* c) {
  Result<Transaction> tx = tree.begin_with_mode(Mode::ReadOnly);
  if (!tx.ok()) {
    t->check_error("begin", tx.status());
    return;
  }
  std::set<std::string> keys;
  for (const auto& kv : snap.model) keys.insert(kv.first);
  for (int b = 0; b < 20; ++b) keys.insert("b/" + std::to_string(b));
  for (uint64_t id = snap.commits; id < snap.commits + 3; ++id) keys.insert(commit_key(id));
  keys.insert("a");
  keys.insert("commit/");
  keys.insert("zzz");
  for (const std::string& key : keys) {
    Result<std::optional<std::string>> r = tx->get(key);
    if (!r.ok()) {
      t->check_error("get " + key, r.status());
      continue;
    }
    const std::optional<std::string>& got = *r;
    bool ok = c->narrow([&](const Model& m) {
      auto it = m.find(key);
      return got ? (it != m.end() && it->second == *got) : it == m.end();
    });
    if (!ok) {
      t->problem("get " + key + " returned " + (got ? "a wrong value" : "nothing") +
                 (got ? " (" + got->substr(0, 40) + ")" : ""));
    }
  }
}

// Opens the damaged copy on `p` and reads everything; records problems in `t`.
void read_everything(const std::shared_ptr<MemoryPlatform>& p, const Snapshot& snap,
                     bool may_lose_last, Trial* t) {
  Candidates c;
  c.models.push_back(&snap.model);
  if (may_lose_last) c.models.push_back(&snap.model_but_last);
  Result<Tree> opened = builder(p, Compression::Zstd, snap.encrypted).build();
  if (!opened.ok()) {
    t->check_error("open", opened.status());
    return;
  }
  t->opened = true;
  Tree tree = std::move(opened).value();
  check_scan(tree, true, t, &c, "forward scan");
  check_scan(tree, false, t, &c, "backward scan");
  check_gets(tree, snap, t, &c);
  // Background work the open queued (flushing the replayed WAL, compactions) reads the damaged
  // tables too: it must fail, not write wrong tables.
  p->queue_executor()->run_all(1000);
  check_scan(tree, true, t, &c, "scan after background work");
  (void)tree.close();
  t->lost_last = c.models.size() == 1 && c.models[0] == &snap.model_but_last;
}

struct Sweep {
  int trials = 0;
  int clean = 0;        // every answer right (for the whole history)
  int lost_last = 0;    // of those, right for the history without its last commit
  int errors_only = 0;  // at least one corruption error, no wrong answer
  int failed_open = 0;  // of those, the open itself reported the damage
  std::vector<std::string> failures;
};

void record(Sweep* sweep, const Trial& t) {
  ++sweep->trials;
  if (!t.problems.empty()) {
    char head[160];
    std::snprintf(head, sizeof(head), "%s offset %" PRIu64 " mask 0x%02x: ", t.file.c_str(),
                  t.offset, static_cast<unsigned>(t.mask));
    sweep->failures.push_back(
        head + t.problems.front() +
        (t.problems.size() > 1 ? " (+" + std::to_string(t.problems.size() - 1) + " more)" : ""));
  } else if (t.errors == 0) {
    ++sweep->clean;
    if (t.lost_last) ++sweep->lost_last;
  } else {
    ++sweep->errors_only;
    if (!t.opened) ++sweep->failed_open;
  }
}

uint8_t pick_mask(Rng* rng, int i) {
  static const uint8_t kMasks[] = {0x01, 0x80, 0xff, 0x10};
  if (i % 5 < 4) return kMasks[i % 5];
  return static_cast<uint8_t>(1 + rng->uniform(255));
}

// The offsets to damage in a file of `size` bytes: every byte up to `all_below`, else the head,
// the tail, a stride through the middle and `randoms` random offsets.
std::vector<uint64_t> offsets_for(uint64_t size, uint64_t all_below, uint64_t stride, int randoms,
                                  Rng* rng) {
  std::set<uint64_t> out;
  if (size <= all_below) {
    for (uint64_t o = 0; o < size; ++o) out.insert(o);
  } else {
    for (uint64_t o = 0; o < 64; ++o) out.insert(o);
    for (uint64_t o = size - 96; o < size; ++o) out.insert(o);
    for (uint64_t o = 64; o < size; o += stride) out.insert(o);
    for (int i = 0; i < randoms; ++i) out.insert(rng->uniform(size));
  }
  return {out.begin(), out.end()};
}

// Opens the damaged copy read-only and runs Tree::verify(): the damage must be found, by the open
// or in the report, and named as read_everything() requires; no other file may be reported.
void verify_finds(const std::shared_ptr<MemoryPlatform>& p, const Snapshot& snap, Trial* t) {
  Result<Tree> opened = builder(p, Compression::Zstd, snap.encrypted).with_read_only(true).build();
  if (!opened.ok()) {
    t->check_error("open", opened.status());
    return;
  }
  t->opened = true;
  Result<VerifyReport> report = opened->verify();
  (void)opened->close();
  if (!report.ok()) {
    t->problem("verify failed: " + report.status().to_string());
    return;
  }
  bool found = false;
  for (const VerifiedFile& f : report->files) {
    if (f.status.ok()) continue;
    if (f.name == t->file) {
      found = true;
      t->check_error("verify", f.status);
    } else {
      t->problem("verify reports undamaged " + f.name + ": " + f.status.to_string());
    }
  }
  if (!found) t->problem("verify reports no damage");
}

// What a trial does with the damaged copy: read_everything(), or verify_finds() when `verify`.
void sweep_offsets(const Snapshot& snap, const StoredFile& f, const std::vector<uint64_t>& offsets,
                   bool may_lose_last, Rng* rng, Sweep* sweep, bool verify = false) {
  for (uint64_t offset : offsets) {
    Trial t;
    t.file = f.name;
    t.encrypted = snap.encrypted;
    t.offset = offset;
    t.mask = pick_mask(rng, sweep->trials);
    std::shared_ptr<MemoryPlatform> p = restore(snap);
    require_ok(p->flip_byte(kPath, f.name, offset, t.mask));
    if (verify) {
      verify_finds(p, snap, &t);
    } else {
      read_everything(p, snap, may_lose_last, &t);
    }
    record(sweep, t);
  }
}

void sweep_files(const Snapshot& snap, const std::vector<const StoredFile*>& files,
                 uint64_t all_below, uint64_t stride, int randoms, bool may_lose_last, Sweep* sweep,
                 bool verify = false) {
  Rng rng(kSeed ^ files.size());
  for (const StoredFile* f : files) {
    sweep_offsets(snap, *f, offsets_for(f->bytes.size(), all_below, stride, randoms, &rng),
                  may_lose_last, &rng, sweep, verify);
  }
}

// Where the last record of a file in log framing (WAL, manifest) starts: records follow the
// 64-byte header, each `crc:fixed32 length:fixed32 payload` (docs/wal.md).
uint64_t last_record_offset(const std::string& bytes) {
  uint64_t at = 64, last = 64;
  while (at + 8 <= bytes.size()) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + at + 4);
    const uint64_t len = b[0] | b[1] << 8 | b[2] << 16 | uint64_t{b[3]} << 24;
    last = at;
    at += 8 + len;
  }
  REQUIRE(at == bytes.size());
  return last;
}

void report(const char* what, const Sweep& sweep) {
  std::printf(
      "bitflip %s: %d flips: %d read back right (%d of them without the last commit), %d "
      "reported as corruption (%d by the open), %zu wrong\n",
      what, sweep.trials, sweep.clean, sweep.lost_last, sweep.errors_only, sweep.failed_open,
      sweep.failures.size());
  for (size_t i = 0; i < sweep.failures.size() && i < 20; ++i) {
    UNSCOPED_INFO(sweep.failures[i]);
  }
  CHECK(sweep.failures.empty());
}

std::vector<const StoredFile*> files_where(bool (*pred)(const StoredFile&),
                                           const Snapshot& snap = original()) {
  std::vector<const StoredFile*> out;
  for (const StoredFile& f : snap.files) {
    if (pred(f)) out.push_back(&f);
  }
  return out;
}

bool is_table(const StoredFile& f) { return ends_with(f.name, ".sst"); }
bool is_wal(const StoredFile& f) { return ends_with(f.name, ".wal"); }
bool is_manifest(const StoredFile& f) { return f.name.rfind("MANIFEST-", 0) == 0; }
bool is_vlog(const StoredFile& f) { return ends_with(f.name, ".vlog"); }

// How densely a sweep samples: the plaintext database is swept as before, the encrypted one
// more sparsely (each unit is authenticated whole, so fewer offsets per unit say as much).
struct Density {
  uint64_t all_below = 512;    // every byte of smaller tables and value logs
  uint64_t stride = 61;        // tables and value logs: a stride through the middle
  int randoms = 40;            // ... and random offsets
  uint64_t wal_stride = 7;     // WAL segments
  int wal_randoms = 60;        //
  uint64_t manifest_step = 1;  // manifest: every n-th byte
  int current_masks = 5;       // CURRENT: masks per byte
};

constexpr Density kPlain{};
constexpr Density kSealed{128, 251, 8, 29, 16, 3, 2};

void sweep_tables(const Snapshot& snap, const Density& d, const char* what) {
  Sweep sweep;
  sweep_files(snap, files_where(is_table, snap), d.all_below, d.stride, d.randoms, false, &sweep);
  report(what, sweep);
}

// Tree::verify() over damaged tables and value logs: every flip is found and named (the sweeps
// above find every one by reading; verify must find them without the reads).
void sweep_verify(const Snapshot& snap, const Density& d, const char* what) {
  Sweep sweep;
  sweep_files(snap, files_where(is_table, snap), d.all_below, d.stride, d.randoms, false, &sweep,
              true);
  sweep_files(snap, files_where(is_vlog, snap), d.all_below, d.stride, d.randoms, false, &sweep,
              true);
  report(what, sweep);
  CHECK(sweep.clean == 0);  // verify_finds() records an undetected flip as a problem anyway
}

void sweep_vlogs(const Snapshot& snap, const Density& d, const char* what) {
  Sweep sweep;
  sweep_files(snap, files_where(is_vlog, snap), d.all_below, d.stride, d.randoms, false, &sweep);
  report(what, sweep);
}

// Damage inside the last record of the newest segment is corruption as well, never a torn write
// that silently drops an acknowledged commit.
void sweep_wal(const Snapshot& snap, const Density& d, const char* what) {
  Sweep sweep;
  std::vector<const StoredFile*> wals = files_where(is_wal, snap);
  Rng rng(kSeed);
  for (const StoredFile* f : wals) {
    const bool newest = f == wals.back();  // names sort by number
    const uint64_t tail = last_record_offset(f->bytes);
    std::vector<uint64_t> body, last;
    for (uint64_t o : offsets_for(f->bytes.size(), 512, d.wal_stride, d.wal_randoms, &rng)) {
      (newest && o >= tail ? last : body).push_back(o);
    }
    sweep_offsets(snap, *f, body, false, &rng, &sweep);
    sweep_offsets(snap, *f, last, false, &rng, &sweep);
  }
  report(what, sweep);
}

// The manifest's bytes before its last record (`last` false), or those of the last record.
void sweep_manifest(const Snapshot& snap, const Density& d, bool last, const char* what) {
  Sweep sweep;
  Rng rng(kSeed);
  for (const StoredFile* f : files_where(is_manifest, snap)) {
    const uint64_t tail = last_record_offset(f->bytes);
    std::vector<uint64_t> offsets;
    const uint64_t from = last ? tail : 0, to = last ? f->bytes.size() : tail;
    for (uint64_t o = from; o < to; o += d.manifest_step) offsets.push_back(o);
    sweep_offsets(snap, *f, offsets, false, &rng, &sweep);
  }
  report(what, sweep);
}

void sweep_current(const Snapshot& snap, const Density& d, const char* what) {
  Sweep sweep;
  Rng rng(kSeed);
  int i = 0;
  for (size_t offset = 0; offset < snap.current.size(); ++offset) {
    for (int m = 0; m < d.current_masks; ++m) {
      Trial t;
      t.file = "CURRENT";
      t.encrypted = snap.encrypted;
      if (snap.encrypted) t.also_named = {"MANIFEST-", "the database is not encrypted"};
      t.offset = offset;
      t.mask = pick_mask(&rng, i++);
      std::shared_ptr<MemoryPlatform> p = restore(snap);
      {
        Result<std::unique_ptr<Storage>> storage =
            p->open_storage(kPath, StorageOptions{.create_if_missing = false, .marker = {}});
        REQUIRE(storage.ok());
        Result<std::string> current = (*storage)->read_pointer("CURRENT");
        REQUIRE(current.ok());
        std::string damaged = *current;
        damaged[offset] = static_cast<char>(damaged[offset] ^ t.mask);
        require_ok((*storage)->write_pointer("CURRENT", damaged));
      }
      read_everything(p, snap, false, &t);
      record(&sweep, t);
    }
  }
  report(what, sweep);
}

// The shape both databases need (see the header comment); the undamaged copy reads back exactly.
void check_shape(const Snapshot& snap) {
  std::vector<const StoredFile*> tables = files_where(is_table, snap);
  std::vector<const StoredFile*> wals = files_where(is_wal, snap);
  CHECK(tables.size() >= 4);
  CHECK(files_where(is_manifest, snap).size() == 1);
  CHECK(files_where(is_vlog, snap).size() >= 2);
  // The last commits live only in the WAL.
  uint64_t wal_bytes = 0;
  for (const StoredFile* f : wals) wal_bytes += f->bytes.size();
  CHECK(wal_bytes > 1000);
  Trial t;
  t.file = "(none)";
  t.encrypted = snap.encrypted;
  read_everything(restore(snap), snap, false, &t);
  CHECK(t.opened);
  CHECK(t.errors == 0);
  CHECK(t.problems.empty());
  for (const StoredFile& f : snap.files) {
    std::printf("bitflip %s database: %s %zu bytes\n", snap.encrypted ? "encrypted" : "plaintext",
                f.name.c_str(), f.bytes.size());
  }
}

}  // namespace

TEST_CASE("the database the sweep damages has the shape it needs", "[bitflip]") {
  const Snapshot& snap = original();
  check_shape(snap);
  // Both kinds of table: some hold zstd frames (magic 28 b5 2f fd), some none.
  int zstd = 0;
  std::vector<const StoredFile*> tables = files_where(is_table);
  for (const StoredFile* f : tables) {
    if (f->bytes.find("\x28\xb5\x2f\xfd") != std::string::npos) ++zstd;
  }
  CHECK(zstd >= 1);
  CHECK(zstd < static_cast<int>(tables.size()));
  CHECK(snap.current.rfind("MANIFEST-", 0) == 0);
}

TEST_CASE("a flipped byte in a table is caught or harmless", "[bitflip]") {
  sweep_tables(original(), kPlain, "tables");
}

TEST_CASE("a flipped byte in a value log is caught or harmless", "[bitflip][vlog]") {
  sweep_vlogs(original(), kPlain, "value logs");
}

TEST_CASE("a flipped byte in a WAL segment is caught or harmless", "[bitflip]") {
  sweep_wal(original(), kPlain, "WAL");
}

TEST_CASE("a flipped byte in the manifest is caught or harmless", "[bitflip]") {
  // Every byte but those of the last record (next test case).
  sweep_manifest(original(), kPlain, false, "manifest");
}

// A damaged last manifest record must not pass for a torn write: the edit it holds had taken
// effect (a flush or compaction deletes what the edit made obsolete only after the manifest is
// synced), so dropping it would lose data silently.
TEST_CASE("a flipped byte in the manifest's last record is caught or harmless", "[bitflip]") {
  sweep_manifest(original(), kPlain, true, "manifest last record");
}

// The smallest form of the case above: one commit, one flush, one flipped byte.
TEST_CASE("a flipped byte in the last manifest record never loses a flushed commit silently",
          "[bitflip]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(builder(p, Compression::None, false));
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("k", "v"));
    tx.set_durability(Durability::Immediate);
    require_ok(tx.commit().wait());
    Future<Status> f = tree.flush();
    p->queue_executor()->run_all();
    require_ok(f.wait());
    require_ok(tree.close());
  }
  Result<std::vector<MemoryFileInfo>> files = p->list_files(kPath);
  REQUIRE(files.ok());
  std::string manifest;
  for (const MemoryFileInfo& f : *files) {
    if (f.name.rfind("MANIFEST-", 0) == 0) manifest = f.name;
  }
  Result<std::string> bytes = p->read_file(kPath, manifest);
  REQUIRE(bytes.ok());
  // A payload byte of the last record: the flush's edit (new table, log number).
  const uint64_t offset = last_record_offset(*bytes) + 8 + 2;
  INFO(manifest << " offset " << offset << " mask 0x01");
  require_ok(p->flip_byte(kPath, manifest, offset, 0x01));
  Result<Tree> t = builder(p, Compression::None, false).build();
  if (!t.ok()) {
    CHECK(t.status().code() == Code::Corruption);
    CHECK(t.status().message().find(manifest) != std::string::npos);
    return;
  }
  Transaction r = begin_or_fail(*t, Mode::ReadOnly);
  Result<std::optional<std::string>> g = r.get("k");
  if (!g.ok()) {
    CHECK(g.status().code() == Code::Corruption);
    return;
  }
  CHECK(*g == std::optional<std::string>("v"));
}

TEST_CASE("a flipped byte in CURRENT is caught or harmless", "[bitflip]") {
  sweep_current(original(), kPlain, "CURRENT");
}

TEST_CASE("verify finds every flipped byte of a table or value log and names the file",
          "[bitflip][verify]") {
  sweep_verify(original(), Density{.all_below = 256, .stride = 127, .randoms = 16},
               "verify tables and value logs");
  sweep_verify(original(true), Density{.all_below = 128, .stride = 509, .randoms = 8},
               "verify encrypted tables and value logs");
}

// --- The encrypted database: the same history, sealed under fixed_keys(). ---------------------

TEST_CASE("the encrypted database the sweep damages has the shape it needs",
          "[bitflip][encryption]") {
  const Snapshot& snap = original(true);
  check_shape(snap);
  // Sealed: no file shows a key or a value of the history.
  for (const StoredFile& f : snap.files) {
    INFO(f.name);
    CHECK(f.bytes.find("commit/") == std::string::npos);
    CHECK(f.bytes.find("value-") == std::string::npos);
  }
}

TEST_CASE("encrypted: a flipped byte in a table is caught or harmless", "[bitflip][encryption]") {
  sweep_tables(original(true), kSealed, "encrypted tables");
}

TEST_CASE("encrypted: a flipped byte in a value log is caught or harmless",
          "[bitflip][encryption][vlog]") {
  sweep_vlogs(original(true), kSealed, "encrypted value logs");
}

TEST_CASE("encrypted: a flipped byte in a WAL segment is caught or harmless",
          "[bitflip][encryption]") {
  sweep_wal(original(true), kSealed, "encrypted WAL");
}

TEST_CASE("encrypted: a flipped byte in the manifest is caught or harmless",
          "[bitflip][encryption]") {
  sweep_manifest(original(true), kSealed, false, "encrypted manifest");
  sweep_manifest(original(true), Density{.manifest_step = 1}, true,
                 "encrypted manifest last record");
}

TEST_CASE("encrypted: a flipped byte in CURRENT is caught or harmless", "[bitflip][encryption]") {
  sweep_current(original(true), kSealed, "encrypted CURRENT");
}
