#include "native/migrate/rocksdb/merge_iterator.h"

#include "native/migrate/rocksdb/decode.h"

namespace skv::migration::rocksdb {

bool entry_before(const ParsedEntry& a, const ParsedEntry& b, bool ts) {
  if (ts && a.user_key.size() >= 8 && b.user_key.size() >= 8) {
    std::string_view ak = a.user_key.substr(0, a.user_key.size() - 8);
    std::string_view bk = b.user_key.substr(0, b.user_key.size() - 8);
    if (int c = ak.compare(bk); c != 0) return c < 0;
    uint64_t at = load64(a.user_key.data() + ak.size());
    uint64_t bt = load64(b.user_key.data() + bk.size());
    if (at != bt) return at > bt;
  } else if (int c = a.user_key.compare(b.user_key); c != 0) {
    return c < 0;
  }
  if (a.seq != b.seq) return a.seq > b.seq;
  return a.type > b.type;
}

MergeIterator::MergeIterator(std::vector<const TableReader*> tables,
                             const std::vector<MemEntry>* mem, bool ts)
    : mem_(mem), ts_(ts) {
  for (const TableReader* t : tables) {
    Cursor c;
    c.table = std::make_unique<TableIter>(t);
    cursors_.push_back(std::move(c));
  }
  cursors_.emplace_back();  // the WAL's entries
}

bool MergeIterator::advance(Cursor* c) {
  if (c->table) {
    c->valid = c->table->next();
    if (!c->valid && !c->table->status().ok()) {
      status_ = c->table->status();
      return false;
    }
    if (c->valid) c->e = c->table->entry();
    return true;
  }
  c->valid = c->mem_pos < mem_->size();
  if (c->valid) {
    const MemEntry& m = (*mem_)[c->mem_pos++];
    c->e = ParsedEntry{m.key, m.seq, m.type, m.value};
  }
  return true;
}

bool MergeIterator::next() {
  if (!status_.ok()) return false;
  if (!started_) {
    started_ = true;
    for (Cursor& c : cursors_) {
      if (!advance(&c)) return false;
    }
  } else if (current_index_ >= 0) {
    if (!advance(&cursors_[static_cast<size_t>(current_index_)])) return false;
  }
  // A linear pick: a family has few live files, and each comparison is cheap.
  current_index_ = -1;
  for (size_t i = 0; i < cursors_.size(); ++i) {
    if (!cursors_[i].valid) continue;
    if (current_index_ < 0 ||
        entry_before(cursors_[i].e, cursors_[static_cast<size_t>(current_index_)].e, ts_)) {
      current_index_ = static_cast<int>(i);
    }
  }
  if (current_index_ < 0) return false;
  current_ = cursors_[static_cast<size_t>(current_index_)].e;
  return true;
}

uint64_t MergeIterator::table_bytes_read() const {
  uint64_t n = 0;
  for (const Cursor& c : cursors_) {
    if (c.table) n += c.table->bytes_read();
  }
  return n;
}

}  // namespace skv::migration::rocksdb
