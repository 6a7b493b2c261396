// TablePin: the open Table of one file, kept beside that file's FileMetaData.
//
// A point read probes a table per level. Finding the open table through the TableCache takes its
// mutex, a hash lookup, an LRU move and a shared_ptr copy every time; a pin is one atomic load.
// The TableCache fills the pin the first time the file is read (TableCache::get), up to its budget
// of pinned tables, and the table stays open until the FileMetaData is destroyed, i.e. until no
// Version (and no compaction or iterator) names the file any more.
//
// A pin is a cache, not part of what the metadata describes: a copied or assigned FileMetaData
// starts with an empty pin, so a table is never pinned to the metadata of another file.
//
// Thread safety: get() and install() may be called from many threads at once; install() succeeds
// for at most one holder over the pin's life.

#ifndef SKV_VERSION_TABLE_PIN_H_
#define SKV_VERSION_TABLE_PIN_H_

#include <atomic>
#include <memory>

namespace skv {

class Table;

class TablePin {
 public:
  // What a filled pin owns: the table, and whatever the owner counts (TableCache's budget).
  struct Holder {
    virtual ~Holder() = default;
    Table* table = nullptr;  // non-null, valid while the holder lives
  };

  TablePin() = default;
  TablePin(const TablePin&) noexcept {}
  TablePin& operator=(const TablePin& other) noexcept {
    if (this != &other) delete holder_.exchange(nullptr, std::memory_order_acq_rel);
    return *this;
  }
  ~TablePin() { delete holder_.load(std::memory_order_acquire); }

  // The pinned table, or null if none is pinned yet.
  Table* get() const {
    const Holder* h = holder_.load(std::memory_order_acquire);
    return h == nullptr ? nullptr : h->table;
  }

  // Takes `h` if the pin is empty and returns true; otherwise leaves `h` with the caller and
  // returns false. `h->table` must be non-null.
  bool install(std::unique_ptr<Holder>& h) const {
    Holder* expected = nullptr;
    if (!holder_.compare_exchange_strong(expected, h.get(), std::memory_order_acq_rel)) {
      return false;
    }
    h.release();
    return true;
  }

 private:
  mutable std::atomic<Holder*> holder_{nullptr};
};

}  // namespace skv

#endif  // SKV_VERSION_TABLE_PIN_H_
