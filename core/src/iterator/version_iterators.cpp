#include "iterator/version_iterators.h"

#include <algorithm>
#include <vector>

namespace skv {
namespace {

struct KeyVersion {
  uint64_t timestamp = 0;
  SequenceNumber sequence = 0;
  bool deleted = false;
  std::string value;
};

// Newest timestamp first; at equal timestamps the later commit first.
bool newer(const KeyVersion& a, const KeyVersion& b) {
  if (a.timestamp != b.timestamp) return a.timestamp > b.timestamp;
  return a.sequence > b.sequence;
}

// A cursor over user keys that holds, for the key it is on, every version the snapshot sees,
// ordered by newer(). Keys with no such version are passed over. Going forward the input rests
// on the first entry of the next key; going backward on the last entry of the previous key.
class VersionCursor {
 public:
  VersionCursor(std::unique_ptr<InternalIterator> input, SequenceNumber snapshot, std::string lower,
                std::string upper, bool copy_values, bool keep_tombstones,
                std::shared_ptr<ValueResolver> resolver)
      : resolver_(std::move(resolver)),
        iter_(std::move(input)),
        snapshot_(snapshot),
        lower_(std::move(lower)),
        upper_(std::move(upper)),
        copy_values_(copy_values),
        keep_tombstones_(keep_tombstones) {}

  bool valid() const { return valid_; }
  const std::string& key() const { return key_; }
  const std::vector<KeyVersion>& versions() const { return versions_; }
  Status status() const { return status_.ok() ? iter_->status() : status_; }

  void seek_first() {
    if (!lower_.empty()) {
      seek(lower_);
      return;
    }
    start(Direction::Forward);
    iter_->seek_first();
    load_forward();
  }

  void seek(std::string_view user_key) {
    start(Direction::Forward);
    std::string_view target = user_key;
    if (!lower_.empty() && compare_user_keys(target, lower_) < 0) target = lower_;
    iter_->seek(make_seek_key(target, kMaxSequenceNumber));
    load_forward();
  }

  void seek_last() {
    start(Direction::Backward);
    if (upper_.empty()) {
      iter_->seek_last();
    } else {
      seek_before_user_key(iter_.get(), upper_);
    }
    load_backward();
  }

  // REQUIRES: valid().
  void next_key() {
    if (direction_ == Direction::Backward) {
      // The input sits before this key's entries: go to them, then past them.
      direction_ = Direction::Forward;
      iter_->seek(make_seek_key(key_, kMaxSequenceNumber));
      ParsedInternalKey ik;
      while (iter_->valid()) {
        if (!parse(&ik)) return;
        if (compare_user_keys(ik.user_key, key_) > 0) break;
        iter_->next();
      }
    }
    load_forward();
  }

  // REQUIRES: valid().
  void prev_key() {
    if (direction_ == Direction::Forward) {
      // The input sits after this key's entries: step back before the first of them.
      direction_ = Direction::Backward;
      seek_before_user_key(iter_.get(), key_);
      ParsedInternalKey ik;
      while (iter_->valid()) {
        if (!parse(&ik)) return;
        if (compare_user_keys(ik.user_key, key_) < 0) break;
        iter_->prev();
      }
    }
    load_backward();
  }

 private:
  enum class Direction { Forward, Backward };

  void start(Direction d) {
    direction_ = d;
    status_ = Status();
  }

  bool parse(ParsedInternalKey* out) {
    if (parse_internal_key(iter_->key(), out)) return true;
    status_ = Status::corruption("malformed internal key in iterator input");
    valid_ = false;
    return false;
  }

  // False on an error reading a separated value (status_ holds it).
  bool collect(const ParsedInternalKey& ik) {
    if (ik.sequence > snapshot_) return true;
    const bool deleted = ik.kind == ValueKind::Delete;
    if (deleted && !keep_tombstones_) return true;
    KeyVersion v;
    v.timestamp = ik.timestamp;
    v.sequence = ik.sequence;
    v.deleted = deleted;
    if (copy_values_ && ik.kind == ValueKind::Value) {
      v.value.assign(iter_->value());
    } else if (copy_values_ && ik.kind == ValueKind::ValuePointer) {
      Status s = resolver_ == nullptr
                     ? Status::corruption("a value pointer where none was expected")
                     : resolver_->resolve(ik.user_key, iter_->value(), &v.value);
      if (!s.ok()) {
        status_ = std::move(s);
        valid_ = false;
        versions_.clear();
        return false;
      }
    }
    versions_.push_back(std::move(v));
    return true;
  }

  // Settles on the first key, at or after the input's position, that has versions.
  void load_forward() {
    ParsedInternalKey ik;
    while (iter_->valid()) {
      if (!parse(&ik)) return;
      if (!upper_.empty() && compare_user_keys(ik.user_key, upper_) >= 0) break;
      key_.assign(ik.user_key);
      versions_.clear();
      while (true) {
        if (!collect(ik)) return;
        iter_->next();
        if (!iter_->valid()) break;
        if (!parse(&ik)) return;
        if (ik.user_key != key_) break;
      }
      if (!versions_.empty() && settle()) return;
    }
    finish_invalid();
  }

  // Settles on the last key, at or before the input's position, that has versions.
  void load_backward() {
    ParsedInternalKey ik;
    while (iter_->valid()) {
      if (!parse(&ik)) return;
      if (!lower_.empty() && compare_user_keys(ik.user_key, lower_) < 0) break;
      key_.assign(ik.user_key);
      versions_.clear();
      while (true) {
        if (!collect(ik)) return;
        iter_->prev();
        if (!iter_->valid()) break;
        if (!parse(&ik)) return;
        if (ik.user_key != key_) break;
      }
      if (!versions_.empty() && settle()) return;
    }
    finish_invalid();
  }

  // The key's versions are complete unless the input stopped on an error.
  bool settle() {
    if (!iter_->valid() && !iter_->status().ok()) return false;
    std::sort(versions_.begin(), versions_.end(), newer);
    valid_ = true;
    return true;
  }

  void finish_invalid() {
    valid_ = false;
    versions_.clear();
    Status s = iter_->status();
    if (!s.ok()) status_ = std::move(s);
  }

  // Before iter_: the input (tables) goes first, the value log reader after it.
  const std::shared_ptr<ValueResolver> resolver_;
  std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber snapshot_;
  const std::string lower_;
  const std::string upper_;
  const bool copy_values_;
  const bool keep_tombstones_;
  Direction direction_ = Direction::Forward;
  bool valid_ = false;
  std::string key_;
  std::vector<KeyVersion> versions_;
  Status status_;
};

class AsOfIterator final : public UserIterator {
 public:
  AsOfIterator(std::unique_ptr<InternalIterator> input, SequenceNumber snapshot, std::string lower,
               std::string upper, uint64_t timestamp, bool keys_only,
               std::shared_ptr<ValueResolver> resolver)
      : cursor_(std::move(input), snapshot, std::move(lower), std::move(upper), !keys_only, true,
                keys_only ? nullptr : std::move(resolver)),
        timestamp_(timestamp) {}

  bool valid() const override { return cursor_.valid(); }
  void seek_first() override {
    cursor_.seek_first();
    settle(true);
  }
  void seek_last() override {
    cursor_.seek_last();
    settle(false);
  }
  void seek(std::string_view user_key) override {
    cursor_.seek(user_key);
    settle(true);
  }
  void next() override {
    cursor_.next_key();
    settle(true);
  }
  void prev() override {
    cursor_.prev_key();
    settle(false);
  }
  std::string_view key() const override { return cursor_.key(); }
  std::string_view value() const override { return chosen_->value; }
  uint64_t timestamp() const override { return chosen_->timestamp; }
  Status status() const override { return cursor_.status(); }

 private:
  // Moves on (in the given direction) until a key whose version as of timestamp_ is live.
  void settle(bool forward) {
    while (cursor_.valid()) {
      chosen_ = nullptr;
      for (const KeyVersion& v : cursor_.versions()) {
        if (v.timestamp <= timestamp_) {
          chosen_ = &v;
          break;
        }
      }
      if (chosen_ != nullptr && !chosen_->deleted) return;
      if (forward) {
        cursor_.next_key();
      } else {
        cursor_.prev_key();
      }
    }
  }

  VersionCursor cursor_;
  const uint64_t timestamp_;
  const KeyVersion* chosen_ = nullptr;
};

class HistoryIterator final : public UserIterator {
 public:
  HistoryIterator(std::unique_ptr<InternalIterator> input, SequenceNumber snapshot,
                  std::string lower, std::string upper, bool include_tombstones,
                  std::shared_ptr<ValueResolver> resolver)
      : cursor_(std::move(input), snapshot, std::move(lower), std::move(upper), true,
                include_tombstones, std::move(resolver)) {}

  bool valid() const override { return cursor_.valid(); }
  void seek_first() override {
    cursor_.seek_first();
    index_ = 0;
  }
  void seek_last() override {
    cursor_.seek_last();
    index_ = cursor_.valid() ? cursor_.versions().size() - 1 : 0;
  }
  void seek(std::string_view user_key) override {
    cursor_.seek(user_key);
    index_ = 0;
  }
  void next() override {
    if (index_ + 1 < cursor_.versions().size()) {
      ++index_;
      return;
    }
    cursor_.next_key();
    index_ = 0;
  }
  void prev() override {
    if (index_ > 0) {
      --index_;
      return;
    }
    cursor_.prev_key();
    index_ = cursor_.valid() ? cursor_.versions().size() - 1 : 0;
  }
  std::string_view key() const override { return cursor_.key(); }
  std::string_view value() const override { return current().value; }
  uint64_t timestamp() const override { return current().timestamp; }
  bool is_delete() const override { return current().deleted; }
  Status status() const override { return cursor_.status(); }

 private:
  const KeyVersion& current() const { return cursor_.versions()[index_]; }

  VersionCursor cursor_;
  size_t index_ = 0;
};

}  // namespace

std::unique_ptr<UserIterator> new_as_of_iterator(std::unique_ptr<InternalIterator> input,
                                                 SequenceNumber snapshot, std::string lower,
                                                 std::string upper, uint64_t timestamp,
                                                 bool keys_only,
                                                 std::shared_ptr<ValueResolver> resolver) {
  return std::make_unique<AsOfIterator>(std::move(input), snapshot, std::move(lower),
                                        std::move(upper), timestamp, keys_only,
                                        std::move(resolver));
}

std::unique_ptr<UserIterator> new_history_iterator(std::unique_ptr<InternalIterator> input,
                                                   SequenceNumber snapshot, std::string lower,
                                                   std::string upper, bool include_tombstones,
                                                   std::shared_ptr<ValueResolver> resolver) {
  return std::make_unique<HistoryIterator>(std::move(input), snapshot, std::move(lower),
                                           std::move(upper), include_tombstones,
                                           std::move(resolver));
}

}  // namespace skv
