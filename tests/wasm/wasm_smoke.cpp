// End-to-end smoke test of the public API on the in-memory platform, built natively and for
// wasm32 (run under node). It writes a few hundred keys in several transactions, reads them back,
// iterates forward and backward, deletes some, closes and reopens the tree, and checks every step
// against a std::map model. Background work (flushes) runs through the platform's executor, which
// this program drives with run_pending() as a single-threaded host would.
//
// Output: one "wasm smoke: <phase>: N passed, M failed" line per phase and a final total line;
// the first mismatches are printed to stderr. Exit status 0 only if nothing failed.

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skv/memory_platform.h"
#include "skv/skv.h"

namespace {

using Model = std::map<std::string, std::string>;

constexpr int kKeys = 400;
constexpr int kKeysPerTransaction = 50;

// Renders bytes for messages: printable ASCII as is, anything else as \xNN.
std::string printable(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

class Checker {
 public:
  void begin_phase(const char* name) {
    phase_ = name;
    phase_passed_ = 0;
    phase_failed_ = 0;
  }

  void end_phase() {
    std::printf("wasm smoke: %s: %d passed, %d failed\n", phase_.c_str(), phase_passed_,
                phase_failed_);
    std::fflush(stdout);
  }

  // Records one check; prints the first failures.
  bool check(bool ok, const std::string& what) {
    if (ok) {
      ++phase_passed_;
      ++passed_;
    } else {
      ++phase_failed_;
      ++failed_;
      if (failed_ <= 25) std::fprintf(stderr, "FAIL [%s] %s\n", phase_.c_str(), what.c_str());
    }
    return ok;
  }

  bool check_ok(const skv::Status& s, const std::string& what) {
    return check(s.ok(), what + ": " + s.to_string());
  }

  int passed() const { return passed_; }
  int failed() const { return failed_; }

 private:
  std::string phase_;
  int phase_passed_ = 0;
  int phase_failed_ = 0;
  int passed_ = 0;
  int failed_ = 0;
};

// Runs queued background tasks until none is left.
void drain(skv::Executor& executor) {
  while (executor.run_pending(64) > 0) {
  }
}

// Waits for `future` the way a single-threaded host does: by running queued tasks. Returns
// nullopt if the queue runs dry while the future is still pending (it would never complete).
template <typename T>
std::optional<T> await(skv::Executor& executor, const skv::Future<T>& future) {
  while (!future.ready()) {
    if (executor.run_pending(16) == 0) {
      if (!executor.concurrent()) return std::nullopt;
      return future.get();
    }
  }
  drain(executor);
  return future.get();
}

std::string key_of(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key:%05d", i);
  return buf;
}

std::string value_of(int i, int round) {
  std::string v = "value-" + std::to_string(i) + "-round-" + std::to_string(round);
  if (i % 7 == 0) v += std::string(700 + i, static_cast<char>('a' + i % 26));  // a few larger
  return v;
}

// A key with bytes outside ASCII (a zero byte and 0xff), to check byte-wise ordering.
std::string binary_key(int i) {
  std::string k = "bin:";
  k.push_back('\0');
  k.push_back(static_cast<char>(0xff));
  k.push_back(static_cast<char>(0x80 + i));
  return k;
}

class Smoke {
 public:
  Smoke() : platform_(std::make_shared<skv::MemoryPlatform>()) {}

  int run() {
    phase_open();
    if (tree_) {
      phase_write();
      phase_conflict();
      phase_verify("read");
      phase_flush();
      phase_delete();
      phase_reopen();
      phase_close();
    }
    std::printf("wasm smoke: %d passed, %d failed\n", checker_.passed(), checker_.failed());
    return checker_.failed() == 0 ? 0 : 1;
  }

 private:
  skv::Executor& executor() { return platform_->executor(); }

  bool open() {
    skv::Result<skv::Tree> tree = skv::TreeBuilder()
                                      .with_path("smoke")
                                      .with_platform(platform_)
                                      .with_memtable_size(32 * 1024)
                                      .build();
    if (!checker_.check_ok(tree.status(), "TreeBuilder::build")) return false;
    tree_.emplace(std::move(tree).value());
    return true;
  }

  std::optional<skv::Transaction> begin(skv::Mode mode = skv::Mode::ReadWrite) {
    skv::Result<skv::Transaction> tx = tree_->begin_with_mode(mode);
    if (!checker_.check_ok(tx.status(), "begin")) return std::nullopt;
    return std::move(tx).value();
  }

  // Commits `tx`, drives the executor until the commit completes and returns its status.
  skv::Status commit(skv::Transaction& tx) {
    std::optional<skv::Status> s = await(executor(), tx.commit());
    if (!s) return skv::Status::io_error("commit never completed (executor ran dry)");
    return *s;
  }

  void phase_open() {
    checker_.begin_phase("open");
    open();
    checker_.end_phase();
  }

  void phase_write() {
    checker_.begin_phase("write");
    for (int first = 0; first < kKeys; first += kKeysPerTransaction) {
      auto tx = begin();
      if (!tx) break;
      if (first % 100 == 0) tx->set_durability(skv::Durability::Immediate);
      for (int i = first; i < first + kKeysPerTransaction; ++i) {
        checker_.check_ok(tx->set(key_of(i), value_of(i, 0)), "set " + key_of(i));
      }
      // Read-your-own-writes before commit.
      auto own = tx->get(key_of(first));
      checker_.check(own.ok() && own->has_value() && **own == value_of(first, 0),
                     "own write visible before commit");
      if (checker_.check_ok(commit(*tx), "commit")) {
        for (int i = first; i < first + kKeysPerTransaction; ++i)
          model_[key_of(i)] = value_of(i, 0);
      }
      drain(executor());
    }

    // Overwrites plus binary keys in one transaction.
    if (auto tx = begin()) {
      for (int i = 0; i < kKeys; i += 5) {
        checker_.check_ok(tx->set(key_of(i), value_of(i, 1)), "overwrite " + key_of(i));
      }
      for (int i = 0; i < 8; ++i) {
        checker_.check_ok(tx->set(binary_key(i), "binary-" + std::to_string(i)), "set binary");
      }
      if (checker_.check_ok(commit(*tx), "commit overwrites")) {
        for (int i = 0; i < kKeys; i += 5) model_[key_of(i)] = value_of(i, 1);
        for (int i = 0; i < 8; ++i) model_[binary_key(i)] = "binary-" + std::to_string(i);
      }
    }

    // A rolled-back transaction leaves no trace.
    if (auto tx = begin()) {
      checker_.check_ok(tx->set("rolled-back", "x"), "set before rollback");
      checker_.check_ok(tx->rollback(), "rollback");
      checker_.check(tx->set("after", "x").code() == skv::Code::Closed,
                     "set after rollback returns Closed");
    }
    // Invalid input is refused.
    if (auto tx = begin()) {
      checker_.check(tx->set("", "x").code() == skv::Code::InvalidArgument,
                     "empty key is InvalidArgument");
      checker_.check_ok(tx->rollback(), "rollback");
    }
    checker_.end_phase();
  }

  void phase_conflict() {
    checker_.begin_phase("conflict");
    auto a = begin();
    auto b = begin();
    if (a && b) {
      checker_.check_ok(a->set("contended", "a"), "set a");
      checker_.check_ok(b->set("contended", "b"), "set b");
      if (checker_.check_ok(commit(*a), "first committer")) model_["contended"] = "a";
      skv::Status s = commit(*b);
      checker_.check(s.code() == skv::Code::Conflict,
                     "second committer gets Conflict, got " + s.to_string());
    }
    // A read-only transaction refuses writes.
    if (auto ro = begin(skv::Mode::ReadOnly)) {
      checker_.check(ro->set("x", "y").code() == skv::Code::ReadOnly, "read-only refuses set");
    }
    checker_.end_phase();
  }

  // Checks one iteration direction over [start, end) against the model.
  void check_scan(const skv::Transaction& tx, const std::string& start, const std::string& end,
                  bool forward) {
    std::vector<std::pair<std::string, std::string>> expected;
    for (auto it = model_.lower_bound(start); it != model_.end(); ++it) {
      if (!end.empty() && it->first >= end) break;
      expected.emplace_back(it->first, it->second);
    }
    if (!forward) std::reverse(expected.begin(), expected.end());
    const std::string what = std::string(forward ? "forward" : "backward") + " scan [" +
                             printable(start) + ", " + printable(end) + ")";

    skv::Result<skv::Iterator> iter = tx.range(start, end);
    if (!checker_.check_ok(iter.status(), what + " range()")) return;
    skv::Iterator& it = *iter;
    checker_.check(forward ? it.seek_first() == it.valid() : it.seek_last() == it.valid(),
                   what + " seek returns valid()");
    checker_.check_ok(it.status(), what + " seek");
    size_t n = 0;
    bool order_ok = true;
    while (it.valid()) {
      if (n >= expected.size() || it.key() != expected[n].first) {
        order_ok = false;
        checker_.check(
            false, what + ": unexpected key " + printable(it.key()) + " at " + std::to_string(n));
        break;
      }
      skv::Result<std::string_view> v = it.value();
      if (!v.ok() || *v != expected[n].second) {
        order_ok = false;
        checker_.check(false, what + ": wrong value for " + printable(it.key()));
        break;
      }
      ++n;
      if (!(forward ? it.next() : it.prev())) break;
    }
    checker_.check_ok(it.status(), what + " status");
    checker_.check(order_ok, what + " order");
    checker_.check(n == expected.size(), what + " count " + std::to_string(n) + " expected " +
                                             std::to_string(expected.size()));
  }

  void verify_model() {
    auto tx = begin(skv::Mode::ReadOnly);
    if (!tx) return;
    int wrong = 0;
    for (const auto& [k, v] : model_) {
      auto got = tx->get(k);
      if (!got.ok() || !got->has_value() || **got != v) {
        ++wrong;
        checker_.check(false, "get " + printable(k) + ": " +
                                  (got.ok() ? (got->has_value() ? "wrong value" : "missing")
                                            : got.status().to_string()));
      }
    }
    checker_.check(wrong == 0, "every model key reads back");
    for (int i = kKeys; i < kKeys + 20; ++i) {
      auto got = tx->get(key_of(i));
      checker_.check(got.ok() && !got->has_value(), "absent key " + key_of(i));
    }
    auto rolled = tx->get("rolled-back");
    checker_.check(rolled.ok() && !rolled->has_value(), "rolled-back key absent");

    check_scan(*tx, "", "", true);
    check_scan(*tx, "", "", false);
    check_scan(*tx, key_of(100), key_of(200), true);
    check_scan(*tx, key_of(100), key_of(200), false);
    check_scan(*tx, "bin:", "bin;", true);
    check_scan(*tx, "bin:", "bin;", false);

    auto count = tx->count("", "");
    checker_.check(count.ok() && *count == model_.size(),
                   "count() " + (count.ok() ? std::to_string(*count) : count.status().to_string()) +
                       " expected " + std::to_string(model_.size()));

    // seek() lands on the first key >= target, then a keys-only iterator walks back.
    skv::Result<skv::Iterator> keys = tx->keys("", "");
    if (checker_.check_ok(keys.status(), "keys()")) {
      const std::string target = key_of(250) + "!";
      auto expect = model_.lower_bound(target);
      checker_.check(keys->seek(target) == keys->valid(), "seek returns valid()");
      checker_.check_ok(keys->status(), "seek");
      checker_.check(keys->valid() && expect != model_.end() && keys->key() == expect->first,
                     "seek lands on lower bound of " + target);
      checker_.check(!keys->value().ok(), "keys-only iterator refuses value()");
      if (keys->valid() && expect != model_.begin()) {
        checker_.check(keys->prev(), "prev after seek");
        checker_.check_ok(keys->status(), "prev after seek");
        checker_.check(keys->valid() && keys->key() == std::prev(expect)->first,
                       "prev after seek lands on the previous key");
      }
    }
  }

  void phase_verify(const char* name) {
    checker_.begin_phase(name);
    verify_model();
    checker_.end_phase();
  }

  void phase_flush() {
    checker_.begin_phase("flush");
    std::optional<skv::Status> s = await(executor(), tree_->flush());
    checker_.check(s.has_value(), "flush completes");
    if (s) checker_.check_ok(*s, "flush");
    skv::TreeStats stats = tree_->stats();
    checker_.check(stats.flushes >= 1, "stats count the flush");
    int files = 0;
    for (int level = 0; level < 16; ++level) files += stats.files_per_level[level];
    checker_.check(files >= 1, "at least one table after flush");
    verify_model();
    checker_.end_phase();
  }

  void phase_delete() {
    checker_.begin_phase("delete");
    if (auto tx = begin()) {
      for (int i = 0; i < kKeys; i += 3) checker_.check_ok(tx->del(key_of(i)), "del");
      checker_.check_ok(tx->del("never-written"), "del of a missing key");
      checker_.check_ok(tx->del(binary_key(0)), "del binary");
      auto gone = tx->get(key_of(3));
      checker_.check(gone.ok() && !gone->has_value(), "own delete visible before commit");
      if (checker_.check_ok(commit(*tx), "commit deletes")) {
        for (int i = 0; i < kKeys; i += 3) model_.erase(key_of(i));
        model_.erase(binary_key(0));
      }
    }
    // Delete then re-insert one key in a later transaction.
    if (auto tx = begin()) {
      checker_.check_ok(tx->set(key_of(3), "reborn"), "set after delete");
      if (checker_.check_ok(commit(*tx), "commit re-insert")) model_[key_of(3)] = "reborn";
    }
    verify_model();
    checker_.end_phase();
  }

  void phase_reopen() {
    checker_.begin_phase("reopen");
    checker_.check_ok(tree_->close(), "close");
    skv::Result<skv::Transaction> after = tree_->begin();
    checker_.check(!after.ok() && after.status().code() == skv::Code::Closed,
                   "begin after close returns Closed");
    tree_.reset();
    drain(executor());
    if (open()) verify_model();
    checker_.end_phase();
  }

  void phase_close() {
    checker_.begin_phase("close");
    if (tree_) {
      checker_.check_ok(tree_->close(), "close");
      checker_.check_ok(tree_->close(), "second close is a no-op");
    }
    checker_.end_phase();
  }

  std::shared_ptr<skv::MemoryPlatform> platform_;
  std::optional<skv::Tree> tree_;
  Model model_;
  Checker checker_;
};

}  // namespace

int main() {
  Smoke smoke;
  return smoke.run();
}
