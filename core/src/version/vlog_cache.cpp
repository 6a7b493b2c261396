#include "version/vlog_cache.h"

#include <utility>

#include "util/status_macros.h"
#include "vlog/value_pointer.h"

namespace skv {
namespace {

// Reads the values of an iterator's ValuePointer entries through a shared VlogCache.
class CacheResolver final : public ValueResolver {
 public:
  CacheResolver(std::shared_ptr<VlogCache> cache, bool fill_cache)
      : cache_(std::move(cache)), fill_cache_(fill_cache) {}
  Status resolve(std::string_view user_key, std::string_view pointer, std::string* value) override {
    return cache_->read(user_key, pointer, value, fill_cache_);
  }

 private:
  const std::shared_ptr<VlogCache> cache_;
  const bool fill_cache_;
};

// The cache key of a chunk: entry offsets stay far below 2^63, so chunk keys never meet them.
constexpr uint64_t kChunkKey = uint64_t{1} << 63;

// A cached chunk: the bytes read (fewer than kReadChunk at the end of the file). Not a
// std::string, which would zero the buffer before the read fills it.
struct Chunk {
  std::unique_ptr<char[]> bytes;
  size_t size = 0;
  std::string_view view() const { return {bytes.get(), size}; }
};

}  // namespace

VlogCache::VlogCache(Storage* storage, size_t value_capacity, size_t max_open,
                     crypto::CipherSource* ciphers)
    : storage_(storage),
      ciphers_(ciphers),
      values_(value_capacity),
      chunks_(value_capacity >= kMinChunks * kReadChunk),
      max_open_(max_open == 0 ? 1 : max_open) {}

VlogCache::~VlogCache() = default;

Result<std::shared_ptr<const vlog::VlogReader>> VlogCache::reader(uint64_t number) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = readers_.find(number);
    if (it != readers_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      return it->second.reader;
    }
  }
  std::shared_ptr<const vlog::VlogReader> opened;
  {
    std::shared_lock<std::shared_mutex> using_storage(storage_mu_);
    if (storage_ == nullptr) {
      return Status::closed("value log " + std::to_string(number) + ": the tree is closed");
    }
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<vlog::VlogReader> r,
                         vlog::VlogReader::open(storage_->logs(), number, ciphers_));
    opened = std::move(r);
  }
  std::shared_ptr<const vlog::VlogReader> dropped;  // released after the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = readers_.find(number);
  if (it != readers_.end()) {
    // Another thread opened it meanwhile; share theirs.
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
    return it->second.reader;
  }
  lru_.push_front(number);
  readers_.emplace(number, Entry{opened, lru_.begin()});
  while (readers_.size() > max_open_) {
    auto victim = readers_.find(lru_.back());
    lru_.pop_back();
    dropped = std::move(victim->second.reader);
    readers_.erase(victim);
  }
  return opened;
}

Status VlogCache::read(std::string_view user_key, std::string_view encoded_pointer,
                       std::string* value, bool fill_cache) {
  Result<vlog::ValuePointer> decoded = vlog::decode_value_pointer(encoded_pointer);
  if (!decoded.ok()) {
    return Status::corruption("value pointer of key \"" + std::string(user_key) +
                              "\": " + decoded.status().message());
  }
  const vlog::ValuePointer p = *decoded;
  if (std::shared_ptr<const void> hit = values_.lookup(p.file_number, p.offset)) {
    value->assign(*static_cast<const std::string*>(hit.get()));
    return Status::OK();
  }
  Result<std::shared_ptr<const vlog::VlogReader>> r = reader(p.file_number);
  if (!r.ok()) {
    const Status& s = r.status();
    if (!s.is_corruption()) return s;
    return Status::corruption(s.message() + " (value at offset " + std::to_string(p.offset) + ")");
  }
  const uint64_t chunk = p.offset / kReadChunk;
  const bool in_one_chunk =
      chunks_ && p.size <= kReadChunk && (p.offset + p.size - 1) / kReadChunk == chunk;
  if (in_one_chunk) {
    const uint64_t start = chunk * kReadChunk;
    if (std::shared_ptr<const void> hit = values_.lookup(p.file_number, kChunkKey | chunk)) {
      return (*r)->get_in(p, user_key, static_cast<const Chunk*>(hit.get())->view(), start, value);
    }
    if (fill_cache) {
      auto read = std::make_shared<Chunk>();
      read->bytes.reset(new char[kReadChunk]);  // not zeroed: the read fills it
      std::string_view got;
      SKV_RETURN_IF_ERROR((*r)->read_span(start, kReadChunk, read->bytes.get(), &got));
      read->size = got.size();
      // A chunk cut short by the end of the file that does not hold the whole entry is not
      // used: the entry is read alone below, which reports what is wrong with it.
      if (p.offset + p.size <= start + got.size()) {
        SKV_RETURN_IF_ERROR((*r)->get_in(p, user_key, got, start, value));
        values_.insert(p.file_number, kChunkKey | chunk, std::move(read), kReadChunk);
        return Status::OK();
      }
    }
  }
  SKV_RETURN_IF_ERROR((*r)->get(p, user_key, value));
  if (fill_cache && !in_one_chunk) {
    values_.insert(p.file_number, p.offset, std::make_shared<const std::string>(*value),
                   value->size());
  }
  return Status::OK();
}

std::shared_ptr<ValueResolver> VlogCache::resolver(bool fill_cache) {
  return std::make_shared<CacheResolver>(shared_from_this(), fill_cache);
}

void VlogCache::evict(uint64_t number) {
  std::shared_ptr<const vlog::VlogReader> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = readers_.find(number);
    if (it != readers_.end()) {
      dropped = std::move(it->second.reader);
      lru_.erase(it->second.lru_pos);
      readers_.erase(it);
    }
  }
  values_.erase_file(number);
}

void VlogCache::close() {
  std::unique_lock<std::shared_mutex> lock(storage_mu_);
  storage_ = nullptr;
}

size_t VlogCache::open_readers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return readers_.size();
}

}  // namespace skv
