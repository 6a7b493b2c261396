// The public Transaction and Iterator classes: thin forwards to their implementations.

#include "skv/iterator.h"
#include "skv/transaction.h"
#include "txn/transaction_impl.h"
#include "util/status_macros.h"

namespace skv {

class IteratorImpl {
 public:
  IteratorImpl(std::unique_ptr<UserIterator> it, bool keys_only)
      : it_(std::move(it)), keys_only_(keys_only) {}
  std::unique_ptr<UserIterator> it_;
  bool keys_only_;
};

Iterator::Iterator(std::unique_ptr<IteratorImpl> impl) : impl_(std::move(impl)) {}
Iterator::Iterator(Iterator&&) noexcept = default;
Iterator& Iterator::operator=(Iterator&&) noexcept = default;
Iterator::~Iterator() = default;

bool Iterator::valid() const { return impl_->it_->valid(); }
bool Iterator::seek_first() {
  impl_->it_->seek_first();
  return impl_->it_->valid();
}
bool Iterator::seek_last() {
  impl_->it_->seek_last();
  return impl_->it_->valid();
}
bool Iterator::seek(std::string_view key) {
  impl_->it_->seek(key);
  return impl_->it_->valid();
}
bool Iterator::next() {
  if (!impl_->it_->valid()) return false;
  impl_->it_->next();
  return impl_->it_->valid();
}
bool Iterator::prev() {
  if (!impl_->it_->valid()) return false;
  impl_->it_->prev();
  return impl_->it_->valid();
}
std::string_view Iterator::key() const { return impl_->it_->key(); }
Result<std::string_view> Iterator::value() const {
  if (impl_->keys_only_) return Status::invalid_argument("value() on a keys-only iterator");
  if (!impl_->it_->valid()) return Status::invalid_argument("value() on an invalid iterator");
  const std::string_view v = impl_->it_->value();
  SKV_RETURN_IF_ERROR(impl_->it_->status());
  return v;
}
uint64_t Iterator::timestamp() const { return impl_->it_->timestamp(); }
bool Iterator::is_tombstone() const { return impl_->it_->is_delete(); }
Status Iterator::status() const { return impl_->it_->status(); }

Transaction::Transaction(std::unique_ptr<TransactionImpl> impl) : impl_(std::move(impl)) {}
Transaction::Transaction(Transaction&&) noexcept = default;
Transaction& Transaction::operator=(Transaction&&) noexcept = default;
Transaction::~Transaction() = default;

Mode Transaction::mode() const { return impl_->mode(); }
Status Transaction::set(std::string_view key, std::string_view value) {
  return impl_->set(key, value);
}
Status Transaction::del(std::string_view key) { return impl_->del(key); }
Result<std::optional<std::string>> Transaction::get(std::string_view key) const {
  return impl_->get(key);
}

Future<Result<std::optional<std::string>>> Transaction::get_async(std::string_view key) const {
  return impl_->get_async(key);
}

namespace {
Result<Iterator> make_iterator(const TransactionImpl& t, std::string_view start,
                               std::string_view end, bool keys_only) {
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<UserIterator> it, t.iterator(start, end, keys_only));
  return Iterator(std::make_unique<IteratorImpl>(std::move(it), keys_only));
}
}  // namespace

Result<Iterator> Transaction::range(std::string_view start, std::string_view end) const {
  return make_iterator(*impl_, start, end, false);
}
Result<Iterator> Transaction::keys(std::string_view start, std::string_view end) const {
  return make_iterator(*impl_, start, end, true);
}
Result<uint64_t> Transaction::count(std::string_view start, std::string_view end) const {
  return impl_->count(start, end);
}
Status Transaction::set_at(std::string_view key, std::string_view value, uint64_t timestamp) {
  return impl_->set_at(key, value, timestamp);
}

Status Transaction::del_at(std::string_view key, uint64_t timestamp) {
  return impl_->del_at(key, timestamp);
}
Result<std::optional<std::string>> Transaction::get_at(std::string_view key,
                                                       uint64_t timestamp) const {
  return impl_->get_at(key, timestamp);
}
Result<std::vector<KeyVersion>> Transaction::history(std::string_view key,
                                                     const HistoryOptions& options) const {
  return impl_->history(key, options);
}

namespace {
Result<Iterator> make_time_iterator(const TransactionImpl& t, std::string_view start,
                                    std::string_view end, const TimeQuery& q) {
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<UserIterator> it, t.time_iterator(start, end, q));
  return Iterator(std::make_unique<IteratorImpl>(std::move(it), q.keys_only));
}
}  // namespace

Result<Iterator> Transaction::history_range(std::string_view start, std::string_view end,
                                            const HistoryOptions& options) const {
  TimeQuery q;
  q.kind = TimeQuery::Kind::History;
  q.include_tombstones = options.include_tombstones;
  return make_time_iterator(*impl_, start, end, q);
}
Result<Iterator> Transaction::range_at(std::string_view start, std::string_view end,
                                       uint64_t timestamp) const {
  TimeQuery q;
  q.timestamp = timestamp;
  return make_time_iterator(*impl_, start, end, q);
}
Result<Iterator> Transaction::keys_at(std::string_view start, std::string_view end,
                                      uint64_t timestamp) const {
  TimeQuery q;
  q.timestamp = timestamp;
  q.keys_only = true;
  return make_time_iterator(*impl_, start, end, q);
}
void Transaction::set_durability(Durability durability) { impl_->set_durability(durability); }
CommitFuture Transaction::commit() { return impl_->commit(); }
Status Transaction::rollback() { return impl_->rollback(); }
Status Transaction::set_savepoint() { return impl_->set_savepoint(); }
Status Transaction::rollback_to_savepoint() { return impl_->rollback_to_savepoint(); }

}  // namespace skv
