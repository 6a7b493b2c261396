// Checks shared by the block and table fuzz targets: walk an InternalIterator both ways and seek
// it, and check what it yields against its own forward walk.
//
// Always checked: keys are at least an internal-key suffix long, an iterator that met an error is
// invalid, and every error is Corruption (the fuzz files are in memory, so nothing else can
// fail). With `compare_walks`, when the forward walk is complete, error-free and strictly
// ascending, the backward walk must yield the same entries in reverse. With `exact_seeks` (the
// caller knows the data is self-consistent, not just checksummed), seek and seek_for_prev must land
// exactly where the forward walk says, and prev() after a seek on the entry before it, unless they
// report Corruption instead.
//
// Work is bounded: at most `max_entries` forward steps, `max_back` backward steps and a fixed
// number of seeks, whatever the input.
//
// Thread safety: single-threaded.

#ifndef SKV_TESTS_FUZZ_ITERATOR_CHECKS_H_
#define SKV_TESTS_FUZZ_ITERATOR_CHECKS_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/internal_key.h"
#include "fuzz_support.h"
#include "iterator/internal_iterator.h"

namespace skv::fuzz {

using Entries = std::vector<std::pair<std::string, std::string>>;

struct Walk {
  Entries entries;
  Status status;
  bool complete = false;  // reached the end (or an error), not the step limit
};

inline void check_position(const InternalIterator& it) {
  if (it.valid()) {
    SKV_FUZZ_CHECK(it.status().ok(), "an iterator with an error must be invalid");
    SKV_FUZZ_CHECK(it.key().size() >= kInternalKeySuffix, "internal key too short");
  } else {
    SKV_FUZZ_CHECK(it.status().ok() || it.status().is_corruption(), it.status().to_string());
  }
}

inline Walk walk(InternalIterator* it, bool forward, size_t max_steps) {
  Walk w;
  if (forward) {
    it->seek_first();
  } else {
    it->seek_last();
  }
  while (true) {
    check_position(*it);
    if (!it->valid()) {
      w.complete = true;
      break;
    }
    if (w.entries.size() >= max_steps) break;
    w.entries.emplace_back(std::string(it->key()), std::string(it->value()));
    if (forward) {
      it->next();
    } else {
      it->prev();
    }
  }
  w.status = it->status();
  return w;
}

inline bool strictly_ascending(const Entries& e) {
  for (size_t i = 1; i < e.size(); ++i) {
    if (compare_internal_keys(e[i - 1].first, e[i].first) >= 0) return false;
  }
  return true;
}

// Seek targets: a sample of the keys walked, plus slices of `raw` (the fuzz input) as keys that
// may fall between, before or after them.
inline std::vector<std::string> seek_targets(const Entries& fwd, std::string_view raw) {
  std::vector<std::string> t;
  const size_t n = fwd.size();
  const size_t step = n <= 24 ? 1 : n / 24;
  for (size_t i = 0; i < n; i += step) t.push_back(fwd[i].first);
  if (n > 0) t.push_back(fwd.back().first);
  for (size_t i = 0; i < 8 && raw.size() >= kInternalKeySuffix; ++i) {
    const size_t len = kInternalKeySuffix + (raw.size() * (i + 3)) % 9;
    const size_t at = (raw.size() * i / 8) % (raw.size() - kInternalKeySuffix + 1);
    t.emplace_back(raw.substr(at, std::min(len, raw.size() - at)));
  }
  t.push_back(std::string(kInternalKeySuffix, '\0'));
  t.push_back(std::string(kInternalKeySuffix + 4, '\xff'));
  return t;
}

// Index of the first entry >= target, or fwd.size().
inline size_t lower_bound(const Entries& fwd, std::string_view target) {
  size_t i = 0;
  while (i < fwd.size() && compare_internal_keys(fwd[i].first, target) < 0) ++i;
  return i;
}

// Reporting corruption instead is always allowed: a check that only a seek reaches (a restart
// key, say) may find damage the forward walk passed over. Returning other data is not.
inline void expect_at(const InternalIterator& it, const Entries& fwd, size_t i, const char* op) {
  if (!it.valid() && it.status().is_corruption()) return;
  if (i == fwd.size()) {
    SKV_FUZZ_CHECK(!it.valid(), std::string(op) + ": expected the end");
    return;
  }
  SKV_FUZZ_CHECK(it.valid(), std::string(op) + ": expected entry " + std::to_string(i));
  SKV_FUZZ_CHECK(it.key() == fwd[i].first && it.value() == fwd[i].second,
                 std::string(op) + ": wrong entry, expected " + std::to_string(i));
}

// Returns the forward walk when it is complete and error-free (else an empty list). *ascending
// tells whether its keys ascend strictly (false when the list is empty for that reason).
inline Entries check_iterator(InternalIterator* it, std::string_view raw, bool compare_walks,
                              bool exact_seeks, size_t max_entries, size_t max_back,
                              bool* ascending) {
  Walk fwd = walk(it, true, max_entries);
  Walk bwd = walk(it, false, max_back);
  const bool ok = fwd.complete && fwd.status.ok() && strictly_ascending(fwd.entries);
  if (ok && compare_walks && bwd.status.ok()) {
    const size_t n = fwd.entries.size();
    SKV_FUZZ_CHECK(bwd.entries.size() <= n, "backward walk longer than the forward walk");
    if (bwd.complete) {
      SKV_FUZZ_CHECK(bwd.entries.size() == n, "backward walk shorter than the forward walk");
    }
    for (size_t i = 0; i < bwd.entries.size(); ++i) {
      SKV_FUZZ_CHECK(bwd.entries[i] == fwd.entries[n - 1 - i],
                     "backward walk differs from the forward walk at " + std::to_string(i));
    }
  }
  for (const std::string& t : seek_targets(fwd.entries, raw)) {
    it->seek(t);
    check_position(*it);
    if (ok && exact_seeks) {
      const size_t i = lower_bound(fwd.entries, t);
      expect_at(*it, fwd.entries, i, "seek");
      if (i > 0 && i < fwd.entries.size() && it->valid()) {
        it->prev();
        expect_at(*it, fwd.entries, i - 1, "prev after seek");
      }
    } else if (it->valid()) {
      it->prev();
      check_position(*it);
    }
    it->seek_for_prev(t);
    check_position(*it);
    if (ok && exact_seeks) {
      size_t i = lower_bound(fwd.entries, t);
      const bool exact =
          i < fwd.entries.size() && compare_internal_keys(fwd.entries[i].first, t) == 0;
      if (!exact) i = i == 0 ? fwd.entries.size() : i - 1;  // the last entry <= t, or none
      expect_at(*it, fwd.entries, i, "seek_for_prev");
    }
  }
  *ascending = ok;
  if (!fwd.complete || !fwd.status.ok()) fwd.entries.clear();
  return std::move(fwd.entries);
}

}  // namespace skv::fuzz

#endif  // SKV_TESTS_FUZZ_ITERATOR_CHECKS_H_
