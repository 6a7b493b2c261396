#include "txn/transaction_impl.h"

#include "txn/merged_iterator.h"
#include "util/status_macros.h"

namespace skv {

TransactionImpl::TransactionImpl(std::shared_ptr<TransactionHost> tree, Mode mode,
                                 SequenceNumber snapshot, Durability durability)
    : tree_(std::move(tree)), mode_(mode), snapshot_(snapshot), durability_(durability) {}

TransactionImpl::~TransactionImpl() { finish(); }

void TransactionImpl::finish() {
  if (finished_) return;
  finished_ = true;
  writes_.clear();
  tree_->release_snapshot(snapshot_);
}

Status TransactionImpl::check_usable() const {
  if (finished_) return Status::closed("transaction already committed or rolled back");
  return tree_->check_open();
}

Status TransactionImpl::check_writable(std::string_view key) const {
  SKV_RETURN_IF_ERROR(check_usable());
  if (mode_ == Mode::ReadOnly) return Status::read_only("write on a read-only transaction");
  if (key.empty()) return Status::invalid_argument("empty key");
  if (key.size() > kMaxKeySize) {
    return Status::invalid_argument("key of " + std::to_string(key.size()) +
                                    " bytes exceeds the limit of " + std::to_string(kMaxKeySize));
  }
  return Status();
}

Status TransactionImpl::check_readable() const {
  SKV_RETURN_IF_ERROR(check_usable());
  if (mode_ == Mode::WriteOnly) return Status::invalid_argument("read on a write-only transaction");
  return Status();
}

Status TransactionImpl::check_value(std::string_view value) const {
  if (value.size() > kMaxValueSize) {
    return Status::invalid_argument("value of " + std::to_string(value.size()) +
                                    " bytes exceeds the limit of " + std::to_string(kMaxValueSize));
  }
  return Status();
}

Status TransactionImpl::set(std::string_view key, std::string_view value) {
  SKV_RETURN_IF_ERROR(check_writable(key));
  SKV_RETURN_IF_ERROR(check_value(value));
  return writes_.put(key, value, 0);
}

namespace {

Status not_versioned(const char* call) {
  return Status::not_supported(std::string(call) +
                               ": the tree is not versioned (open it with "
                               "TreeBuilder::with_versioning(true, retention))");
}

Status check_timestamp(uint64_t ts) {
  if (ts > kMaxTimestamp) {
    return Status::invalid_argument("timestamp " + std::to_string(ts) +
                                    " is beyond the largest one, 2^63 - 1 nanoseconds");
  }
  return Status();
}

}  // namespace

Status TransactionImpl::set_at(std::string_view key, std::string_view value, uint64_t timestamp) {
  SKV_RETURN_IF_ERROR(check_writable(key));
  if (!tree_->versioned()) return not_versioned("set_at");
  SKV_RETURN_IF_ERROR(check_value(value));
  SKV_RETURN_IF_ERROR(check_timestamp(timestamp));
  // 0 marks "the commit's time" in the write buffer and the batch.
  if (timestamp == 0) return Status::invalid_argument("timestamp 0 is reserved; use 1 or later");
  return writes_.put(key, value, timestamp);
}

Status TransactionImpl::del_at(std::string_view key, uint64_t timestamp) {
  SKV_RETURN_IF_ERROR(check_writable(key));
  if (!tree_->versioned()) return not_versioned("del_at");
  SKV_RETURN_IF_ERROR(check_timestamp(timestamp));
  if (timestamp == 0) return Status::invalid_argument("timestamp 0 is reserved; use 1 or later");
  return writes_.del(key, timestamp);
}

Status TransactionImpl::check_versioned_read() const {
  SKV_RETURN_IF_ERROR(check_readable());
  if (!tree_->versioned()) return not_versioned("versioned read");
  return Status();
}

Result<std::unique_ptr<UserIterator>> TransactionImpl::time_iterator(std::string_view start,
                                                                     std::string_view end,
                                                                     const TimeQuery& query) const {
  SKV_RETURN_IF_ERROR(check_versioned_read());
  SKV_RETURN_IF_ERROR(check_timestamp(query.timestamp));
  if (!start.empty() && !end.empty() && end < start) {
    return Status::invalid_argument("range end sorts before its start");
  }
  return tree_->new_time_iterator(snapshot_, std::string(start), std::string(end), query);
}

namespace {

// [key, key + "\0"): exactly `key`.
std::string just_after(std::string_view key) {
  std::string end(key);
  end.push_back('\0');
  return end;
}

Status check_key(std::string_view key) {
  if (key.empty()) return Status::invalid_argument("empty key");
  if (key.size() > kMaxKeySize) return Status::invalid_argument("key exceeds the size limit");
  return Status();
}

}  // namespace

Result<std::optional<std::string>> TransactionImpl::get_at(std::string_view key,
                                                           uint64_t timestamp) const {
  SKV_RETURN_IF_ERROR(check_key(key));
  TimeQuery q;
  q.timestamp = timestamp;
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<UserIterator> it, time_iterator(key, just_after(key), q));
  it->seek_first();
  SKV_RETURN_IF_ERROR(it->status());
  if (!it->valid()) return std::optional<std::string>();
  return std::optional<std::string>(std::string(it->value()));
}

Result<std::vector<KeyVersion>> TransactionImpl::history(std::string_view key,
                                                         const HistoryOptions& options) const {
  SKV_RETURN_IF_ERROR(check_key(key));
  TimeQuery q;
  q.kind = TimeQuery::Kind::History;
  q.include_tombstones = options.include_tombstones;
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<UserIterator> it, time_iterator(key, just_after(key), q));
  std::vector<KeyVersion> out;
  for (it->seek_first(); it->valid(); it->next()) {
    if (options.limit != 0 && out.size() >= options.limit) break;
    KeyVersion v;
    v.tombstone = it->is_delete();
    if (!v.tombstone) v.value.assign(it->value());
    v.timestamp = it->timestamp();
    out.push_back(std::move(v));
  }
  SKV_RETURN_IF_ERROR(it->status());
  return out;
}

Status TransactionImpl::del(std::string_view key) {
  SKV_RETURN_IF_ERROR(check_writable(key));
  return writes_.del(key, 0);
}

std::optional<Result<std::optional<std::string>>> TransactionImpl::answer_without_tree(
    std::string_view key) const {
  using Answer = Result<std::optional<std::string>>;
  if (Status s = check_readable(); !s.ok()) return Answer(s);
  if (key.empty()) return Answer(Status::invalid_argument("empty key"));
  if (key.size() > kMaxKeySize)
    return Answer(Status::invalid_argument("key exceeds the size limit"));
  if (std::optional<BufferedWrite> w = writes_.find(key)) {
    if (w->is_delete) return Answer(std::optional<std::string>());
    return Answer(std::optional<std::string>(std::string(w->value)));
  }
  return std::nullopt;
}

Future<Result<std::optional<std::string>>> TransactionImpl::get_async(std::string_view key) const {
  using Answer = Result<std::optional<std::string>>;
  if (std::optional<Answer> a = answer_without_tree(key)) return Future<Answer>::make_ready(*a);
  return tree_->get_async(std::string(key), snapshot_);
}

Result<std::optional<std::string>> TransactionImpl::get(std::string_view key) const {
  if (std::optional<Result<std::optional<std::string>>> a = answer_without_tree(key)) return *a;
  std::string value;
  bool found = false;
  SKV_RETURN_IF_ERROR(tree_->get(key, snapshot_, &value, &found));
  if (!found) return std::optional<std::string>();
  return std::optional<std::string>(std::move(value));
}

Result<std::unique_ptr<UserIterator>> TransactionImpl::iterator(std::string_view start,
                                                                std::string_view end,
                                                                bool keys_only,
                                                                bool fill_cache) const {
  SKV_RETURN_IF_ERROR(check_readable());
  if (!start.empty() && !end.empty() && end < start) {
    return Status::invalid_argument("range end sorts before its start");
  }
  SKV_ASSIGN_OR_RETURN(
      std::unique_ptr<UserIterator> tree_it,
      tree_->new_iterator(snapshot_, std::string(start), std::string(end), keys_only, fill_cache));
  if (writes_.empty()) return tree_it;
  return new_overlay_iterator(writes_.new_iterator(std::string(start), std::string(end)),
                              std::move(tree_it));
}

Result<uint64_t> TransactionImpl::count(std::string_view start, std::string_view end) const {
  // A count sweeps the range once: its blocks are not worth caching.
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<UserIterator> it, iterator(start, end, true, false));
  uint64_t n = 0;
  for (it->seek_first(); it->valid(); it->next()) ++n;
  SKV_RETURN_IF_ERROR(it->status());
  return n;
}

CommitFuture TransactionImpl::commit() {
  Status s = check_usable();
  if (!s.ok()) return CommitFuture::make_ready(std::move(s));
  if (mode_ == Mode::ReadOnly || writes_.empty()) {
    finish();
    return CommitFuture::make_ready(Status());
  }
  CommitFuture f = tree_->commit(writes_.to_batch(), snapshot_, mode_ != Mode::WriteOnly,
                                 durability_ == Durability::Immediate);
  finish();
  return f;
}

Status TransactionImpl::rollback() {
  if (finished_) return Status::closed("transaction already committed or rolled back");
  finish();
  return Status();
}

Status TransactionImpl::set_savepoint() {
  SKV_RETURN_IF_ERROR(check_usable());
  return writes_.set_savepoint();
}

Status TransactionImpl::rollback_to_savepoint() {
  SKV_RETURN_IF_ERROR(check_usable());
  if (!writes_.rollback_to_savepoint())
    return Status::invalid_argument("no savepoint to roll back to");
  return Status();
}

}  // namespace skv
