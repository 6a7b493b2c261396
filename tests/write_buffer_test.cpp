// skv-test-modules: util wal memtable txn
// The transaction write buffer (txn/write_buffer.h) against a model: random puts, deletes,
// savepoints, rollbacks, lookups, iterators held across later writes, and the memory limit
// (a small one here, so that reaching it is cheap). Failures print the seed that replays them.

#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "txn/write_buffer.h"
#include "util/random.h"

using namespace skv;

namespace {

struct ModelWrite {
  bool is_delete = false;
  std::string value;
  bool operator==(const ModelWrite& o) const {
    return is_delete == o.is_delete && value == o.value;
  }
};
using Model = std::map<std::string, ModelWrite>;

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t uniform(uint64_t n) { return splitmix64_next(&state_) % n; }

 private:
  uint64_t state_;
};

std::string key_of(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%06llu", static_cast<unsigned long long>(i));
  return buf;
}

std::string value_of(Rng& rng, size_t n) {
  std::string v(n, '\0');
  for (char& c : v) c = static_cast<char>('a' + rng.uniform(26));
  return v;
}

void require_ok(const Status& s) {
  INFO(s.to_string());
  REQUIRE(s.ok());
}

// What the model says an iterator over [lower, upper) must show.
std::vector<std::pair<std::string, ModelWrite>> expected(const Model& m, const std::string& lower,
                                                         const std::string& upper) {
  std::vector<std::pair<std::string, ModelWrite>> out;
  for (const auto& [k, w] : m) {
    if (!lower.empty() && k < lower) continue;
    if (!upper.empty() && k >= upper) continue;
    out.emplace_back(k, w);
  }
  return out;
}

void require_at(const UserIterator& it, const std::vector<std::pair<std::string, ModelWrite>>& want,
                size_t pos) {
  REQUIRE(it.status().ok());
  if (pos >= want.size()) {
    REQUIRE_FALSE(it.valid());
    return;
  }
  REQUIRE(it.valid());
  REQUIRE(it.key() == want[pos].first);
  REQUIRE(it.is_delete() == want[pos].second.is_delete);
  REQUIRE(it.value() == want[pos].second.value);
}

struct Held {
  std::unique_ptr<UserIterator> it;
  Model snapshot;
  std::string lower, upper;
};

// Full scans both ways, then random seeks and steps.
void check_iterator(Held& h, Rng& rng) {
  const auto want = expected(h.snapshot, h.lower, h.upper);
  UserIterator& it = *h.it;
  size_t pos = 0;
  for (it.seek_first(); it.valid(); it.next()) require_at(it, want, pos++);
  REQUIRE(pos == want.size());
  pos = want.size();
  for (it.seek_last(); it.valid(); it.prev()) require_at(it, want, --pos);
  REQUIRE(pos == 0);
  for (int round = 0; round < 8; ++round) {
    const std::string target = key_of(rng.uniform(60));
    it.seek(target);
    size_t at = 0;
    while (at < want.size() && want[at].first < target) ++at;
    require_at(it, want, at);
    for (int step = 0; step < 6 && at < want.size(); ++step) {
      if (rng.uniform(2) == 0) {
        it.next();
        ++at;
      } else {
        it.prev();
        at = at == 0 ? want.size() : at - 1;
      }
      require_at(it, want, at);
    }
  }
}

Model batch_contents(const WriteBuffer& b) {
  WriteBatch batch = b.to_batch();
  batch.set_commit_timestamp(777);
  Model out;
  WriteBatch::for_each(batch.encoded(), [&](const WriteBatch::Entry& e) {
    REQUIRE(e.timestamp == 777);
    REQUIRE(out.count(std::string(e.key)) == 0);
    out[std::string(e.key)] = ModelWrite{e.kind == ValueKind::Delete, std::string(e.value)};
  });
  return out;
}

}  // namespace

TEST_CASE("write buffer: random writes, savepoints and held iterators match the model",
          "[write_buffer]") {
  const uint64_t seed = GENERATE(1, 2, 3, 4);
  INFO("seed " << seed);
  Rng rng(seed);
  WriteBuffer buf;
  Model model;
  std::vector<Model> savepoints;
  std::vector<Held> held;
  for (int step = 0; step < 20000; ++step) {
    INFO("step " << step);
    const uint64_t op = rng.uniform(100);
    if (op < 45) {
      const std::string k = key_of(rng.uniform(50));
      const size_t n = rng.uniform(20) == 0 ? 1500 + rng.uniform(2000) : rng.uniform(120);
      const std::string v = value_of(rng, n);
      require_ok(buf.put(k, v, 0));
      model[k] = ModelWrite{false, v};
    } else if (op < 55) {
      const std::string k = key_of(rng.uniform(50));
      require_ok(buf.del(k, 0));
      model[k] = ModelWrite{true, ""};
    } else if (op < 60) {
      require_ok(buf.set_savepoint());
      savepoints.push_back(model);
    } else if (op < 66) {
      const bool had = !savepoints.empty();
      REQUIRE(buf.rollback_to_savepoint() == had);
      if (had) {
        model = std::move(savepoints.back());
        savepoints.pop_back();
      }
    } else if (op < 69) {
      Held h;
      if (rng.uniform(2) == 0) h.lower = key_of(rng.uniform(60));
      if (rng.uniform(2) == 0) h.upper = key_of(rng.uniform(60));
      h.it = buf.new_iterator(h.lower, h.upper);
      h.snapshot = model;
      held.push_back(std::move(h));
    } else if (op < 74 && !held.empty()) {
      check_iterator(held[rng.uniform(held.size())], rng);
    } else if (op < 79 && !held.empty()) {
      held.erase(held.begin() + static_cast<long>(rng.uniform(held.size())));
    } else if (op < 95) {
      const std::string k = key_of(rng.uniform(60));
      std::optional<BufferedWrite> got = buf.find(k);
      auto want = model.find(k);
      REQUIRE(got.has_value() == (want != model.end()));
      if (got) {
        CHECK(got->is_delete == want->second.is_delete);
        CHECK(got->value == want->second.value);
      }
    } else if (op < 99) {
      REQUIRE(batch_contents(buf) == model);
    } else if (rng.uniform(10) == 0) {
      buf.clear();
      model.clear();
      savepoints.clear();
    }
    REQUIRE(buf.size() == model.size());
    REQUIRE(buf.empty() == model.empty());
  }
  for (Held& h : held) check_iterator(h, rng);
  REQUIRE(batch_contents(buf) == model);
  // Overwrites made reclaimable versions, and some were dropped while no iterator was held.
  CHECK(buf.compactions() > 0);
}

TEST_CASE("write buffer: a write past the limit is refused, and the buffer stays usable",
          "[write_buffer]") {
  constexpr size_t kLimit = 1 << 20;
  WriteBuffer buf(kLimit);
  Rng rng(11);
  require_ok(buf.set_savepoint());
  size_t written = 0;
  Status refused;
  for (;; ++written) {
    Status s = buf.put(key_of(written), value_of(rng, 100), 0);
    REQUIRE(buf.memory_usage() <= kLimit);
    if (!s.ok()) {
      refused = s;
      break;
    }
  }
  CHECK(refused.code() == Code::InvalidArgument);
  CHECK(refused.message().find(std::to_string(kLimit)) != std::string::npos);
  // Each version costs its key and value and some overhead, and all of it counts.
  CHECK(written > kLimit / 200);
  CHECK(written < kLimit / 110);
  CHECK(buf.size() == written);
  CHECK(buf.del(key_of(written + 1), 0).code() == Code::InvalidArgument);
  CHECK(buf.size() == written);
  REQUIRE(buf.find(key_of(0)).has_value());
  REQUIRE(buf.find(key_of(written - 1)).has_value());
  CHECK_FALSE(buf.find(key_of(written)).has_value());

  // Rolling back makes everything reclaimable, and the next write compacts it away.
  REQUIRE(buf.rollback_to_savepoint());
  CHECK(buf.empty());
  require_ok(buf.put("again", "v", 0));
  CHECK(buf.compactions() == 1);
  CHECK(buf.memory_usage() < 64 * 1024);
  CHECK(buf.size() == 1);
  CHECK(buf.find("again")->value == "v");
}

TEST_CASE("write buffer: overwrites stay within the limit when nothing needs the old versions",
          "[write_buffer]") {
  constexpr size_t kLimit = 1 << 20;
  const bool with_savepoint = GENERATE(false, true);
  INFO("savepoint first " << with_savepoint);
  WriteBuffer buf(kLimit);
  Rng rng(12);
  for (int k = 0; k < 100; ++k) require_ok(buf.put(key_of(k), "original", 0));
  if (with_savepoint) require_ok(buf.set_savepoint());
  // 100,000 writes of 100 to 300 bytes: 20 MB through a 1 MiB buffer. A value that fits where
  // the old one was replaces it in place; a longer one adds a version and makes the old one
  // reclaimable.
  for (int i = 0; i < 100000; ++i) {
    require_ok(buf.put(key_of(rng.uniform(100)), value_of(rng, 100 + rng.uniform(201)), 0));
    REQUIRE(buf.memory_usage() <= kLimit);
  }
  CHECK(buf.compactions() > 10);
  CHECK(buf.size() == 100);
  if (with_savepoint) {
    // The savepoint kept the version of each key it saw.
    REQUIRE(buf.rollback_to_savepoint());
    for (int k = 0; k < 100; ++k) CHECK(buf.find(key_of(k))->value == "original");
  }
}

TEST_CASE("write buffer: versions a savepoint or an iterator needs count against the limit",
          "[write_buffer]") {
  constexpr size_t kLimit = 1 << 20;
  const bool by_iterator = GENERATE(false, true);
  INFO("held by " << (by_iterator ? "iterators" : "savepoints"));
  WriteBuffer buf(kLimit);
  Rng rng(13);
  require_ok(buf.put("k", "first", 0));
  std::vector<std::unique_ptr<UserIterator>> iterators;
  Status refused;
  int writes = 0;
  for (;; ++writes) {
    if (by_iterator) {
      iterators.push_back(buf.new_iterator("", ""));
    } else {
      refused = buf.set_savepoint();
      if (!refused.ok()) break;
    }
    refused = buf.put("k", value_of(rng, 200), 0);
    REQUIRE(buf.memory_usage() <= kLimit);
    if (!refused.ok()) break;
    REQUIRE(writes < 100000);
  }
  CHECK(refused.code() == Code::InvalidArgument);
  CHECK(refused.message().find(std::to_string(kLimit)) != std::string::npos);
  CHECK(writes > 3000);
  CHECK(buf.find("k").has_value());
  if (by_iterator) {
    // The first iterator still shows the first value; once the iterators are gone, the old
    // versions are reclaimed and writing goes on.
    iterators.front()->seek_first();
    REQUIRE(iterators.front()->valid());
    CHECK(iterators.front()->value() == "first");
    iterators.clear();
    require_ok(buf.put("k", "after", 0));
  } else {
    // Every savepoint still returns to its own version; once they are all rolled back, the
    // versions are reclaimed and writing goes on.
    for (int i = writes - 1; i >= writes - 3; --i) {
      REQUIRE(buf.rollback_to_savepoint());
      REQUIRE(buf.find("k").has_value());
    }
    while (buf.rollback_to_savepoint()) {
    }
    CHECK(buf.find("k")->value == "first");
    require_ok(buf.put("k", "after", 0));
  }
  CHECK(buf.compactions() > 0);
  CHECK(buf.memory_usage() < kLimit / 2);
}

TEST_CASE("write buffer: writes after an iterator is made copy nothing", "[write_buffer]") {
  WriteBuffer buf;
  Rng rng(14);
  for (int k = 0; k < 20000; ++k) require_ok(buf.put(key_of(k), value_of(rng, 50), 0));
  const size_t before = buf.memory_usage();
  std::vector<std::unique_ptr<UserIterator>> iterators;
  for (int i = 0; i < 300; ++i) {
    iterators.push_back(buf.new_iterator("", ""));
    require_ok(buf.put(key_of(100000 + i), "new", 0));
  }
  // 300 versions of about 120 bytes each, and blocks: nowhere near one copy of the buffer.
  const size_t growth = buf.memory_usage() - before;
  INFO("buffer " << before << " bytes, grew by " << growth);
  CHECK(growth < 300 * 128 + 2 * 4096);
  // Each iterator shows the buffer as it was when it was made.
  for (int i = 0; i < 300; i += 37) {
    UserIterator& it = *iterators[static_cast<size_t>(i)];
    size_t n = 0;
    for (it.seek_first(); it.valid(); it.next()) ++n;
    CHECK(n == 20000u + static_cast<size_t>(i));
  }
}

TEST_CASE("write buffer: a rollback after an iterator is made leaves the iterator's view alone",
          "[write_buffer]") {
  WriteBuffer buf;
  require_ok(buf.put("a", "1", 0));
  require_ok(buf.set_savepoint());
  require_ok(buf.put("a", "2", 0));
  require_ok(buf.put("b", "2", 0));
  require_ok(buf.del("c", 0));
  auto it = buf.new_iterator("", "");
  REQUIRE(buf.rollback_to_savepoint());
  require_ok(buf.put("d", "3", 0));
  CHECK(buf.size() == 2);
  CHECK(buf.find("a")->value == "1");
  CHECK_FALSE(buf.find("b").has_value());
  CHECK_FALSE(buf.find("c").has_value());

  it->seek_first();
  REQUIRE(it->valid());
  CHECK(it->key() == "a");
  CHECK(it->value() == "2");
  it->next();
  REQUIRE(it->valid());
  CHECK(it->key() == "b");
  it->next();
  REQUIRE(it->valid());
  CHECK(it->key() == "c");
  CHECK(it->is_delete());
  it->next();
  CHECK_FALSE(it->valid());
  it->seek_last();
  REQUIRE(it->valid());
  CHECK(it->key() == "c");
  it->prev();
  it->prev();
  REQUIRE(it->valid());
  CHECK(it->key() == "a");
  CHECK(it->value() == "2");
}
