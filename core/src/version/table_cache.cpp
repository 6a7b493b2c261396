#include "version/table_cache.h"
#include "util/status_macros.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "cache/block_cache.h"
#include "format/file_names.h"

namespace skv {

namespace {

// A table pinned to a FileMetaData, counted in the cache's budget while it lives.
class PinnedTable final : public TablePin::Holder {
 public:
  PinnedTable(std::shared_ptr<Table> owned, std::shared_ptr<std::atomic<size_t>> count)
      : owned_(std::move(owned)), count_(std::move(count)) {
    table = owned_.get();
  }
  ~PinnedTable() override { count_->fetch_sub(1, std::memory_order_relaxed); }

 private:
  std::shared_ptr<Table> owned_;
  std::shared_ptr<std::atomic<size_t>> count_;
};

size_t lru_share(size_t max_open) { return std::max<size_t>(1, max_open / 8); }

}  // namespace

TableCache::TableCache(Storage* storage, std::shared_ptr<BlockCache> block_cache, size_t max_open,
                       crypto::CipherSource* ciphers)
    : storage_(storage),
      block_cache_(std::move(block_cache)),
      max_lru_(lru_share(max_open)),
      max_pinned_(max_open > lru_share(max_open) ? max_open - lru_share(max_open) : 0),
      pinned_(std::make_shared<std::atomic<size_t>>(0)),
      ciphers_(ciphers) {}

TableCache::~TableCache() = default;

Result<TableCache::Ref> TableCache::get(const FileMetaData& f) {
  if (Table* t = f.table.get()) return Ref{t, nullptr};
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<Table> table, get_unpinned(f.number));

  std::shared_ptr<Table> dropped;  // released after the lock
  std::lock_guard<std::mutex> lock(mu_);
  Table* pinned = f.table.get();  // by another thread meanwhile
  if (pinned == nullptr) {
    if (pinned_->load(std::memory_order_relaxed) >= max_pinned_) return Ref{table.get(), table};
    // Pins are installed only under mu_, so this one cannot lose the race.
    pinned_->fetch_add(1, std::memory_order_relaxed);
    std::unique_ptr<TablePin::Holder> holder = std::make_unique<PinnedTable>(table, pinned_);
    const bool installed = f.table.install(holder);
    assert(installed);
    (void)installed;
    pinned = table.get();
  }
  // The pin owns the table now. Whatever the LRU holds for the file (this table, or a second copy
  // a racing thread opened) gives its place to tables that are not pinned.
  auto it = map_.find(f.number);
  if (it != map_.end()) {
    dropped = std::move(it->second.table);
    lru_.erase(it->second.lru_pos);
    map_.erase(it);
  }
  return Ref{pinned, nullptr};
}

Result<std::shared_ptr<Table>> TableCache::get_unpinned(uint64_t file_number) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(file_number);
    if (it != map_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      return it->second.table;
    }
  }

  // Open outside the map's lock: it reads the footer, index and filter. close() waits for it.
  const std::string name = table_file_name(file_number);
  std::shared_ptr<Table> table;
  {
    std::shared_lock<std::shared_mutex> using_storage(storage_mu_);
    if (storage_ == nullptr) return Status::closed("table " + name + ": the tree is closed");
    auto file = storage_->objects().open(name);
    if (!file.ok()) {
      Status s = file.status();
      if (s.is_not_found()) {
        return Status::corruption(storage_->location() + ": table " + name +
                                  " is missing: " + s.message());
      }
      return s;
    }
    SKV_ASSIGN_OR_RETURN(table,
                         Table::open(std::move(*file), file_number, block_cache_.get(), ciphers_));
  }

  std::shared_ptr<Table> dropped;  // released after the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(file_number);
  if (it != map_.end()) {
    // Another thread opened it meanwhile; share theirs.
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
    return it->second.table;
  }
  lru_.push_front(file_number);
  map_.emplace(file_number, Entry{table, lru_.begin()});
  while (map_.size() > max_lru_) {
    uint64_t victim = lru_.back();
    lru_.pop_back();
    auto v = map_.find(victim);
    dropped = std::move(v->second.table);
    map_.erase(v);
  }
  return table;
}

void TableCache::evict(uint64_t file_number) {
  std::shared_ptr<Table> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(file_number);
    if (it != map_.end()) {
      dropped = std::move(it->second.table);
      lru_.erase(it->second.lru_pos);
      map_.erase(it);
    }
  }
  if (block_cache_ != nullptr) block_cache_->erase_file(file_number);
}

void TableCache::close() {
  std::unique_lock<std::shared_mutex> lock(storage_mu_);
  storage_ = nullptr;
}

size_t TableCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}

}  // namespace skv
