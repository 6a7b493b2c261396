// The iterator over a transaction's buffered writes as they were in one view of its BufferStore
// (txn/buffer_store.h): one entry per key, the newest version the view sees, buffered deletes
// included (is_delete()). Later writes and savepoint rollbacks of the transaction do not change
// what it shows, and it keeps the store alive, so it may outlive the transaction.
//
// Thread safety: one thread at a time; it may run while the transaction writes on another thread.

#ifndef SKV_TXN_BUFFER_ITERATOR_H_
#define SKV_TXN_BUFFER_ITERATOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "iterator/user_iterator.h"
#include "txn/buffer_store.h"

namespace skv {

// Keys in [lower, upper) (empty bounds are open) of `store` in view `view`. A null store is an
// empty buffer.
std::unique_ptr<UserIterator> new_buffer_iterator(std::shared_ptr<const BufferStore> store,
                                                  uint64_t view, std::string lower,
                                                  std::string upper);

}  // namespace skv

#endif  // SKV_TXN_BUFFER_ITERATOR_H_
