#include "memtable/memtable.h"

#include <cassert>
#include <cstring>
#include <string>
#include <utility>

#include "memtable/arena.h"
#include "memtable/key_index.h"
#include "memtable/skiplist.h"
#include "util/coding.h"

namespace skv {

namespace {

// Each entry shares one arena allocation with the skiplist node that points to it (right after
// the node's links):
//
//   entry := ikey_len:varint32 ikey value_len:varint32 value
//   ikey  := user_key ‖ trailer:fixed64 ‖ timestamp:fixed64   (format/internal_key.h)
//
// Entries are written by this file only and never read from storage, so decoding trusts them.

std::string_view entry_key(const char* entry) {
  uint32_t len = 0;
  const char* p = decode_varint32(entry, entry + kMaxVarint32Bytes, &len);
  return {p, len};
}

std::string_view entry_user_key(const char* entry) { return extract_user_key(entry_key(entry)); }

// Versions of one user key: the higher sequence number is newer (internal key order).
bool entry_is_newer(const char* a, const char* b) {
  return extract_trailer(entry_key(a)) > extract_trailer(entry_key(b));
}

std::string_view entry_value(const char* entry) {
  std::string_view k = entry_key(entry);
  const char* v = k.data() + k.size();
  uint32_t len = 0;
  const char* p = decode_varint32(v, v + kMaxVarint32Bytes, &len);
  return {p, len};
}

struct EntryComparator {
  int operator()(const char* a, const char* b) const {
    return compare_internal_keys(entry_key(a), entry_key(b));
  }
};

using EntryList = SkipList<const char*, EntryComparator>;

// Builds in *buf an entry-shaped key (no value) that the comparator can take as a search target.
const char* encode_search_key(std::string_view ikey, std::string* buf) {
  buf->clear();
  put_varint32(buf, static_cast<uint32_t>(ikey.size()));
  buf->append(ikey.data(), ikey.size());
  return buf->data();
}

// The search target of a point read: the entry-shaped seek key of `user_key` at `snapshot`
// (format/internal_key.h, make_seek_key), on the stack when the key is small so a read does not
// allocate.
class SeekEntry {
 public:
  SeekEntry(std::string_view user_key, SequenceNumber snapshot) {
    const size_t ikey_len = user_key.size() + kInternalKeySuffix;
    char* p = stack_;
    if (kMaxVarint32Bytes + ikey_len > sizeof(stack_)) {
      heap_.reset(new char[kMaxVarint32Bytes + ikey_len]);
      p = heap_.get();
    }
    entry_ = p;
    p = encode_varint32(p, static_cast<uint32_t>(ikey_len));
    if (!user_key.empty()) std::memcpy(p, user_key.data(), user_key.size());
    p += user_key.size();
    encode_fixed64(p, pack_trailer(snapshot, kValueKindForSeek));
    encode_fixed64(p + 8, 0);
  }
  const char* entry() const { return entry_; }

 private:
  char stack_[192];
  std::unique_ptr<char[]> heap_;
  const char* entry_;
};

class MemTableIterator final : public InternalIterator {
 public:
  explicit MemTableIterator(const EntryList* list) : iter_(list) {}

  bool valid() const override { return iter_.valid(); }
  void seek_first() override { iter_.seek_first(); }
  void seek_last() override { iter_.seek_last(); }
  // REQUIRES: target.size() >= kInternalKeySuffix.
  void seek(std::string_view target) override { iter_.seek(encode_search_key(target, &tmp_)); }
  void seek_for_prev(std::string_view target) override {
    iter_.seek_for_prev(encode_search_key(target, &tmp_));
  }
  void next() override { iter_.next(); }
  void prev() override { iter_.prev(); }
  std::string_view key() const override { return entry_key(iter_.key()); }
  std::string_view value() const override { return entry_value(iter_.key()); }
  Status status() const override { return Status(); }

 private:
  EntryList::Iterator iter_;
  std::string tmp_;
};

// Fills *out from `entry`, one version.
void read_entry(const char* entry, MemTable::GetResult* out) {
  const std::string_view ikey = entry_key(entry);
  const uint64_t trailer = extract_trailer(ikey);
  out->kind = static_cast<ValueKind>(trailer & 0xff);
  out->sequence = trailer >> 8;
  out->timestamp = extract_timestamp(ikey);
  out->value = out->kind == ValueKind::Value ? entry_value(entry) : std::string_view();
}

}  // namespace

struct MemTable::Rep {
  Rep(size_t arena_block_size, size_t expected_keys, std::shared_ptr<MemoryBlocks> blocks)
      : arena(arena_block_size, 0, blocks),
        index(expected_keys, &entry_user_key, &entry_is_newer, std::move(blocks)) {}
  Arena arena;
  KeyIndex index;
  EntryList list{EntryComparator(), &arena};
  std::atomic<uint64_t> num_entries{0};
  std::atomic<SequenceNumber> largest_sequence{0};
  std::atomic<uint64_t> largest_commit_timestamp{0};
};

MemTable::MemTable(size_t arena_block_size, size_t expected_keys,
                   std::shared_ptr<MemoryBlocks> blocks)
    : rep_(std::make_unique<Rep>(arena_block_size, expected_keys, std::move(blocks))) {}

MemTable::~MemTable() = default;

void MemTable::add(SequenceNumber seq, ValueKind kind, std::string_view user_key,
                   std::string_view value, uint64_t timestamp) {
  assert(seq <= kMaxSequenceNumber);
  const size_t ikey_len = user_key.size() + kInternalKeySuffix;
  const size_t len =
      varint_length(ikey_len) + ikey_len + varint_length(value.size()) + value.size();
  const char* entry = nullptr;
  // The entry goes right after its node's links, so a search step reads one stretch of memory.
  rep_->list.insert_with_room(len, [&](char* buf) -> const char* {
    entry = buf;
    char* p = encode_varint32(buf, static_cast<uint32_t>(ikey_len));
    std::memcpy(p, user_key.data(), user_key.size());
    p += user_key.size();
    encode_fixed64(p, pack_trailer(seq, kind));
    encode_fixed64(p + 8, timestamp);
    p += kInternalKeySuffix;
    p = encode_varint32(p, static_cast<uint32_t>(value.size()));
    if (!value.empty()) std::memcpy(p, value.data(), value.size());
    assert(p + value.size() == buf + len);
    return buf;
  });
  rep_->index.put(user_key, entry);  // after the link: see KeyIndex's ordering note
  rep_->num_entries.fetch_add(1, std::memory_order_release);
  if (seq > rep_->largest_sequence.load(std::memory_order_relaxed)) {
    rep_->largest_sequence.store(seq, std::memory_order_release);
  }
}

bool MemTable::get(std::string_view user_key, SequenceNumber snapshot, GetResult* out) const {
  const char* newest = nullptr;
  switch (rep_->index.find(user_key, &newest)) {
    case KeyIndex::Lookup::Absent:
      return false;
    case KeyIndex::Lookup::Found:
      read_entry(newest, out);
      if (out->sequence <= snapshot) return true;
      break;  // written after the snapshot: the version it sees is older, in the skiplist
    case KeyIndex::Lookup::Unknown:
      break;
  }
  if (snapshot > kMaxSequenceNumber) snapshot = kMaxSequenceNumber;
  const SeekEntry target(user_key, snapshot);
  EntryList::Iterator iter(&rep_->list);
  iter.seek(target.entry());
  if (!iter.valid()) return false;
  if (compare_user_keys(entry_user_key(iter.key()), user_key) != 0) return false;
  read_entry(iter.key(), out);
  return true;
}

bool MemTable::may_contain(std::string_view user_key) const {
  const char* newest = nullptr;
  return rep_->index.find(user_key, &newest) != KeyIndex::Lookup::Absent;
}

std::unique_ptr<InternalIterator> MemTable::new_iterator() const {
  return std::make_unique<MemTableIterator>(&rep_->list);
}

size_t MemTable::approximate_memory_usage() const {
  return rep_->arena.memory_usage() + rep_->index.memory_usage();
}

size_t MemTable::distinct_keys() const { return rep_->index.keys(); }

uint64_t MemTable::num_entries() const { return rep_->num_entries.load(std::memory_order_acquire); }

void MemTable::note_commit_timestamp(uint64_t ts) {
  // One writer at a time (the commit leader, or recovery), as for add().
  if (ts > rep_->largest_commit_timestamp.load(std::memory_order_relaxed)) {
    rep_->largest_commit_timestamp.store(ts, std::memory_order_release);
  }
}

uint64_t MemTable::largest_commit_timestamp() const {
  return rep_->largest_commit_timestamp.load(std::memory_order_acquire);
}

SequenceNumber MemTable::largest_sequence() const {
  return rep_->largest_sequence.load(std::memory_order_acquire);
}

}  // namespace skv
