// A fake CommitEnv for the commit pipeline's tests: its "tree" is a map of key -> newest committed
// sequence number, its WAL a list of groups, and every call is recorded. Tasks the pipeline
// schedules wait in a queue until run_scheduled().
//
// Thread safety: every CommitEnv method takes the env's mutex; the test reads the fields once the
// pipeline is quiet.

#ifndef SKV_TESTS_SUPPORT_FAKE_COMMIT_ENV_H_
#define SKV_TESTS_SUPPORT_FAKE_COMMIT_ENV_H_

#include <chrono>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commit/commit_pipeline.h"
#include "wal/write_batch.h"

namespace skv::testing {

class FakeEnv final : public commit::CommitEnv {
 public:
  Status write_error() override {
    std::lock_guard<std::mutex> l(mu);
    return sticky;
  }
  uint64_t now_nanos() override {
    std::lock_guard<std::mutex> l(mu);
    return clock;
  }
  Result<SequenceNumber> newest_sequence(std::string_view key, SequenceNumber) override {
    SequenceNumber newest = 0;
    {
      std::lock_guard<std::mutex> l(mu);
      ++lookups;
      if (!lookup_error.ok()) return lookup_error;
      auto it = committed.find(std::string(key));
      if (it != committed.end()) newest = it->second;
    }
    // Whatever lands from here on is news to the caller, as if it had looked a moment earlier.
    if (after_lookup) after_lookup(key);
    return newest;
  }
  Status make_room(bool force) override {
    std::lock_guard<std::mutex> l(mu);
    events.push_back(force ? "room!" : "room");
    return Status();
  }
  Status write_wal(const std::vector<std::string_view>& records, bool sync) override {
    if (wal_delay.count() > 0) std::this_thread::sleep_for(wal_delay);  // a slow disk
    std::lock_guard<std::mutex> l(mu);
    events.push_back("wal " + std::to_string(records.size()) + (sync ? " sync" : ""));
    group_sizes.push_back(records.size());
    if (!wal_error.ok()) return wal_error;
    for (auto r : records) wal.emplace_back(r);
    return Status();
  }
  void apply(std::string_view record) override {
    std::lock_guard<std::mutex> l(mu);
    const SequenceNumber seq = WriteBatch::sequence_of(record);
    applied.push_back(seq);
    WriteBatch::for_each(record,
                         [&](const WriteBatch::Entry& e) { committed[std::string(e.key)] = seq; });
  }
  void fail(const Status& s) override {
    std::lock_guard<std::mutex> l(mu);
    ++fails;
    if (sticky.ok()) sticky = s;
  }
  void schedule(std::function<void()> task) override {
    std::lock_guard<std::mutex> l(mu);
    tasks.push_back(std::move(task));
  }
  // Runs the scheduled tasks (the deferred leader); returns how many ran.
  int run_scheduled() {
    int n = 0;
    while (true) {
      std::function<void()> t;
      {
        std::lock_guard<std::mutex> l(mu);
        if (tasks.empty()) return n;
        t = std::move(tasks.front());
        tasks.pop_front();
      }
      t();
      ++n;
    }
  }

  std::mutex mu;
  Status sticky, wal_error, lookup_error;
  uint64_t clock = 1000;                   // what now_nanos() answers
  std::chrono::microseconds wal_delay{0};  // how long each write_wal() takes (set before use)
  // Runs after each newest_sequence() lookup, before it returns, with no lock held (set before
  // use).
  std::function<void(std::string_view key)> after_lookup;
  std::map<std::string, SequenceNumber> committed;
  std::vector<std::string> events;
  std::vector<size_t> group_sizes;
  std::vector<std::string> wal;
  std::vector<SequenceNumber> applied;
  std::deque<std::function<void()>> tasks;
  int fails = 0;
  int lookups = 0;  // newest_sequence() calls
};

inline WriteBatch batch_of(std::initializer_list<std::string> keys, size_t value_size = 1) {
  WriteBatch b;
  for (const auto& k : keys) b.put(k, std::string(value_size, 'v'), 1);
  return b;
}

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_FAKE_COMMIT_ENV_H_
