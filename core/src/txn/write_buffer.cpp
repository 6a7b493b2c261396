#include "txn/write_buffer.h"

namespace skv {

WriteMap& WriteBuffer::mutable_map() {
  if (map_.use_count() > 1) map_ = std::make_shared<WriteMap>(*map_);
  return *map_;
}

void WriteBuffer::write(std::string_view key, BufferedWrite w) {
  WriteMap& m = mutable_map();
  auto it = m.find(key);
  if (!savepoints_.empty()) {
    Undo u{std::string(key), std::nullopt};
    if (it != m.end()) u.previous = it->second;
    undo_.push_back(std::move(u));
  }
  if (it == m.end()) {
    bytes_ += key.size() + w.value.size();
    m.emplace(std::string(key), std::move(w));
  } else {
    bytes_ = bytes_ - it->second.value.size() + w.value.size();
    it->second = std::move(w);
  }
}

void WriteBuffer::put(std::string_view key, std::string_view value, uint64_t timestamp) {
  write(key, BufferedWrite{false, std::string(value), timestamp});
}

void WriteBuffer::del(std::string_view key, uint64_t timestamp) {
  write(key, BufferedWrite{true, std::string(), timestamp});
}

const BufferedWrite* WriteBuffer::find(std::string_view key) const {
  auto it = map_->find(key);
  return it == map_->end() ? nullptr : &it->second;
}

WriteBatch WriteBuffer::to_batch(uint64_t commit_time) const {
  WriteBatch batch;
  for (const auto& [key, w] : *map_) {
    const uint64_t ts = w.timestamp != 0 ? w.timestamp : commit_time;
    if (w.is_delete) {
      batch.del(key, ts);
    } else {
      batch.put(key, w.value, ts);
    }
  }
  return batch;
}

void WriteBuffer::set_savepoint() { savepoints_.push_back(undo_.size()); }

bool WriteBuffer::rollback_to_savepoint() {
  if (savepoints_.empty()) return false;
  size_t mark = savepoints_.back();
  savepoints_.pop_back();
  WriteMap& m = mutable_map();
  while (undo_.size() > mark) {
    Undo u = std::move(undo_.back());
    undo_.pop_back();
    auto it = m.find(u.key);
    if (it != m.end()) {
      bytes_ -= it->first.size() + it->second.value.size();
      m.erase(it);
    }
    if (u.previous) {
      bytes_ += u.key.size() + u.previous->value.size();
      m.emplace(std::move(u.key), std::move(*u.previous));
    }
  }
  if (savepoints_.empty()) undo_.clear();
  return true;
}

void WriteBuffer::clear() {
  map_ = std::make_shared<WriteMap>();
  bytes_ = 0;
  undo_.clear();
  savepoints_.clear();
}

namespace {

class BufferIterator final : public UserIterator {
 public:
  BufferIterator(std::shared_ptr<const WriteMap> map, std::string lower, std::string upper)
      : map_(std::move(map)),
        lower_(std::move(lower)),
        upper_(std::move(upper)),
        it_(map_->end()) {}

  bool valid() const override { return it_ != map_->end(); }
  void seek_first() override {
    it_ = lower_.empty() ? map_->begin() : map_->lower_bound(lower_);
    clamp_upper();
  }
  void seek_last() override {
    auto end = upper_.empty() ? map_->end() : map_->lower_bound(upper_);
    if (end == map_->begin()) {
      it_ = map_->end();
      return;
    }
    it_ = std::prev(end);
    clamp_lower();
  }
  void seek(std::string_view key) override {
    std::string_view target = key;
    if (!lower_.empty() && target < lower_) target = lower_;
    it_ = map_->lower_bound(target);
    clamp_upper();
  }
  void next() override {
    ++it_;
    clamp_upper();
  }
  void prev() override {
    if (it_ == map_->begin()) {
      it_ = map_->end();
      return;
    }
    --it_;
    clamp_lower();
  }
  std::string_view key() const override { return it_->first; }
  std::string_view value() const override { return it_->second.value; }
  uint64_t timestamp() const override { return it_->second.timestamp; }
  bool is_delete() const override { return it_->second.is_delete; }
  Status status() const override { return Status(); }

 private:
  void clamp_upper() {
    if (it_ != map_->end() && !upper_.empty() && it_->first >= upper_) it_ = map_->end();
  }
  void clamp_lower() {
    if (it_ != map_->end() && !lower_.empty() && it_->first < lower_) it_ = map_->end();
  }

  std::shared_ptr<const WriteMap> map_;
  std::string lower_, upper_;
  WriteMap::const_iterator it_;
};

}  // namespace

std::unique_ptr<UserIterator> WriteBuffer::new_iterator(std::string lower,
                                                        std::string upper) const {
  return std::make_unique<BufferIterator>(map_, std::move(lower), std::move(upper));
}

}  // namespace skv
