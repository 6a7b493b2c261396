// skv-test-modules: util
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/internal_key.h"
#include "iterator/db_iterator.h"
#include "iterator/merging_iterator.h"

using namespace skv;

namespace {

// A sorted vector of (internal key, value) as an InternalIterator.
class VectorIterator final : public InternalIterator {
 public:
  explicit VectorIterator(std::vector<std::pair<std::string, std::string>> entries)
      : e_(std::move(entries)) {
    std::sort(e_.begin(), e_.end(), [](const auto& a, const auto& b) {
      return compare_internal_keys(a.first, b.first) < 0;
    });
  }
  bool valid() const override { return pos_ >= 0 && pos_ < static_cast<int>(e_.size()); }
  void seek_first() override { pos_ = 0; }
  void seek_last() override { pos_ = static_cast<int>(e_.size()) - 1; }
  void seek(std::string_view t) override {
    pos_ = 0;
    while (pos_ < static_cast<int>(e_.size()) && compare_internal_keys(e_[pos_].first, t) < 0) {
      ++pos_;
    }
  }
  void next() override { ++pos_; }
  void prev() override { --pos_; }
  std::string_view key() const override { return e_[pos_].first; }
  std::string_view value() const override { return e_[pos_].second; }
  Status status() const override { return Status(); }

 private:
  std::vector<std::pair<std::string, std::string>> e_;
  int pos_ = -1;
};

struct Version {
  std::string key;
  SequenceNumber seq;
  bool del;
  std::string value;
};

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%03d", i);
  return buf;
}

using Parts = std::vector<std::vector<std::pair<std::string, std::string>>>;

// The merge of `parts`, checked to yield `all` (their keys, sorted) in full both ways.
std::unique_ptr<InternalIterator> checked_merge(const Parts& parts,
                                                const std::vector<std::string>& all) {
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (const auto& p : parts) children.push_back(std::make_unique<VectorIterator>(p));
  auto it = new_merging_iterator(std::move(children));
  size_t i = 0;
  for (it->seek_first(); it->valid(); it->next()) REQUIRE(it->key() == all[i++]);
  REQUIRE(i == all.size());
  for (it->seek_last(); it->valid(); it->prev()) REQUIRE(it->key() == all[--i]);
  REQUIRE(i == 0);
  return it;
}

// Checks that `it` is on all[*pos], then moves it one step (unless at that end).
void checked_step(InternalIterator* it, const std::vector<std::string>& all, int* pos,
                  bool forward) {
  REQUIRE(it->valid());
  REQUIRE(it->key() == all[static_cast<size_t>(*pos)]);
  if (forward && *pos + 1 < static_cast<int>(all.size())) {
    it->next();
    ++*pos;
  } else if (!forward && *pos > 0) {
    it->prev();
    --*pos;
  }
}

}  // namespace

TEST_CASE("merging iterator yields the union in order, both ways", "[iterator]") {
  std::mt19937 rng(11);
  Parts parts(4);
  std::vector<std::string> all;
  for (int i = 0; i < 400; ++i) {
    std::string k =
        make_internal_key(key_of(static_cast<int>(rng() % 100)), i + 1, ValueKind::Value, 0);
    parts[rng() % 4].push_back({k, "v"});
    all.push_back(k);
  }
  std::sort(all.begin(), all.end(), InternalKeyLess());
  auto it = checked_merge(parts, all);
  // Random walk with direction switches.
  int pos = 200;
  it->seek(all[static_cast<size_t>(pos)]);
  for (int step = 0; step < 2000; ++step) checked_step(it.get(), all, &pos, rng() % 2 != 0);
}

TEST_CASE("merging iterator over runs of keys, for 1 to 8 inputs", "[iterator]") {
  // Inputs that each hold runs of consecutive keys: one input stays on top for many steps, and
  // every run boundary hands the top over.
  std::mt19937 rng(29);
  for (size_t inputs : {1, 2, 3, 5, 8}) {
    Parts parts(inputs);
    std::vector<std::string> all;
    size_t owner = 0;
    for (int i = 0; i < 600; ++i) {
      if (rng() % 7 == 0) owner = rng() % inputs;
      std::string k = make_internal_key(key_of(i / 2), 1000 - i, ValueKind::Value, 0);
      parts[owner].push_back({k, "v"});
      all.push_back(k);
    }
    std::sort(all.begin(), all.end(), InternalKeyLess());
    auto it = checked_merge(parts, all);
    // Runs of steps one way, then the other, from random seeks.
    for (int round = 0; round < 20; ++round) {
      int pos = static_cast<int>(rng() % all.size());
      it->seek(all[static_cast<size_t>(pos)]);
      for (int leg = 0; leg < 6; ++leg) {
        const int steps = static_cast<int>(rng() % 40);
        for (int n = 0; n < steps; ++n) checked_step(it.get(), all, &pos, leg % 2 == 0);
      }
    }
  }
}

TEST_CASE("db iterator shows the newest visible live version per key", "[iterator]") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    std::vector<Version> versions;
    SequenceNumber seq = 0;
    for (int i = 0; i < 300; ++i) {
      Version v{key_of(static_cast<int>(rng() % 60)), ++seq, rng() % 4 == 0,
                "v" + std::to_string(seq)};
      versions.push_back(v);
    }
    std::vector<std::vector<std::pair<std::string, std::string>>> parts(3);
    for (const auto& v : versions) {
      parts[rng() % 3].push_back(
          {make_internal_key(v.key, v.seq, v.del ? ValueKind::Delete : ValueKind::Value,
                             v.seq * 10),
           v.value});
    }
    SequenceNumber snap = 1 + rng() % seq;
    std::string lower = rng() % 3 == 0 ? key_of(static_cast<int>(rng() % 60)) : "";
    std::string upper = rng() % 3 == 0 ? key_of(static_cast<int>(rng() % 60)) : "";
    if (!lower.empty() && !upper.empty() && upper < lower) std::swap(lower, upper);
    // The model: newest version <= snap per key, minus tombstones, inside [lower, upper).
    std::map<std::string, std::pair<SequenceNumber, const Version*>> newest;
    for (const auto& v : versions) {
      if (v.seq > snap) continue;
      auto& slot = newest[v.key];
      if (slot.second == nullptr || v.seq > slot.first) slot = {v.seq, &v};
    }
    std::vector<std::pair<std::string, std::string>> model;
    for (auto& [k, s] : newest) {
      if (s.second->del) continue;
      if (!lower.empty() && k < lower) continue;
      if (!upper.empty() && k >= upper) continue;
      model.push_back({k, s.second->value});
    }
    auto make = [&](bool keys_only) {
      std::vector<std::unique_ptr<InternalIterator>> children;
      for (auto& p : parts) children.push_back(std::make_unique<VectorIterator>(p));
      return new_db_iterator(new_merging_iterator(std::move(children)), snap, lower, upper,
                             keys_only);
    };
    auto it = make(false);
    size_t i = 0;
    for (it->seek_first(); it->valid(); it->next()) {
      REQUIRE(i < model.size());
      CHECK(it->key() == model[i].first);
      CHECK(it->value() == model[i].second);
      ++i;
    }
    REQUIRE(i == model.size());
    for (it->seek_last(); it->valid(); it->prev()) {
      REQUIRE(i > 0);
      --i;
      CHECK(it->key() == model[i].first);
      CHECK(it->value() == model[i].second);
    }
    REQUIRE(i == 0);
    REQUIRE(it->status().ok());

    // Random walk with seeks and direction switches.
    auto walk = make(seed % 2 == 0);
    int pos = -1;  // index into model, -1 = invalid
    for (int step = 0; step < 500; ++step) {
      int op = static_cast<int>(rng() % 10);
      if (op == 0 || pos < 0) {
        std::string target = key_of(static_cast<int>(rng() % 62));
        walk->seek(target);
        auto lb = std::lower_bound(model.begin(), model.end(), target,
                                   [](const auto& e, const std::string& t) { return e.first < t; });
        pos = lb == model.end() ? -1 : static_cast<int>(lb - model.begin());
      } else if (op == 1) {
        walk->seek_last();
        pos = static_cast<int>(model.size()) - 1;
      } else if (op < 6) {
        walk->next();
        pos = pos + 1 < static_cast<int>(model.size()) ? pos + 1 : -1;
      } else {
        walk->prev();
        pos = pos - 1;
      }
      REQUIRE(walk->valid() == (pos >= 0));
      if (pos >= 0) {
        CHECK(walk->key() == model[pos].first);
        if (seed % 2 == 1) CHECK(walk->value() == model[pos].second);
      }
    }
  }
}

namespace {

// Resolves a "pointer" by upper-casing it, and counts the calls; a pointer "bad" fails.
class UpperResolver final : public ValueResolver {
 public:
  Status resolve(std::string_view user_key, std::string_view pointer, std::string* value) override {
    ++calls;
    if (pointer == "bad") return Status::corruption("000009.vlog: bad entry at offset 64");
    value->assign(pointer);
    for (char& c : *value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    *value += "@" + std::string(user_key);
    return Status::OK();
  }
  int calls = 0;
};

std::unique_ptr<InternalIterator> pointer_input() {
  std::vector<std::pair<std::string, std::string>> e;
  e.emplace_back(make_internal_key("a", 5, ValueKind::ValuePointer, 0), "new");
  e.emplace_back(make_internal_key("a", 3, ValueKind::ValuePointer, 0), "old");
  e.emplace_back(make_internal_key("b", 4, ValueKind::Value, 0), "inline");
  e.emplace_back(make_internal_key("c", 6, ValueKind::Delete, 0), "");
  e.emplace_back(make_internal_key("c", 2, ValueKind::ValuePointer, 0), "gone");
  e.emplace_back(make_internal_key("d", 1, ValueKind::ValuePointer, 0), "last");
  return std::make_unique<VectorIterator>(std::move(e));
}

}  // namespace

TEST_CASE("value pointers are resolved for the version shown, in both directions",
          "[db_iterator][vlog]") {
  auto resolver = std::make_shared<UpperResolver>();
  auto it = new_db_iterator(pointer_input(), 10, "", "", false, resolver);
  std::vector<std::string> forward;
  for (it->seek_first(); it->valid(); it->next()) {
    forward.push_back(std::string(it->key()) + "=" + std::string(it->value()));
  }
  REQUIRE(it->status().ok());
  CHECK(forward == std::vector<std::string>{"a=NEW@a", "b=inline", "d=LAST@d"});
  CHECK(resolver->calls == 2);  // never for a hidden version or a deleted key

  std::vector<std::string> backward;
  for (it->seek_last(); it->valid(); it->prev()) {
    backward.push_back(std::string(it->key()) + "=" + std::string(it->value()));
  }
  REQUIRE(it->status().ok());
  CHECK(backward == std::vector<std::string>{"d=LAST@d", "b=inline", "a=NEW@a"});
  CHECK(resolver->calls == 4);

  // At an older snapshot the older version is the one read.
  auto old = new_db_iterator(pointer_input(), 3, "", "", false, resolver);
  old->seek("a");
  REQUIRE(old->valid());
  const int calls = resolver->calls;
  CHECK(old->value() == "OLD@a");
  CHECK(old->value() == "OLD@a");
  CHECK(resolver->calls == calls + 1);  // once per entry, however often value() is called
  // Backwards at that snapshot: d, then c (its tombstone is newer), then a's older version.
  old->seek_last();
  old->prev();
  REQUIRE(old->valid());
  CHECK(old->value() == "GONE@c");
  old->prev();
  REQUIRE(old->valid());
  CHECK(old->key() == "a");
  CHECK(old->value() == "OLD@a");
}

TEST_CASE("a keys-only iterator never resolves a value pointer", "[db_iterator][vlog]") {
  auto resolver = std::make_shared<UpperResolver>();
  auto it = new_db_iterator(pointer_input(), 10, "", "", true, resolver);
  int n = 0;
  for (it->seek_first(); it->valid(); it->next()) ++n;
  for (it->seek_last(); it->valid(); it->prev()) ++n;
  CHECK(n == 6);
  CHECK(resolver->calls == 0);
}

TEST_CASE("a value pointer that cannot be read stops the iterator when its value is asked for",
          "[db_iterator][vlog]") {
  std::vector<std::pair<std::string, std::string>> e;
  e.emplace_back(make_internal_key("a", 1, ValueKind::Value, 0), "fine");
  e.emplace_back(make_internal_key("b", 1, ValueKind::ValuePointer, 0), "bad");
  e.emplace_back(make_internal_key("c", 1, ValueKind::Value, 0), "also fine");
  auto resolver = std::make_shared<UpperResolver>();
  auto it = new_db_iterator(std::make_unique<VectorIterator>(e), 10, "", "", false, resolver);
  // Moving over "b" reads nothing.
  it->seek_first();
  REQUIRE(it->valid());
  it->next();
  REQUIRE(it->valid());
  it->next();
  REQUIRE(it->valid());
  CHECK(it->key() == "c");
  CHECK(resolver->calls == 0);
  REQUIRE(it->status().ok());
  // Asking for its value fails and stops the iterator, in either direction.
  it->seek("b");
  REQUIRE(it->valid());
  CHECK(it->value().empty());
  CHECK(resolver->calls == 1);
  CHECK_FALSE(it->valid());
  CHECK(it->status().is_corruption());
  CHECK(it->status().message().find("000009.vlog") != std::string::npos);
  it->seek_last();
  REQUIRE(it->valid());
  it->prev();
  REQUIRE(it->valid());
  CHECK(it->key() == "b");
  CHECK(it->value().empty());
  CHECK_FALSE(it->valid());
  CHECK(it->status().is_corruption());

  // Without a resolver a pointer is corruption too, never an empty value that looks fine.
  auto bare = new_db_iterator(std::make_unique<VectorIterator>(e), 10, "", "", false);
  bare->seek("b");
  REQUIRE(bare->valid());
  (void)bare->value();
  CHECK_FALSE(bare->valid());
  CHECK(bare->status().is_corruption());
}
