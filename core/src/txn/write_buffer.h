// WriteBuffer: a transaction's uncommitted writes, sorted by key, plus the undo log that makes
// savepoints work.
//
// The map is shared copy-on-write: an iterator created from the buffer keeps the version of the
// map it saw, and later writes by the transaction copy the map first. So iterators never see
// writes made after they were created, and never dangle.
//
// Thread safety: used by its transaction's thread only; snapshots handed to iterators are
// immutable.

#ifndef SKV_TXN_WRITE_BUFFER_H_
#define SKV_TXN_WRITE_BUFFER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iterator/user_iterator.h"
#include "skv/status.h"
#include "wal/write_batch.h"

namespace skv {

struct BufferedWrite {
  bool is_delete = false;
  std::string value;
  uint64_t timestamp = 0;  // 0: stamped with the commit time
};

using WriteMap = std::map<std::string, BufferedWrite, std::less<>>;

class WriteBuffer {
 public:
  WriteBuffer() : map_(std::make_shared<WriteMap>()) {}

  void put(std::string_view key, std::string_view value, uint64_t timestamp);
  void del(std::string_view key, uint64_t timestamp);
  // The buffered write for `key`, or null. Valid until the next change to the buffer.
  const BufferedWrite* find(std::string_view key) const;

  bool empty() const { return map_->empty(); }
  size_t size() const { return map_->size(); }
  // Bytes of keys and values held, for limits and batch sizing.
  size_t bytes() const { return bytes_; }
  const WriteMap& map() const { return *map_; }
  // The current map, shared: it never changes after this call (writes copy it first).
  std::shared_ptr<const WriteMap> shared_map() const { return map_; }

  void set_savepoint();
  // False if there is no savepoint.
  bool rollback_to_savepoint();
  void clear();

  // The buffered writes as a batch for the commit pipeline, in key order; writes without a
  // timestamp of their own get `commit_time`.
  WriteBatch to_batch(uint64_t commit_time) const;

  // An immutable view for an iterator over [lower, upper) (empty bounds are open).
  std::unique_ptr<UserIterator> new_iterator(std::string lower, std::string upper) const;

 private:
  struct Undo {
    std::string key;
    std::optional<BufferedWrite> previous;  // nullopt: the key was not in the buffer
  };
  void write(std::string_view key, BufferedWrite w);
  WriteMap& mutable_map();

  std::shared_ptr<WriteMap> map_;
  size_t bytes_ = 0;
  std::vector<Undo> undo_;          // kept only while a savepoint exists
  std::vector<size_t> savepoints_;  // undo_ sizes
};

}  // namespace skv

#endif  // SKV_TXN_WRITE_BUFFER_H_
