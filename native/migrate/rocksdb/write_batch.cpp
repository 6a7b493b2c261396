#include "native/migrate/rocksdb/write_batch.h"

#include "native/migrate/rocksdb/decode.h"

namespace skv::migration::rocksdb {

Status decode_write_batch(std::string_view in,
                          const std::function<std::string(const std::string&)>& where,
                          const std::function<Status(const BatchOp&)>& fn) {
  uint64_t seq;
  uint32_t count;
  if (!get_fixed64(&in, &seq) || !get_fixed32(&in, &count)) {
    return Status::corruption(where("write batch shorter than its header"));
  }
  uint32_t seen = 0;
  while (!in.empty()) {
    unsigned tag = static_cast<unsigned char>(in[0]);
    in.remove_prefix(1);
    BatchOp op;
    bool has_cf = false, has_value = false, counted = true;
    switch (tag) {
      case 0x1:
        op.type = kTypeValue;
        has_value = true;
        break;
      case 0x5:
        op.type = kTypeValue;
        has_value = true;
        has_cf = true;
        break;
      case 0x0:
        op.type = kTypeDeletion;
        break;
      case 0x4:
        op.type = kTypeDeletion;
        has_cf = true;
        break;
      case 0x7:
        op.type = kTypeSingleDeletion;
        break;
      case 0x8:
        op.type = kTypeSingleDeletion;
        has_cf = true;
        break;
      case 0xF:
        op.type = kTypeRangeDeletion;
        has_value = true;
        break;
      case 0xE:
        op.type = kTypeRangeDeletion;
        has_value = true;
        has_cf = true;
        break;
      case 0x2:
        op.type = kTypeMerge;
        has_value = true;
        break;
      case 0x6:
        op.type = kTypeMerge;
        has_value = true;
        has_cf = true;
        break;
      case 0x11:
        op.type = kTypeBlobIndex;
        has_value = true;
        break;
      case 0x10:
        op.type = kTypeBlobIndex;
        has_value = true;
        has_cf = true;
        break;
      case 0x16:
        op.type = kTypeWideColumnEntity;
        has_value = true;
        break;
      case 0x17:
        op.type = kTypeWideColumnEntity;
        has_value = true;
        has_cf = true;
        break;
      case 0x3: {  // LogData: not counted, carries no sequence number
        std::string_view blob;
        if (!get_lenprefixed(&in, &blob)) return Status::corruption(where("write batch log data"));
        counted = false;
        continue;
      }
      case 0xD:
        continue;  // Noop
      case 0x9:
      case 0x12:
      case 0x13:
      case 0xA:
      case 0xB:
      case 0xC:
      case 0x15:
        return Status::not_supported(where("write batch holds a two-phase-commit marker (tag " +
                                           std::to_string(tag) +
                                           "): prepared transactions are not read"));
      default:
        return Status::corruption(where("write batch tag " + std::to_string(tag)));
    }
    (void)counted;
    if (has_cf && !get_varint32(&in, &op.cf)) {
      return Status::corruption(where("write batch column family"));
    }
    if (!get_lenprefixed(&in, &op.key) || (has_value && !get_lenprefixed(&in, &op.value))) {
      return Status::corruption(where("write batch entry"));
    }
    op.seq = seq + seen;
    ++seen;
    if (Status s = fn(op); !s.ok()) return s;
  }
  if (seen != count) {
    return Status::corruption(where("write batch counts " + std::to_string(count) +
                                    " operations but holds " + std::to_string(seen)));
  }
  return Status::OK();
}

}  // namespace skv::migration::rocksdb
