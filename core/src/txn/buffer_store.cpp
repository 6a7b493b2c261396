#include "txn/buffer_store.h"

#include <cassert>
#include <cstring>
#include <new>

namespace skv {

namespace {

BufferEntry* construct_entry(char* mem, uint64_t seq, std::string_view key) {
  auto* e = new (mem) BufferEntry();
  e->seq = seq;
  e->key_size = static_cast<uint16_t>(key.size());
  if (!key.empty()) std::memcpy(mem + sizeof(BufferEntry), key.data(), key.size());
  return e;
}

}  // namespace

BufferEntry* BufferStore::add(uint64_t seq, std::string_view key, std::string_view value,
                              bool is_delete, uint64_t timestamp) {
  assert(!key.empty() && key.size() <= UINT16_MAX && value.size() <= UINT32_MAX);
  char* mem = arena.allocate_aligned(BufferEntry::allocation_size(key.size(), value.size()));
  BufferEntry* e = construct_entry(mem, seq, key);
  e->value_size = static_cast<uint32_t>(value.size());
  e->is_delete = is_delete;
  e->timestamp = timestamp;
  if (!value.empty()) {
    std::memcpy(mem + sizeof(BufferEntry) + key.size(), value.data(), value.size());
  }
  list.insert(e);
  return e;
}

const BufferEntry* find_visible(BufferStore::List::Iterator* it, BufferProbe* probe,
                                std::string_view key, uint64_t view) {
  // Entries of `key` with seq <= view start here, newest first; some may have been undone.
  for (it->seek(probe->make(key, view)); it->valid(); it->next()) {
    const BufferEntry* e = it->key();
    if (e->key() != key) return nullptr;
    if (e->visible_in(view)) return e;
  }
  return nullptr;
}

}  // namespace skv
