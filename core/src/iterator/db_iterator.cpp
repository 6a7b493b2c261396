#include "iterator/db_iterator.h"

#include "util/byte_buffer.h"

namespace skv {
namespace {

class DBIterator final : public UserIterator {
 public:
  DBIterator(std::unique_ptr<InternalIterator> input, SequenceNumber snapshot, std::string lower,
             std::string upper, bool keys_only, std::shared_ptr<ValueResolver> resolver)
      : iter_(std::move(input)),
        snapshot_(snapshot),
        lower_(std::move(lower)),
        upper_(std::move(upper)),
        keys_only_(keys_only),
        resolver_(std::move(resolver)) {}

  bool valid() const override { return valid_; }

  void seek_first() override {
    if (!lower_.empty()) {
      seek(lower_);
      return;
    }
    direction_ = Direction::Forward;
    status_ = Status();
    iter_->seek_first();
    find_next_user_entry(false);
  }

  void seek_last() override {
    direction_ = Direction::Backward;
    status_ = Status();
    if (upper_.empty()) {
      iter_->seek_last();
    } else {
      seek_before_user_key(iter_.get(), upper_);
    }
    find_prev_user_entry();
  }

  void seek(std::string_view user_key) override {
    direction_ = Direction::Forward;
    status_ = Status();
    std::string_view target = user_key;
    if (!lower_.empty() && compare_user_keys(target, lower_) < 0) target = lower_;
    iter_->seek(make_seek_key(target, snapshot_));
    find_next_user_entry(false);
  }

  void next() override {
    if (direction_ == Direction::Backward) {
      // The input sits before the current key's entries: go back to them, then past them.
      direction_ = Direction::Forward;
      iter_->seek(make_seek_key(saved_key_, kMaxSequenceNumber));
    } else {
      saved_key_.assign(extract_user_key(iter_->key()));
      iter_->next();
    }
    find_next_user_entry(true);
  }

  void prev() override {
    if (direction_ == Direction::Forward) {
      // Step the input back past every entry of the current key.
      saved_key_.assign(extract_user_key(iter_->key()));
      while (true) {
        iter_->prev();
        if (!iter_->valid()) break;
        if (compare_user_keys(extract_user_key(iter_->key()), saved_key_) < 0) break;
      }
      direction_ = Direction::Backward;
      if (!iter_->valid()) {
        valid_ = false;
        saved_key_.clear();
        saved_value_.clear();
        check_input_status();
        return;
      }
    }
    find_prev_user_entry();
  }

  std::string_view key() const override {
    return direction_ == Direction::Forward ? extract_user_key(iter_->key())
                                            : std::string_view(saved_key_);
  }
  std::string_view value() const override {
    if (keys_only_ || !valid_) return {};
    if (pointer_ && !resolved_) {
      // The entry's value lives in a value log: read it now, once, for the entry shown.
      const std::string_view user_key = key();
      const std::string pointer(direction_ == Direction::Forward ? iter_->value()
                                                                 : std::string_view(saved_value_));
      if (!resolve(user_key, pointer, &resolved_value_)) return {};
      resolved_ = true;
    }
    if (resolved_) return resolved_value_;
    if (direction_ == Direction::Backward) return saved_value_;
    return iter_->value();
  }
  uint64_t timestamp() const override {
    return direction_ == Direction::Forward ? extract_timestamp(iter_->key()) : saved_timestamp_;
  }
  Status status() const override {
    if (!status_.ok()) return status_;
    return iter_->status();
  }

 private:
  enum class Direction { Forward, Backward };

  void check_input_status() {
    Status s = iter_->status();
    if (!s.ok()) status_ = std::move(s);
  }

  // Reads the value a ValuePointer entry points at into *out. False (and the iterator stopped
  // with the error) if it cannot be read. Called from value(), hence const over mutable state.
  bool resolve(std::string_view user_key, std::string_view pointer, std::string* out) const {
    Status s = resolver_ == nullptr
                   ? Status::corruption("a value log pointer where no value log is read")
                   : resolver_->resolve(user_key, pointer, out);
    if (s.ok()) return true;
    status_ = std::move(s);
    valid_ = false;
    return false;
  }

  bool parse(ParsedInternalKey* out) {
    if (parse_internal_key(iter_->key(), out)) return true;
    status_ = Status::corruption("malformed internal key in iterator input");
    valid_ = false;
    return false;
  }

  // Moves forward to the first visible, live entry. With `skipping`, entries of saved_key_
  // are passed over.
  void find_next_user_entry(bool skipping) {
    resolved_ = false;
    pointer_ = false;
    while (iter_->valid()) {
      ParsedInternalKey ik;
      if (!parse(&ik)) return;
      if (!upper_.empty() && compare_user_keys(ik.user_key, upper_) >= 0) break;
      if (ik.sequence <= snapshot_) {
        if (skipping && compare_user_keys(ik.user_key, saved_key_) <= 0) {
          // An older version of (or a key before) the one being skipped.
        } else {
          if (ik.kind == ValueKind::Delete) {
            saved_key_.assign(ik.user_key);
            skipping = true;
          } else {
            valid_ = true;
            pointer_ = ik.kind == ValueKind::ValuePointer && !keys_only_;
            return;
          }
        }
      }
      iter_->next();
    }
    valid_ = false;
    check_input_status();
  }

  // Moves backward to the previous visible, live key, leaving its newest visible version in
  // saved_key_/saved_value_ and the input positioned before that key's entries.
  void find_prev_user_entry() {
    ValueKind kind = ValueKind::Delete;
    resolved_ = false;
    pointer_ = false;
    while (iter_->valid()) {
      ParsedInternalKey ik;
      if (!parse(&ik)) return;
      if (!lower_.empty() && compare_user_keys(ik.user_key, lower_) < 0) break;
      if (ik.sequence <= snapshot_) {
        if (kind != ValueKind::Delete && compare_user_keys(ik.user_key, saved_key_) < 0) {
          break;  // the entries of the key we hold are all behind us
        }
        kind = ik.kind;
        if (kind == ValueKind::Delete) {
          saved_key_.clear();
          saved_value_.clear();
        } else {
          saved_key_.assign(ik.user_key);
          if (!keys_only_) saved_value_.assign(iter_->value());
          saved_timestamp_ = ik.timestamp;
        }
      }
      iter_->prev();
    }
    if (!status_.ok()) return;
    if (kind == ValueKind::Delete) {
      valid_ = false;
      saved_key_.clear();
      saved_value_.clear();
      check_input_status();
    } else {
      valid_ = true;
      // An input error while stepping back would leave a stale key; report it instead.
      if (!iter_->valid() && !iter_->status().ok()) {
        valid_ = false;
        check_input_status();
      } else {
        // saved_value_ holds the pointer of a ValuePointer entry; value() reads it.
        pointer_ = kind == ValueKind::ValuePointer && !keys_only_;
      }
    }
  }

  std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber snapshot_;
  const std::string lower_;
  const std::string upper_;
  const bool keys_only_;
  Direction direction_ = Direction::Forward;
  mutable bool valid_ = false;
  ByteBuffer saved_key_;  // not std::string: assigned on every step (util/byte_buffer.h)
  std::string saved_value_;
  uint64_t saved_timestamp_ = 0;
  mutable Status status_;
  const std::shared_ptr<ValueResolver> resolver_;
  // On a ValuePointer entry (pointer_): its value, once value() has read it from the value log.
  // Moving the iterator reads nothing, so entries passed over cost no value log read.
  bool pointer_ = false;
  mutable bool resolved_ = false;
  mutable std::string resolved_value_;
};

}  // namespace

std::unique_ptr<UserIterator> new_db_iterator(std::unique_ptr<InternalIterator> input,
                                              SequenceNumber snapshot, std::string lower,
                                              std::string upper, bool keys_only,
                                              std::shared_ptr<ValueResolver> resolver) {
  return std::make_unique<DBIterator>(std::move(input), snapshot, std::move(lower),
                                      std::move(upper), keys_only, std::move(resolver));
}

}  // namespace skv
