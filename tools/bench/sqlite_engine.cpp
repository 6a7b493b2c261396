// SQLite (Debian's libsqlite3-dev) in WAL mode: a table `kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT
// ROWID`, so rows are stored in key order like the other engines'. Each client thread has its own
// connection (opened with SQLITE_OPEN_NOMUTEX) and prepared statements. SQLite allows one writer
// at a time and waits for the write lock by sleeping (its busy handler), which with many clients
// measures the sleeps; so write transactions take a mutex in this process first, and run
// back to back. Readers never wait: WAL mode gives each one a snapshot. Page cache: SQLite's
// default per connection (2 MB).

#include <sqlite3.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "engine.h"

namespace skv::bench {
namespace {

class Connection {
 public:
  Connection(const std::string& path, bool sync, bool first) {
    int rc =
        sqlite3_open_v2(path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) fail("open", rc);
    sqlite3_busy_timeout(db_, 60000);
    exec("PRAGMA journal_mode=WAL");
    exec(sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    if (first) exec("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID");
    insert_ = prepare("INSERT INTO kv (k, v) VALUES (?1, ?2)");
    update_ = prepare("UPDATE kv SET v = ?2 WHERE k = ?1");
    select_ = prepare("SELECT v FROM kv WHERE k = ?1");
    delete_ = prepare("DELETE FROM kv WHERE k = ?1");
    count_ = prepare("SELECT COUNT(*) FROM kv");
    scan_keys_ = prepare("SELECT k FROM kv ORDER BY k LIMIT ?1 OFFSET ?2");
    scan_pairs_ = prepare("SELECT k, v FROM kv ORDER BY k LIMIT ?1 OFFSET ?2");
    begin_ = prepare("BEGIN");
    begin_write_ = prepare("BEGIN IMMEDIATE");
    commit_ = prepare("COMMIT");
  }
  ~Connection() {
    for (sqlite3_stmt* s : statements_) sqlite3_finalize(s);
    sqlite3_close_v2(db_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void exec(const char* sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
      std::string msg = std::string("sqlite ") + sql + ": " + (err ? err : sqlite3_errstr(rc));
      sqlite3_free(err);
      throw BenchError(msg);
    }
  }

  // Runs a statement that returns no rows (or whose rows are ignored).
  void run(sqlite3_stmt* s) {
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) fail("step", rc);
  }

  void bind(sqlite3_stmt* s, int i, std::string_view text) {
    int rc = sqlite3_bind_text(s, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    if (rc != SQLITE_OK) fail("bind", rc);
  }
  void bind_blob(sqlite3_stmt* s, int i, std::string_view blob) {
    int rc = sqlite3_bind_blob(s, i, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
    if (rc != SQLITE_OK) fail("bind", rc);
  }
  void bind_int(sqlite3_stmt* s, int i, uint64_t v) {
    const sqlite3_int64 x = v > INT64_MAX ? INT64_MAX : static_cast<sqlite3_int64>(v);
    int rc = sqlite3_bind_int64(s, i, x);
    if (rc != SQLITE_OK) fail("bind", rc);
  }

  void put(sqlite3_stmt* s, std::string_view key, std::string_view value) {
    bind(s, 1, key);
    bind_blob(s, 2, value);
    run(s);
  }
  void del(std::string_view key) {
    bind(delete_, 1, key);
    run(delete_);
  }
  bool get(std::string_view key) {
    bind(select_, 1, key);
    int rc = sqlite3_step(select_);
    bool found = false;
    if (rc == SQLITE_ROW) {
      found = sqlite3_column_bytes(select_, 0) >= 0;
      rc = sqlite3_step(select_);
    }
    sqlite3_reset(select_);
    if (rc != SQLITE_DONE) fail("select", rc);
    return found;
  }

  uint64_t count() {
    int rc = sqlite3_step(count_);
    uint64_t n = 0;
    if (rc == SQLITE_ROW) n = static_cast<uint64_t>(sqlite3_column_int64(count_, 0));
    sqlite3_reset(count_);
    if (rc != SQLITE_ROW) fail("count", rc);
    return n;
  }

  uint64_t scan(uint64_t skip, uint64_t limit, bool with_values, size_t& bytes) {
    sqlite3_stmt* s = with_values ? scan_pairs_ : scan_keys_;
    bind_int(s, 1, limit);
    bind_int(s, 2, skip);
    uint64_t n = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      bytes += static_cast<size_t>(sqlite3_column_bytes(s, 0));
      if (with_values) {
        const void* v = sqlite3_column_blob(s, 1);
        bytes += static_cast<size_t>(sqlite3_column_bytes(s, 1)) + (v != nullptr ? 1 : 0);
      }
      ++n;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) fail("scan", rc);
    return n;
  }

  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* update_ = nullptr;
  sqlite3_stmt* select_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
  sqlite3_stmt* count_ = nullptr;
  sqlite3_stmt* scan_keys_ = nullptr;
  sqlite3_stmt* scan_pairs_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* begin_write_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;

 private:
  [[noreturn]] void fail(const char* what, int rc) {
    throw BenchError(std::string("sqlite ") + what + ": " +
                     (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)));
  }

  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) fail(sql, rc);
    statements_.push_back(s);
    return s;
  }

  sqlite3* db_ = nullptr;
  std::vector<sqlite3_stmt*> statements_;
};

class SqliteEngine final : public Engine {
 public:
  std::string name() const override { return "SQLite"; }
  std::string durability() const override {
    return "WAL mode; on: synchronous=FULL (WAL fsync at every commit, one writer at a time); "
           "off: synchronous=NORMAL (no fsync at commit, only at checkpoints)";
  }

  void open(const EngineConfig& config) override {
    const std::string path = config.dir + "/bench.sqlite";
    connections_.clear();
    for (int i = 0; i < config.clients; ++i) {
      connections_.push_back(std::make_unique<Connection>(path, config.sync, i == 0));
    }
  }

  void close() override { connections_.clear(); }

  void create(int w, std::string_view key, std::string_view value) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(write_mu_);
    c.put(c.insert_, key, value);
  }
  void update(int w, std::string_view key, std::string_view value) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(write_mu_);
    c.put(c.update_, key, value);
  }
  bool read(int w, std::string_view key) override {
    return connections_[static_cast<size_t>(w)]->get(key);
  }
  void remove(int w, std::string_view key) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(write_mu_);
    c.del(key);
  }

  void create_batch(int w, const std::vector<Row>& rows) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(write_mu_);
    c.run(c.begin_write_);
    for (const Row& r : rows) c.put(c.insert_, r.first, r.second);
    c.run(c.commit_);
  }
  void update_batch(int w, const std::vector<Row>& rows) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(write_mu_);
    c.run(c.begin_write_);
    for (const Row& r : rows) c.put(c.update_, r.first, r.second);
    c.run(c.commit_);
  }
  size_t read_batch(int w, const std::vector<std::string>& keys) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    c.run(c.begin_);
    size_t found = 0;
    for (const std::string& k : keys) found += c.get(k) ? 1 : 0;
    c.run(c.commit_);
    return found;
  }
  void remove_batch(int w, const std::vector<std::string>& keys) override {
    Connection& c = *connections_[static_cast<size_t>(w)];
    std::lock_guard<std::mutex> lock(write_mu_);
    c.run(c.begin_write_);
    for (const std::string& k : keys) c.del(k);
    c.run(c.commit_);
  }

  uint64_t count_all(int w) override { return connections_[static_cast<size_t>(w)]->count(); }

  uint64_t scan(int w, uint64_t skip, uint64_t limit, bool with_values) override {
    size_t bytes = 0;
    uint64_t n = connections_[static_cast<size_t>(w)]->scan(skip, limit, with_values, bytes);
    sink_ += bytes;
    return n;
  }

 private:
  std::vector<std::unique_ptr<Connection>> connections_;
  std::mutex write_mu_;
  std::atomic<size_t> sink_{0};
};

}  // namespace

std::unique_ptr<Engine> make_sqlite_engine() { return std::make_unique<SqliteEngine>(); }

}  // namespace skv::bench
