// SnapshotRegistry: the multiset of sequence numbers that open transactions read at. Compaction
// and flush keep every version some registered snapshot can see.
//
// The multiset is split over kStripes stripes, each with its own lock, and a thread registers in
// its own stripe (util/thread_stripe.h), so transactions beginning on different threads do not
// meet on one lock. Any registration of a sequence number stands for it, so release() takes one
// from the caller's stripe when it has one and from any other stripe otherwise.
//
// acquire() reads the visible sequence number and registers it in one step under its stripe's
// lock, and list() holds every stripe's lock at once while it reads them: so a flush or compaction
// that lists the snapshots either sees a new snapshot, or listed before that snapshot's sequence
// number was read, in which case everything it reads is at or below that number and nothing the
// snapshot needs is dropped.
//
// Thread safety: all methods may be called from many threads at once.

#ifndef SKV_TXN_SNAPSHOT_REGISTRY_H_
#define SKV_TXN_SNAPSHOT_REGISTRY_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "format/internal_key.h"
#include "util/thread_stripe.h"

namespace skv {

class SnapshotRegistry {
 public:
  static constexpr size_t kStripes = 16;

  // Registers and returns the current value of `visible`.
  SequenceNumber acquire(const std::atomic<SequenceNumber>& visible) {
    Stripe& s = stripes_[thread_stripe(kStripes)];
    std::lock_guard<std::mutex> lock(s.mu);
    SequenceNumber seq = visible.load(std::memory_order_acquire);
    s.add(seq);
    return seq;
  }

  // Registers `seq` once more, for work that reads at it after the registration it came with may
  // be released (Transaction::get_async). REQUIRES: `seq` is registered now.
  void retain(SequenceNumber seq) {
    Stripe& s = stripes_[thread_stripe(kStripes)];
    std::lock_guard<std::mutex> lock(s.mu);
    s.add(seq);
  }

  // Releases one registration of `seq`. REQUIRES: it was acquired and not yet released.
  void release(SequenceNumber seq) {
    const size_t mine = thread_stripe(kStripes);
    for (size_t i = 0; i < kStripes; ++i) {
      Stripe& s = stripes_[(mine + i) % kStripes];
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.remove(seq)) return;
    }
  }

  // Distinct registered sequence numbers, ascending.
  std::vector<SequenceNumber> list() const {
    std::map<SequenceNumber, int> all;
    {
      AllStripes lock(*this);
      for (const Stripe& s : stripes_) {
        for (const auto& [seq, n] : s.counts) all[seq] += n;
      }
    }
    std::vector<SequenceNumber> out;
    out.reserve(all.size());
    for (const auto& [seq, n] : all) out.push_back(seq);
    return out;
  }

  // Registrations, counting repeats.
  size_t size() const {
    AllStripes lock(*this);
    size_t n = 0;
    for (const Stripe& s : stripes_) {
      for (const auto& [seq, c] : s.counts) n += static_cast<size_t>(c);
    }
    return n;
  }

 private:
  // A stripe's registrations: (sequence number, count) pairs ascending by sequence number. A
  // stripe holds a few threads' transactions, so a flat vector is short, and once grown it
  // registers without allocating (a map took a node for nearly every transaction, since each
  // tends to read at a newer sequence number than the one before).
  struct alignas(64) Stripe {
    mutable std::mutex mu;
    std::vector<std::pair<SequenceNumber, int>> counts;  // guarded by mu

    // REQUIRES: mu held.
    void add(SequenceNumber seq) {
      auto it = std::lower_bound(counts.begin(), counts.end(), seq,
                                 [](const auto& e, SequenceNumber v) { return e.first < v; });
      if (it != counts.end() && it->first == seq) {
        ++it->second;
      } else {
        counts.insert(it, {seq, 1});
      }
    }
    // Whether `seq` was registered here (one registration of it is then dropped). REQUIRES: mu
    // held.
    bool remove(SequenceNumber seq) {
      auto it = std::lower_bound(counts.begin(), counts.end(), seq,
                                 [](const auto& e, SequenceNumber v) { return e.first < v; });
      if (it == counts.end() || it->first != seq) return false;
      if (--it->second == 0) counts.erase(it);
      return true;
    }
  };

  // Holds every stripe's lock, taken in index order.
  class AllStripes {
   public:
    explicit AllStripes(const SnapshotRegistry& r) : r_(r) {
      for (const Stripe& s : r_.stripes_) s.mu.lock();
    }
    ~AllStripes() {
      for (const Stripe& s : r_.stripes_) s.mu.unlock();
    }
    AllStripes(const AllStripes&) = delete;
    AllStripes& operator=(const AllStripes&) = delete;

   private:
    const SnapshotRegistry& r_;
  };

  std::array<Stripe, kStripes> stripes_;
};

}  // namespace skv

#endif  // SKV_TXN_SNAPSHOT_REGISTRY_H_
