// SnapshotRegistry: the multiset of sequence numbers that open transactions read at. Compaction
// and flush keep every version some registered snapshot can see.
//
// acquire() reads the visible sequence number and registers it in one step under the registry's
// lock, and list() takes the same lock: so a flush or compaction that lists the snapshots either
// sees a new snapshot, or started before that snapshot's sequence number was read, in which
// case everything it reads is at or below that number and nothing the snapshot needs is dropped.
//
// Thread safety: all methods may be called from many threads at once.

#ifndef SKV_TXN_SNAPSHOT_REGISTRY_H_
#define SKV_TXN_SNAPSHOT_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "format/internal_key.h"

namespace skv {

class SnapshotRegistry {
 public:
  // Registers and returns the current value of `visible`.
  SequenceNumber acquire(const std::atomic<SequenceNumber>& visible) {
    std::lock_guard<std::mutex> lock(mu_);
    SequenceNumber s = visible.load(std::memory_order_acquire);
    ++counts_[s];
    return s;
  }

  // Registers `seq` once more, for work that reads at it after the registration it came with may
  // be released (Transaction::get_async). REQUIRES: `seq` is registered now.
  void retain(SequenceNumber seq) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_[seq];
  }

  // Releases one registration of `seq`. REQUIRES: it was acquired and not yet released.
  void release(SequenceNumber seq) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = counts_.find(seq);
    if (it == counts_.end()) return;
    if (--it->second == 0) counts_.erase(it);
  }

  // Distinct registered sequence numbers, ascending.
  std::vector<SequenceNumber> list() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<SequenceNumber> out;
    out.reserve(counts_.size());
    for (const auto& [seq, n] : counts_) out.push_back(seq);
    return out;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [seq, c] : counts_) n += static_cast<size_t>(c);
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::map<SequenceNumber, int> counts_;
};

}  // namespace skv

#endif  // SKV_TXN_SNAPSHOT_REGISTRY_H_
