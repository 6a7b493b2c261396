// WriteBatch decoding: the contents of one WAL record (a sequence number, a count, then tagged
// operations), turned into entries stamped with their sequence numbers. Prepared-transaction
// sections (two-phase commit markers) are NotSupported.
//
// Thread safety: pure function.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_WRITE_BATCH_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_WRITE_BATCH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "skv/status.h"

namespace skv::migration::rocksdb {

// Value types, as stored in internal keys.
enum ValueType : uint8_t {
  kTypeDeletion = 0x0,
  kTypeValue = 0x1,
  kTypeMerge = 0x2,
  kTypeSingleDeletion = 0x7,
  kTypeRangeDeletion = 0xF,
  kTypeBlobIndex = 0x11,
  kTypeDeletionWithTimestamp = 0x14,
  kTypeWideColumnEntity = 0x16,
};

struct BatchOp {
  uint32_t cf = 0;
  ValueType type = kTypeValue;
  uint64_t seq = 0;
  std::string_view key;    // range deletions: the start
  std::string_view value;  // range deletions: the end (exclusive)
};

// Calls `fn` for every counted operation of `batch`. `where(what)` builds the error message
// (file and offset of the record).
Status decode_write_batch(std::string_view batch,
                          const std::function<std::string(const std::string&)>& where,
                          const std::function<Status(const BatchOp&)>& fn);

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_WRITE_BATCH_H_
