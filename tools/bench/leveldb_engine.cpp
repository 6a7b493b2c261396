// LevelDB (Debian's libleveldb-dev). It has no transactions: a single-row write is one Put (its
// own atomic write), a batch write one WriteBatch, and a batch read runs on one snapshot.
// Concurrent writers are merged into one log write (LevelDB's own group commit). Tables: 64 KiB
// blocks, bloom filters of 10 bits per key, an LRU block cache of the same size as skv's, 64 MiB
// memtables like skv's; Snappy (the only codec this LevelDB has).

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/write_batch.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "engine.h"

namespace skv::bench {
namespace {

void check(const leveldb::Status& s, const char* what) {
  if (!s.ok()) throw BenchError(std::string("leveldb ") + what + ": " + s.ToString());
}

leveldb::Slice slice(std::string_view s) { return leveldb::Slice(s.data(), s.size()); }

class LevelDbEngine final : public Engine {
 public:
  ~LevelDbEngine() override { reset(); }

  std::string name() const override { return "LevelDB"; }
  std::string durability() const override {
    return "on: WriteOptions.sync = true (log fsync per write group); off: sync = false";
  }

  void open(const EngineConfig& config) override {
    cache_.reset(leveldb::NewLRUCache(config.cache_bytes));
    filter_.reset(leveldb::NewBloomFilterPolicy(10));
    leveldb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 20;
    options.block_size = 16 * 1024;  // skv's default
    options.block_cache = cache_.get();
    options.filter_policy = filter_.get();
    leveldb::DB* db = nullptr;
    check(leveldb::DB::Open(options, config.dir, &db), "open");
    db_.reset(db);
    write_.sync = config.sync;
  }

  void close() override { reset(); }

  void create(int, std::string_view key, std::string_view value) override {
    check(db_->Put(write_, slice(key), slice(value)), "put");
  }
  void update(int w, std::string_view key, std::string_view value) override {
    create(w, key, value);
  }

  bool read(int, std::string_view key) override {
    std::string value;
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), slice(key), &value);
    if (s.IsNotFound()) return false;
    check(s, "get");
    return true;
  }

  void remove(int, std::string_view key) override {
    check(db_->Delete(write_, slice(key)), "delete");
  }

  // LevelDB's manual compaction of the whole key range.
  void gc() override { db_->CompactRange(nullptr, nullptr); }

  void create_batch(int, const std::vector<Row>& rows) override {
    leveldb::WriteBatch batch;
    for (const Row& r : rows) batch.Put(r.first, r.second);
    check(db_->Write(write_, &batch), "write");
  }
  void update_batch(int w, const std::vector<Row>& rows) override { create_batch(w, rows); }

  size_t read_batch(int, const std::vector<std::string>& keys) override {
    leveldb::ReadOptions ro;
    ro.snapshot = db_->GetSnapshot();
    size_t found = 0;
    std::string value;
    for (const std::string& k : keys) {
      leveldb::Status s = db_->Get(ro, k, &value);
      if (s.IsNotFound()) continue;
      if (!s.ok()) {
        db_->ReleaseSnapshot(ro.snapshot);
        check(s, "get");
      }
      ++found;
    }
    db_->ReleaseSnapshot(ro.snapshot);
    return found;
  }

  void remove_batch(int, const std::vector<std::string>& keys) override {
    leveldb::WriteBatch batch;
    for (const std::string& k : keys) batch.Delete(k);
    check(db_->Write(write_, &batch), "write");
  }

  std::string shape() const override {
    std::string levels;
    for (int level = 0;; ++level) {  // the property is refused past the last level
      std::string files;
      if (!db_->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &files)) break;
      levels += (level ? "/" : "") + files;
    }
    return levels;
  }

  // LevelDB reports no running or pending work, so this is judged from outside: no level is at
  // the size where LevelDB compacts it (four L0 tables; 10 MiB at L1, ten times more per level
  // below), and neither the table listing nor the memory estimate has changed for two seconds of
  // polls (a memtable being written to L0 shows in neither until it is done).
  bool background_idle() override {
    std::string tables, memory;
    if (!db_->GetProperty("leveldb.sstables", &tables) ||
        !db_->GetProperty("leveldb.approximate-memory-usage", &memory)) {
      throw BenchError("leveldb: no sstables or approximate-memory-usage property");
    }
    const auto now = std::chrono::steady_clock::now();
    std::string state = tables + "\n" + memory;
    if (state != last_state_) {
      last_state_ = std::move(state);
      stable_since_ = now;
      return false;
    }
    return now - stable_since_ >= std::chrono::seconds(2) && !over_compaction_trigger(tables);
  }

  uint64_t count_all(int w) override { return scan(w, 0, UINT64_MAX, false); }

  uint64_t scan(int, uint64_t skip, uint64_t limit, bool with_values) override {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
    it->SeekToFirst();
    for (uint64_t i = 0; i < skip && it->Valid(); ++i) it->Next();
    uint64_t n = 0;
    size_t bytes = 0;
    for (; n < limit && it->Valid(); ++n) {
      bytes += it->key().size();
      if (with_values) bytes += it->value().size();
      it->Next();
    }
    check(it->status(), "scan");
    sink_ += bytes;
    return n;
  }

 private:
  // Whether a level of the listing ("--- level N ---" headers, then one " number:size[...]" line
  // per table) has reached the size at which LevelDB compacts it.
  static bool over_compaction_trigger(const std::string& listing) {
    std::vector<uint64_t> files, bytes;
    std::istringstream in(listing);
    std::string line;
    int level = -1;
    while (std::getline(in, line)) {
      int l = 0;
      uint64_t number = 0, size = 0;
      if (std::sscanf(line.c_str(), "--- level %d ---", &l) == 1) {
        level = l;
        if (files.size() <= static_cast<size_t>(level)) {
          files.resize(level + 1);
          bytes.resize(level + 1);
        }
      } else if (level >= 0 &&
                 std::sscanf(line.c_str(), " %" SCNu64 ":%" SCNu64, &number, &size) == 2) {
        ++files[level];
        bytes[level] += size;
      }
    }
    if (!files.empty() && files[0] >= 4) return true;
    double limit = 10.0 * 1048576.0;
    for (size_t l = 1; l + 1 < bytes.size(); ++l, limit *= 10) {  // the last level has no limit
      if (static_cast<double>(bytes[l]) > limit) return true;
    }
    return false;
  }

  void reset() {
    db_.reset();  // before the cache and filter it uses
    cache_.reset();
    filter_.reset();
  }

  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;
  leveldb::WriteOptions write_;
  std::atomic<size_t> sink_{0};
  std::string last_state_;  // background_idle()'s last look, and since when it has not changed
  std::chrono::steady_clock::time_point stable_since_;
};

}  // namespace

std::unique_ptr<Engine> make_leveldb_engine() { return std::make_unique<LevelDbEngine>(); }

}  // namespace skv::bench
