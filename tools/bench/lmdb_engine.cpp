// LMDB (Debian's liblmdb-dev): one environment, one unnamed database. Write transactions are
// serialized by LMDB's writer lock (it has no group commit); read transactions run in parallel.
// LMDB has no block cache of its own: it reads through the memory map (the OS page cache).

#include <lmdb.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "engine.h"

namespace skv::bench {
namespace {

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS) throw BenchError(std::string("lmdb ") + what + ": " + mdb_strerror(rc));
}

MDB_val val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }

// An open transaction that is aborted unless committed.
class Txn {
 public:
  Txn(MDB_env* env, unsigned flags) { check(mdb_txn_begin(env, nullptr, flags, &txn_), "begin"); }
  ~Txn() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  MDB_txn* get() const { return txn_; }
  void commit() {
    MDB_txn* t = txn_;
    txn_ = nullptr;
    check(mdb_txn_commit(t), "commit");
  }

 private:
  MDB_txn* txn_ = nullptr;
};

class LmdbEngine final : public Engine {
 public:
  ~LmdbEngine() override {
    if (env_ != nullptr) mdb_env_close(env_);
  }

  std::string name() const override { return "LMDB"; }
  std::string durability() const override {
    return "on: default flags (fsync at every commit, one writer at a time); off: MDB_NOSYNC "
           "(no fsync at commit; the OS writes the pages back later)";
  }

  void open(const EngineConfig& config) override {
    check(mdb_env_create(&env_), "env create");
    // The map only reserves address space; the file grows as pages are written. Several times
    // the data size leaves room for the copy-on-write pages of concurrent readers.
    const uint64_t map = (uint64_t{1} << 30) +
                         config.expected_rows * 8 * std::max<uint64_t>(1024, config.max_value_size);
    check(mdb_env_set_mapsize(env_, map), "mapsize");
    check(mdb_env_set_maxreaders(env_, static_cast<unsigned>(config.clients) * 2 + 16),
          "maxreaders");
    unsigned flags = config.sync ? 0u : static_cast<unsigned>(MDB_NOSYNC);
    check(mdb_env_open(env_, config.dir.c_str(), flags, 0644), "open");
    Txn t(env_, 0);
    check(mdb_dbi_open(t.get(), nullptr, 0, &dbi_), "dbi open");
    t.commit();
  }

  void close() override {
    if (env_ == nullptr) return;
    check(mdb_env_sync(env_, 1), "sync");
    mdb_env_close(env_);
    env_ = nullptr;
  }

  void create(int, std::string_view key, std::string_view value) override {
    Txn t(env_, 0);
    put(t, key, value);
    t.commit();
  }
  void update(int w, std::string_view key, std::string_view value) override {
    create(w, key, value);
  }

  bool read(int, std::string_view key) override {
    Txn t(env_, MDB_RDONLY);
    return get(t, key);
  }

  void remove(int, std::string_view key) override {
    Txn t(env_, 0);
    del(t, key);
    t.commit();
  }

  void create_batch(int, const std::vector<Row>& rows) override {
    Txn t(env_, 0);
    for (const Row& r : rows) put(t, r.first, r.second);
    t.commit();
  }
  void update_batch(int w, const std::vector<Row>& rows) override { create_batch(w, rows); }

  size_t read_batch(int, const std::vector<std::string>& keys) override {
    Txn t(env_, MDB_RDONLY);
    size_t found = 0;
    for (const std::string& k : keys) found += get(t, k) ? 1 : 0;
    return found;
  }

  void remove_batch(int, const std::vector<std::string>& keys) override {
    Txn t(env_, 0);
    for (const std::string& k : keys) del(t, k);
    t.commit();
  }

  uint64_t count_all(int w) override { return scan(w, 0, UINT64_MAX, false); }

  uint64_t scan(int, uint64_t skip, uint64_t limit, bool with_values) override {
    Txn t(env_, MDB_RDONLY);
    MDB_cursor* cursor = nullptr;
    check(mdb_cursor_open(t.get(), dbi_, &cursor), "cursor");
    MDB_val k, v;
    int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
    for (uint64_t i = 0; i < skip && rc == MDB_SUCCESS; ++i) {
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
    }
    uint64_t n = 0;
    size_t bytes = 0;
    for (; n < limit && rc == MDB_SUCCESS; ++n) {
      bytes += k.mv_size;
      // A value is read by touching its bytes: LMDB hands out pointers into the map.
      if (with_values && v.mv_size > 0) {
        bytes += v.mv_size + static_cast<unsigned char>(static_cast<char*>(v.mv_data)[0]);
      }
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) check(rc, "scan");
    sink_ += bytes;
    return n;
  }

 private:
  void put(Txn& t, std::string_view key, std::string_view value) {
    MDB_val k = val(key), v = val(value);
    check(mdb_put(t.get(), dbi_, &k, &v, 0), "put");
  }

  bool get(Txn& t, std::string_view key) {
    MDB_val k = val(key), v;
    int rc = mdb_get(t.get(), dbi_, &k, &v);
    if (rc == MDB_NOTFOUND) return false;
    check(rc, "get");
    return true;
  }

  void del(Txn& t, std::string_view key) {
    MDB_val k = val(key);
    int rc = mdb_del(t.get(), dbi_, &k, nullptr);
    if (rc != MDB_NOTFOUND) check(rc, "del");
  }

  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  std::atomic<size_t> sink_{0};
};

}  // namespace

std::unique_ptr<Engine> make_lmdb_engine() { return std::make_unique<LmdbEngine>(); }

}  // namespace skv::bench
