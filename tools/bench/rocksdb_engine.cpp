// RocksDB (Debian's librocksdb-dev) as an OptimisticTransactionDB: every operation is a
// transaction, validated at commit like skv's. Tables: 64 KiB blocks, bloom filters of 10 bits
// per key, an LRU block cache of the same size as skv's, zstd level 1 (skv's codec and level).
// Memtables: RocksDB's defaults (64 MiB, two of them), like skv's; two background jobs, like
// skv's two executor threads. The "rocksdb-blob" variant stores values of at least
// EngineConfig::value_threshold bytes in integrated blob files (uncompressed, RocksDB's default)
// with blob garbage collection on at its default age cutoff (0.25).

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/optimistic_transaction_db.h>
#include <rocksdb/utilities/transaction.h>

#include <atomic>
#include <string>

#include "engine.h"

namespace skv::bench {
namespace {

void check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw BenchError(std::string("rocksdb ") + what + ": " + s.ToString());
}

class RocksDbEngine final : public Engine {
 public:
  explicit RocksDbEngine(bool blob_files) : blob_files_(blob_files) {}
  ~RocksDbEngine() override { delete db_; }

  std::string name() const override { return blob_files_ ? "RocksDB (blob files)" : "RocksDB"; }
  std::string durability() const override {
    return "on: WriteOptions.sync = true (WAL fsync per commit group); off: sync = false "
           "(WAL written, not synced)";
  }

  void open(const EngineConfig& config) override {
    rocksdb::BlockBasedTableOptions table;
    table.block_size = 16 * 1024;  // skv's default
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    table.block_cache = rocksdb::NewLRUCache(config.cache_bytes);
    rocksdb::Options options;
    options.create_if_missing = true;
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    options.compression = rocksdb::kZSTD;
    options.compression_opts.level = 1;
    options.max_background_jobs = 2;
    if (blob_files_) {
      options.enable_blob_files = true;
      options.min_blob_size = config.value_threshold;
      options.enable_blob_garbage_collection = true;
    }
    check(rocksdb::OptimisticTransactionDB::Open(options, config.dir, &db_), "open");
    write_.sync = config.sync;
    batch_txn_.set_snapshot = true;
  }

  bool background_idle() override {
    for (const char* property : {"rocksdb.mem-table-flush-pending", "rocksdb.num-running-flushes",
                                 "rocksdb.compaction-pending", "rocksdb.num-running-compactions"}) {
      uint64_t value = 0;
      if (!db_->GetIntProperty(property, &value)) {
        throw BenchError(std::string("rocksdb: no property ") + property);
      }
      if (value > 0) return false;
    }
    return true;
  }

  std::string shape() const override {
    std::string levels;
    for (int level = 0; level < db_->GetBaseDB()->NumberLevels(); ++level) {
      std::string files;
      if (!db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &files)) break;
      levels += (level ? "/" : "") + files;
    }
    return levels;
  }

  void close() override {
    if (db_ == nullptr) return;
    check(db_->GetBaseDB()->FlushWAL(true), "flush wal");
    delete db_;
    db_ = nullptr;
  }

  void create(int, std::string_view key, std::string_view value) override {
    commit_with([&](rocksdb::Transaction* t) { check(t->Put(slice(key), slice(value)), "put"); },
                single_txn_);
  }
  void update(int w, std::string_view key, std::string_view value) override {
    create(w, key, value);
  }

  bool read(int, std::string_view key) override {
    std::unique_ptr<rocksdb::Transaction> t(db_->BeginTransaction(write_, single_txn_));
    rocksdb::PinnableSlice value;
    rocksdb::Status s = t->Get(read_, db_->DefaultColumnFamily(), slice(key), &value);
    if (s.IsNotFound()) return false;
    check(s, "get");
    return true;
  }

  void remove(int, std::string_view key) override {
    commit_with([&](rocksdb::Transaction* t) { check(t->Delete(slice(key)), "delete"); },
                single_txn_);
  }

  void create_batch(int, const std::vector<Row>& rows) override {
    commit_with(
        [&](rocksdb::Transaction* t) {
          for (const Row& r : rows) check(t->Put(slice(r.first), slice(r.second)), "put");
        },
        batch_txn_);
  }
  void update_batch(int w, const std::vector<Row>& rows) override { create_batch(w, rows); }

  size_t read_batch(int, const std::vector<std::string>& keys) override {
    std::unique_ptr<rocksdb::Transaction> t(db_->BeginTransaction(write_, batch_txn_));
    rocksdb::ReadOptions ro = read_;
    ro.snapshot = t->GetSnapshot();
    size_t found = 0;
    rocksdb::PinnableSlice value;
    for (const std::string& k : keys) {
      value.Reset();
      rocksdb::Status s = t->Get(ro, db_->DefaultColumnFamily(), k, &value);
      if (s.IsNotFound()) continue;
      check(s, "get");
      ++found;
    }
    return found;
  }

  void remove_batch(int, const std::vector<std::string>& keys) override {
    commit_with(
        [&](rocksdb::Transaction* t) {
          for (const std::string& k : keys) check(t->Delete(k), "delete");
        },
        batch_txn_);
  }

  // A manual compaction of the whole key range, the last level included; with blob files it
  // also relocates every live blob (forced blob GC with an age cutoff of 1.0), so that blob files
  // holding only garbage are deleted.
  void gc() override {
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForceOptimized;
    if (blob_files_) {
      options.blob_garbage_collection_policy = rocksdb::BlobGarbageCollectionPolicy::kForce;
      options.blob_garbage_collection_age_cutoff = 1.0;
    }
    check(db_->GetBaseDB()->CompactRange(options, nullptr, nullptr), "compact range");
  }

  uint64_t count_all(int w) override { return scan(w, 0, UINT64_MAX, false); }

  uint64_t scan(int, uint64_t skip, uint64_t limit, bool with_values) override {
    std::unique_ptr<rocksdb::Transaction> t(db_->BeginTransaction(write_, single_txn_));
    std::unique_ptr<rocksdb::Iterator> it(t->GetIterator(read_));
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
  static rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

  // Runs `body` in a new transaction and commits it, again if validation fails (Busy or
  // TryAgain: not expected, as no two operations touch one key).
  template <typename Body>
  void commit_with(Body&& body, const rocksdb::OptimisticTransactionOptions& options) {
    for (;;) {
      std::unique_ptr<rocksdb::Transaction> t(db_->BeginTransaction(write_, options));
      body(t.get());
      rocksdb::Status s = t->Commit();
      if (s.IsBusy() || s.IsTryAgain()) continue;
      check(s, "commit");
      return;
    }
  }

  const bool blob_files_;
  rocksdb::OptimisticTransactionDB* db_ = nullptr;
  rocksdb::WriteOptions write_;
  rocksdb::ReadOptions read_;
  rocksdb::OptimisticTransactionOptions single_txn_;
  rocksdb::OptimisticTransactionOptions batch_txn_;
  std::atomic<size_t> sink_{0};
};

}  // namespace

std::unique_ptr<Engine> make_rocksdb_engine(bool blob_files) {
  return std::make_unique<RocksDbEngine>(blob_files);
}

}  // namespace skv::bench
