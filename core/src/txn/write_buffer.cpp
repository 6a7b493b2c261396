#include "txn/write_buffer.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>

#include "txn/buffer_iterator.h"

namespace skv {

namespace {

// A skiplist node: the key pointer and one link per level (SkipList::new_node).
constexpr size_t kMaxNodeBytes = sizeof(void*) * (1 + BufferStore::List::kMaxHeight);
// What a version is charged when it becomes reclaimable: its entry and an average node.
constexpr size_t kAverageNodeBytes = sizeof(void*) * 2 + sizeof(void*) / 2;
// Reclaimable bytes below which compacting is not worth a new store.
constexpr size_t kMinCompaction = size_t{64} << 10;
// Kept free by writes, so that compacting a buffer whose live part is small (after a rollback, or
// once the iterators that held old versions are gone) always fits in the limit.
constexpr size_t kCompactionHeadroom =
    sizeof(BufferStore) + 2 * (BufferStore::kBlockSize + Arena::kBlockOverhead);

size_t charge_of(const BufferEntry* e) {
  return BufferEntry::allocation_size(e->key_size, e->value_size) + kAverageNodeBytes;
}

// The most a store's arena can grow by when a version with `kv_bytes` of key and value is added
// (Arena::allocate_aligned): a piece above a quarter block gets a block of its own; the others
// come from the current block or from one new block, which then has room for both.
size_t version_growth(size_t kv_bytes) {
  static_assert(kMaxNodeBytes + Arena::kAlignment - 1 <= BufferStore::kBlockSize / 4);
  const size_t entry = sizeof(BufferEntry) + kv_bytes + Arena::kAlignment - 1;
  size_t growth = BufferStore::kBlockSize + Arena::kBlockOverhead;
  if (entry > BufferStore::kBlockSize / 4) growth += entry + Arena::kBlockOverhead;
  return growth;
}

}  // namespace

WriteBuffer::WriteBuffer(size_t limit) : limit_(limit) {}

size_t WriteBuffer::memory_usage() const {
  const size_t store = store_ == nullptr ? 0 : store_->memory_usage();
  return store + savepoints_.capacity() * sizeof(uint64_t);
}

Status WriteBuffer::reserve(size_t growth) {
  const size_t budget = limit_ > kCompactionHeadroom ? limit_ - kCompactionHeadroom : 0;
  if (memory_usage() + growth <= budget) return Status::OK();
  if (compact(/*pressing=*/true) && memory_usage() + growth <= budget) return Status::OK();
  return Status::invalid_argument(
      "transaction would exceed its memory limit of " + std::to_string(limit_) +
      " bytes (keys, values, per-write overhead, and the versions kept for savepoints and open "
      "iterators; " +
      std::to_string(memory_usage()) + " bytes held)");
}

Status WriteBuffer::put(std::string_view key, std::string_view value, uint64_t timestamp) {
  return write(key, value, false, timestamp);
}

Status WriteBuffer::del(std::string_view key, uint64_t timestamp) {
  return write(key, std::string_view(), true, timestamp);
}

Status WriteBuffer::write(std::string_view key, std::string_view value, bool is_delete,
                          uint64_t timestamp) {
  assert(!key.empty() && key.size() <= kMaxKeySize && value.size() <= kMaxValueSize);
  const size_t growth =
      version_growth(key.size() + value.size()) +
      (store_ == nullptr ? sizeof(BufferStore) + BufferStore::kBlockSize + Arena::kBlockOverhead
                         : 0);
  Status s = reserve(growth);
  if (!s.ok()) return s;
  if (store_ == nullptr) store_ = std::make_shared<BufferStore>();
  BufferStore::List::Iterator it(&store_->list);
  const BufferEntry* previous = find_visible(&it, &probe_, key, last_seq_);
  if (previous != nullptr && value.size() <= previous->value_size && private_to_writer(previous)) {
    // The entry was made in the arena as a mutable object; only the skiplist sees it as const.
    overwrite(const_cast<BufferEntry*>(previous), value, is_delete, timestamp);
    return Status::OK();
  }

  BufferEntry* e = store_->add(++last_seq_, key, value, is_delete, timestamp);
  e->older = newest_;
  newest_ = e;
  if (previous == nullptr) {
    ++live_keys_;
  } else if (previous->seq > top_savepoint()) {
    // Overwritten since the last savepoint: no savepoint can return to it.
    mark_reclaimable(previous);
  }
  if (reclaimable_bytes_ >= kMinCompaction && reclaimable_bytes_ * 2 >= store_->memory_usage()) {
    compact(/*pressing=*/false);
  }
  return Status::OK();
}

std::optional<BufferedWrite> WriteBuffer::find(std::string_view key) const {
  if (store_ == nullptr) return std::nullopt;
  BufferStore::List::Iterator it(&store_->list);
  const BufferEntry* e = find_visible(&it, &probe_, key, last_seq_);
  if (e == nullptr) return std::nullopt;
  return BufferedWrite{e->is_delete, e->value(), e->timestamp};
}

bool WriteBuffer::store_unshared() const {
  if (store_.use_count() != 1) return false;
  // The last iterator may have been dropped on another thread: its reads of the store happen
  // before the release of its reference, and so before what this thread does next.
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

bool WriteBuffer::private_to_writer(const BufferEntry* e) const {
  // A savepoint set after the write may return to it; an iterator made after it may show it.
  // Iterators made before it never read its value, only its key and sequence.
  return e->seq > top_savepoint() && (e->seq > last_view_ || store_unshared());
}

void WriteBuffer::overwrite(BufferEntry* e, std::string_view value, bool is_delete,
                            uint64_t timestamp) {
  if (!value.empty()) {
    std::memcpy(const_cast<char*>(e->value().data()), value.data(), value.size());
  }
  // The bytes a shorter value leaves unused are only given back by a compaction.
  reclaimable_bytes_ += e->value_size - value.size();
  e->value_size = static_cast<uint32_t>(value.size());
  e->is_delete = is_delete;
  e->timestamp = timestamp;
}

void WriteBuffer::mark_reclaimable(const BufferEntry* e) {
  if (e->reclaimable) return;
  e->reclaimable = true;
  reclaimable_bytes_ += charge_of(e);
}

Status WriteBuffer::set_savepoint() {
  if (savepoints_.size() == savepoints_.capacity()) {
    // Growing the stack allocates the new array while the old one is still held.
    const size_t grown = std::max<size_t>(2 * savepoints_.capacity(), 4);
    Status s = reserve(grown * sizeof(uint64_t));
    if (!s.ok()) return s;
    savepoints_.reserve(grown);
  }
  savepoints_.push_back(last_seq_);
  return Status::OK();
}

bool WriteBuffer::rollback_to_savepoint() {
  if (savepoints_.empty()) return false;
  const uint64_t mark = savepoints_.back();
  savepoints_.pop_back();
  if (newest_ == nullptr || newest_->seq <= mark) return true;  // nothing written since
  const uint64_t step = ++last_seq_;
  for (BufferEntry* e = newest_; e != nullptr && e->seq > mark; e = e->older) {
    if (!e->alive()) continue;  // undone by an earlier rollback
    e->died_at.store(step, std::memory_order_relaxed);
    mark_reclaimable(e);
  }
  uncount_undone_keys(mark, step);
  return true;
}

void WriteBuffer::uncount_undone_keys(uint64_t mark, uint64_t step) {
  BufferStore::List::Iterator it(&store_->list);
  for (const BufferEntry* e = newest_; e != nullptr && e->seq > mark; e = e->older) {
    if (e->died_at.load(std::memory_order_relaxed) != step) continue;
    // Look at each key once, from the newest of its entries that was in effect before this
    // rollback.
    const BufferEntry* first_in_effect = nullptr;
    bool has_version = false;
    for (it.seek(probe_.make(e->key(), BufferEntry::kNewest)); it.valid(); it.next()) {
      const BufferEntry* v = it.key();
      if (v->key() != e->key()) break;
      const bool alive = v->alive();
      if (first_in_effect == nullptr &&
          (alive || v->died_at.load(std::memory_order_relaxed) == step)) {
        first_in_effect = v;
        if (v != e) break;
      }
      if (alive) {
        has_version = true;
        break;
      }
    }
    if (first_in_effect == e && !has_version) --live_keys_;
  }
}

bool WriteBuffer::compact(bool pressing) {
  if (store_ == nullptr || reclaimable_bytes_ == 0) return false;
  if (!store_unshared()) return false;  // an iterator still reads this store
  if (reclaimable_bytes_ < compaction_retry_at_) return false;
  const size_t held = store_->memory_usage();
  const size_t worth = pressing ? held / 8 : std::max(held / 2, kMinCompaction);
  if (reclaimable_bytes_ < worth) return false;

  // Copy the needed versions, newest first, so the copies link up in write order. The original
  // stays until the copy is done, so both must fit in the limit together.
  const size_t before = memory_usage();
  if (before + sizeof(BufferStore) + BufferStore::kBlockSize > limit_) return false;
  auto fresh = std::make_shared<BufferStore>();
  BufferEntry* newest = nullptr;
  BufferEntry* last = nullptr;
  for (const BufferEntry* e = newest_; e != nullptr; e = e->older) {
    if (e->reclaimable || !e->alive()) continue;
    const size_t room = fresh->memory_usage() + version_growth(size_t{e->key_size} + e->value_size);
    if (before + room > limit_) {
      // Not now: wait until there is clearly more to reclaim before trying again.
      compaction_retry_at_ = reclaimable_bytes_ + held / 8;
      return false;
    }
    BufferEntry* c = fresh->add(e->seq, e->key(), e->value(), e->is_delete, e->timestamp);
    if (last == nullptr) {
      newest = c;
    } else {
      last->older = c;
    }
    last = c;
  }
  store_ = std::move(fresh);
  newest_ = newest;
  reclaimable_bytes_ = 0;
  compaction_retry_at_ = 0;
  ++compactions_;
  return true;
}

void WriteBuffer::clear() {
  store_.reset();
  newest_ = nullptr;
  last_seq_ = 0;
  last_view_ = 0;
  std::vector<uint64_t>().swap(savepoints_);
  live_keys_ = 0;
  reclaimable_bytes_ = 0;
  compaction_retry_at_ = 0;
}

WriteBatch WriteBuffer::to_batch() const {
  if (store_ == nullptr) return WriteBatch();
  BufferStore::List::Iterator it(&store_->list);
  // The current version of each key: the first alive one; older ones are kept for savepoints.
  auto each_current = [&](auto&& fn) {
    const BufferEntry* last = nullptr;
    for (it.seek_first(); it.valid(); it.next()) {
      const BufferEntry* e = it.key();
      if (!e->alive() || (last != nullptr && last->key() == e->key())) continue;
      last = e;
      fn(e);
    }
  };
  // Sized first, so the record is built in one allocation.
  size_t bytes = 0;
  each_current([&](const BufferEntry* e) {
    bytes += WriteBatch::entry_bound(e->key().size(), e->is_delete ? 0 : e->value().size());
  });
  WriteBatch batch(bytes);
  each_current([&](const BufferEntry* e) {
    if (e->is_delete) {
      batch.del(e->key(), e->timestamp);
    } else {
      batch.put(e->key(), e->value(), e->timestamp);
    }
  });
  return batch;
}

std::unique_ptr<UserIterator> WriteBuffer::new_iterator(std::string lower,
                                                        std::string upper) const {
  last_view_ = last_seq_;
  return new_buffer_iterator(store_, last_seq_, std::move(lower), std::move(upper));
}

}  // namespace skv
