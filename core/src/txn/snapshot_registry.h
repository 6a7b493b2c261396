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

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
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
    ++s.counts[seq];
    return seq;
  }

  // Registers `seq` once more, for work that reads at it after the registration it came with may
  // be released (Transaction::get_async). REQUIRES: `seq` is registered now.
  void retain(SequenceNumber seq) {
    Stripe& s = stripes_[thread_stripe(kStripes)];
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.counts[seq];
  }

  // Releases one registration of `seq`. REQUIRES: it was acquired and not yet released.
  void release(SequenceNumber seq) {
    const size_t mine = thread_stripe(kStripes);
    for (size_t i = 0; i < kStripes; ++i) {
      Stripe& s = stripes_[(mine + i) % kStripes];
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.counts.find(seq);
      if (it == s.counts.end()) continue;
      if (--it->second == 0) s.counts.erase(it);
      return;
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
  struct alignas(64) Stripe {
    mutable std::mutex mu;
    std::map<SequenceNumber, int> counts;  // guarded by mu
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
