// TransactionImpl: the state behind skv::Transaction — mode, snapshot, buffered writes,
// savepoints — and the checks on every call (finished, read-only, key and value limits).
//
// Thread safety: one thread at a time (the public contract of Transaction).

#ifndef SKV_TXN_TRANSACTION_IMPL_H_
#define SKV_TXN_TRANSACTION_IMPL_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/internal_key.h"
#include "iterator/user_iterator.h"
#include "skv/future.h"
#include "skv/options.h"
#include "skv/status.h"
#include "skv/transaction.h"
#include "txn/transaction_host.h"
#include "txn/write_buffer.h"

namespace skv {

class TransactionImpl {
 public:
  // `snapshot` is already registered with the tree; the transaction releases it when it ends.
  TransactionImpl(std::shared_ptr<TransactionHost> tree, Mode mode, SequenceNumber snapshot,
                  Durability durability);
  TransactionImpl(const TransactionImpl&) = delete;
  TransactionImpl& operator=(const TransactionImpl&) = delete;
  ~TransactionImpl();

  Mode mode() const { return mode_; }
  SequenceNumber snapshot() const { return snapshot_; }
  Durability durability() const { return durability_; }
  const WriteBuffer& writes() const { return writes_; }

  Status set(std::string_view key, std::string_view value);
  Status del(std::string_view key);
  Result<std::optional<std::string>> get(std::string_view key) const;
  // Transaction::get_async.
  Future<Result<std::optional<std::string>>> get_async(std::string_view key) const;
  Result<std::unique_ptr<UserIterator>> iterator(std::string_view start, std::string_view end,
                                                 bool keys_only, bool fill_cache = true) const;
  Result<uint64_t> count(std::string_view start, std::string_view end) const;

  // Versioned queries (skv/transaction.h).
  Status set_at(std::string_view key, std::string_view value, uint64_t timestamp);
  Status del_at(std::string_view key, uint64_t timestamp);
  Result<std::optional<std::string>> get_at(std::string_view key, uint64_t timestamp) const;
  Result<std::vector<KeyVersion>> history(std::string_view key,
                                          const HistoryOptions& options) const;
  // The iterator behind range_at, keys_at and history_range.
  Result<std::unique_ptr<UserIterator>> time_iterator(std::string_view start, std::string_view end,
                                                      const TimeQuery& query) const;
  void set_durability(Durability d) { durability_ = d; }
  CommitFuture commit();
  Status rollback();
  Status set_savepoint();
  Status rollback_to_savepoint();

 private:
  // What get() answers without reading the tree: an error of the transaction or the key, or this
  // transaction's own write of `key`; nullopt when the tree must be read.
  std::optional<Result<std::optional<std::string>>> answer_without_tree(std::string_view key) const;
  Status check_usable() const;
  Status check_writable(std::string_view key) const;
  Status check_readable() const;
  // check_readable(), and the tree is versioned.
  Status check_versioned_read() const;
  Status check_value(std::string_view value) const;
  void finish();

  std::shared_ptr<TransactionHost> tree_;
  const Mode mode_;
  const SequenceNumber snapshot_;
  Durability durability_;
  WriteBuffer writes_;
  bool finished_ = false;
};

}  // namespace skv

#endif  // SKV_TXN_TRANSACTION_IMPL_H_
