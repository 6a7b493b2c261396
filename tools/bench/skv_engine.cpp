// skv through its public API: one Tree shared by every client thread (a Tree is thread-safe, and
// concurrent commits share WAL writes and syncs: group commit). The "skv-vlog" variant turns on
// the value log for values of at least EngineConfig::value_threshold bytes; "skv-xchacha" and
// "skv-aes" seal every file (docs/encryption.md) under a fixed benchmark key.

#include <skv/skv.h>

#include <string>

#include "engine.h"

namespace skv::bench {
namespace {

void check(const Status& s, const char* what) {
  if (!s.ok()) throw BenchError(std::string("skv ") + what + ": " + s.to_string());
}

template <typename T>
T take(Result<T> r, const char* what) {
  if (!r.ok()) throw BenchError(std::string("skv ") + what + ": " + r.status().to_string());
  return std::move(r).value();
}

class SkvEngine final : public Engine {
 public:
  SkvEngine(bool value_log, std::optional<CipherSuite> cipher)
      : value_log_(value_log), cipher_(cipher) {}

  std::string name() const override {
    if (cipher_) return std::string("skv (") + cipher_name(*cipher_) + ")";
    return value_log_ ? "skv (value log)" : "skv";
  }
  std::string durability() const override {
    return "on: Durability::Immediate (the commit returns after the WAL fsync its group shares); "
           "off: Durability::Eventual (written to the WAL, not synced)";
  }

  void open(const EngineConfig& config) override {
    TreeBuilder builder;
    builder.with_path(config.dir)
        .with_block_cache_capacity(config.cache_bytes)
        .with_default_durability(config.sync ? Durability::Immediate : Durability::Eventual);
    if (value_log_) {
      builder.with_enable_vlog(true).with_vlog_value_threshold(config.value_threshold);
    }
    if (cipher_) {
      // A fixed key: the benchmark measures the cost of sealing, not key management.
      auto keys = take(SoftwareKeyManager::from_bytes(std::string(kRootKeySize, 'b')), "key");
      builder.with_encryption(std::move(keys), *cipher_);
    }
    tree_.emplace(take(builder.build(), "open"));
  }

  // compact_all() rewrites every level into the last non-empty one, dropping overwritten and
  // deleted versions; with the value log, collect_vlog_garbage() then rewrites or removes the
  // value logs whose garbage share reached the ratio (0.5, the default).
  void gc() override {
    check(tree_->compact_all(), "compact_all");
    if (value_log_) check(tree_->collect_vlog_garbage(), "collect_vlog_garbage");
  }

  bool background_idle() override {
    const TreeStats s = tree_->stats();
    return s.background_jobs == 0 && s.immutable_memtables == 0;
  }

  std::optional<CommitTotals> commit_totals() const override {
    const TreeStats s = tree_->stats();
    return CommitTotals{s.commits, s.wal_syncs};
  }

  std::string shape() const override {
    const TreeStats s = tree_->stats();
    std::string levels;
    for (int i = 0; i < s.level_count; ++i) {
      levels += (i ? "/" : "") + std::to_string(s.files_per_level[i]);
    }
    return levels;
  }

  std::string counters() const override {
    const TreeStats s = tree_->stats();
    const std::string levels = shape();
    return "commits " + std::to_string(s.commits) + " in " + std::to_string(s.commit_groups) +
           " WAL writes, " + std::to_string(s.wal_syncs) + " WAL syncs, " +
           std::to_string(s.flushes) + " flushes, " + std::to_string(s.compactions) +
           " compactions, " + std::to_string(s.stalls) + " stalled commits, files per level " +
           levels + ", block cache pool " + std::to_string(s.block_cache_pool_bytes >> 20) + " MiB";
  }

  void close() override {
    if (tree_) check(tree_->close(), "close");
    tree_.reset();
  }

  void create(int, std::string_view key, std::string_view value) override { put(key, value); }
  void update(int, std::string_view key, std::string_view value) override { put(key, value); }

  bool read(int, std::string_view key) override {
    Transaction tx = take(tree_->begin_with_mode(Mode::ReadOnly), "begin");
    std::optional<std::string> v = take(tx.get(key), "get");
    return v.has_value();
  }

  void remove(int, std::string_view key) override {
    retry([&](Transaction& tx) { check(tx.del(key), "del"); });
  }

  void create_batch(int, const std::vector<Row>& rows) override { put_batch(rows); }
  void update_batch(int, const std::vector<Row>& rows) override { put_batch(rows); }

  size_t read_batch(int, const std::vector<std::string>& keys) override {
    Transaction tx = take(tree_->begin_with_mode(Mode::ReadOnly), "begin");
    size_t found = 0;
    for (const std::string& k : keys) found += take(tx.get(k), "get").has_value() ? 1 : 0;
    return found;
  }

  void remove_batch(int, const std::vector<std::string>& keys) override {
    retry([&](Transaction& tx) {
      for (const std::string& k : keys) check(tx.del(k), "del");
    });
  }

  uint64_t count_all(int) override {
    Transaction tx = take(tree_->begin_with_mode(Mode::ReadOnly), "begin");
    return take(tx.count("", ""), "count");
  }

  uint64_t scan(int, uint64_t skip, uint64_t limit, bool with_values) override {
    Transaction tx = take(tree_->begin_with_mode(Mode::ReadOnly), "begin");
    Iterator it = take(with_values ? tx.range("", "") : tx.keys("", ""), "iterator");
    it.seek_first();
    for (uint64_t i = 0; i < skip && it.valid(); ++i) it.next();
    uint64_t n = 0;
    size_t bytes = 0;
    for (; n < limit && it.valid(); ++n) {
      bytes += it.key().size();
      if (with_values) bytes += take(it.value(), "value").size();
      it.next();
    }
    check(it.status(), "scan");
    sink_ += bytes;
    return n;
  }

 private:
  // Runs `body` in a fresh read-write transaction and commits it, again on a conflict (none is
  // expected: no two operations touch one key).
  template <typename Body>
  void retry(Body&& body) {
    for (;;) {
      Transaction tx = take(tree_->begin(), "begin");
      body(tx);
      Status s = tx.commit().wait();
      if (s.is_conflict()) continue;
      check(s, "commit");
      return;
    }
  }

  void put(std::string_view key, std::string_view value) {
    retry([&](Transaction& tx) { check(tx.set(key, value), "set"); });
  }

  void put_batch(const std::vector<Row>& rows) {
    retry([&](Transaction& tx) {
      for (const Row& r : rows) check(tx.set(r.first, r.second), "set");
    });
  }

  const bool value_log_;
  const std::optional<CipherSuite> cipher_;
  std::optional<Tree> tree_;
  // Keeps the compiler from dropping the reads of scanned bytes.
  std::atomic<size_t> sink_{0};
};

}  // namespace

std::unique_ptr<Engine> make_skv_engine(bool value_log, std::optional<CipherSuite> cipher) {
  return std::make_unique<SkvEngine>(value_log, cipher);
}

}  // namespace skv::bench
