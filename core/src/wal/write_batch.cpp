#include "wal/write_batch.h"
#include "skv/options.h"
#include "util/status_macros.h"

#include <string>

#include "util/coding.h"

namespace skv {

namespace {

// batch := sequence:fixed64 commit_ts:fixed64 count:fixed32 entry{count}
// entry := tag:u8 key_len:varint32 key [timestamp:fixed64] [value_len:varint32 value]
constexpr size_t kBatchHeaderSize = 20;
constexpr size_t kCommitTimestampOffset = 8;
constexpr size_t kCountOffset = 16;
// Bit 7 of an entry's tag: a timestamp of its own follows the key.
constexpr uint8_t kExplicitTimestamp = 0x80;
// tag + one-byte key length + one key byte.
constexpr size_t kMinEntrySize = 1 + 1 + 1;

// Kinds a batch may carry: values are always inline in a batch.
bool is_batch_kind(uint8_t kind) {
  return kind == static_cast<uint8_t>(ValueKind::Delete) ||
         kind == static_cast<uint8_t>(ValueKind::Value);
}

Status bad_batch(std::string_view record, std::string_view at, const std::string& what) {
  return Status::corruption("write batch: " + what + " at byte " +
                            std::to_string(record.size() - at.size()) + " of " +
                            std::to_string(record.size()));
}

// Parses the entry at the front of *in, advancing it.
Status decode_entry(std::string_view record, std::string_view* in, WriteBatch::Entry* e) {
  if (in->empty()) return bad_batch(record, *in, "missing entry");
  const uint8_t tag = static_cast<uint8_t>((*in)[0]);
  const uint8_t kind = tag & static_cast<uint8_t>(~kExplicitTimestamp);
  if (!is_batch_kind(kind)) {
    return bad_batch(record, *in, "unknown entry kind " + std::to_string(kind));
  }
  in->remove_prefix(1);
  e->kind = static_cast<ValueKind>(kind);
  uint32_t len = 0;
  if (!get_varint32(in, &len)) return bad_batch(record, *in, "bad key length");
  if (len == 0) return bad_batch(record, *in, "empty key");
  if (len > in->size()) return bad_batch(record, *in, "key runs past the end");
  e->key = in->substr(0, len);
  in->remove_prefix(len);
  if ((tag & kExplicitTimestamp) != 0) {
    if (!get_fixed64(in, &e->timestamp)) return bad_batch(record, *in, "truncated timestamp");
    if (e->timestamp == 0 || e->timestamp > kMaxTimestamp) {
      return bad_batch(record, *in, "timestamp out of range");
    }
  }
  e->value = {};
  if (e->kind == ValueKind::Value) {
    if (!get_varint32(in, &len)) return bad_batch(record, *in, "bad value length");
    if (len > in->size()) return bad_batch(record, *in, "value runs past the end");
    e->value = in->substr(0, len);
    in->remove_prefix(len);
  }
  return Status();
}

}  // namespace

WriteBatch::WriteBatch(size_t entry_bytes) {
  rep_.reserve(kBatchHeaderSize + entry_bytes);
  clear();
}

void WriteBatch::clear() {
  rep_.assign(kBatchHeaderSize, '\0');
  count_ = 0;
}

void WriteBatch::set_sequence(SequenceNumber seq) { encode_fixed64(rep_.data(), seq); }

SequenceNumber WriteBatch::sequence() const { return decode_fixed64(rep_.data()); }

void WriteBatch::set_commit_timestamp(uint64_t ts) {
  encode_fixed64(rep_.data() + kCommitTimestampOffset, ts);
}

uint64_t WriteBatch::commit_timestamp() const {
  return decode_fixed64(rep_.data() + kCommitTimestampOffset);
}

void WriteBatch::append(ValueKind kind, std::string_view key, uint64_t timestamp) {
  uint8_t tag = static_cast<uint8_t>(kind);
  if (timestamp != 0) tag |= kExplicitTimestamp;
  rep_.push_back(static_cast<char>(tag));
  put_varint32(&rep_, static_cast<uint32_t>(key.size()));
  rep_.append(key.data(), key.size());
  if (timestamp != 0) put_fixed64(&rep_, timestamp);
  ++count_;
}

size_t WriteBatch::entry_bound(size_t key_size, size_t value_size) {
  // tag, key length, key, timestamp, value length, value
  return 1 + kMaxVarint32Bytes + key_size + 8 + kMaxVarint32Bytes + value_size;
}

void WriteBatch::put(std::string_view key, std::string_view value, uint64_t timestamp) {
  append(ValueKind::Value, key, timestamp);
  put_varint32(&rep_, static_cast<uint32_t>(value.size()));
  rep_.append(value.data(), value.size());
}

void WriteBatch::del(std::string_view key, uint64_t timestamp) {
  append(ValueKind::Delete, key, timestamp);
}

const std::string& WriteBatch::encoded() {
  encode_fixed32(rep_.data() + kCountOffset, count_);
  return rep_;
}

Status WriteBatch::check(std::string_view record) {
  std::string_view in = record;
  uint64_t sequence = 0;
  uint64_t commit_ts = 0;
  uint32_t count = 0;
  if (!get_fixed64(&in, &sequence) || !get_fixed64(&in, &commit_ts) || !get_fixed32(&in, &count)) {
    return bad_batch(record, in, "truncated header");
  }
  if (sequence > kMaxSequenceNumber) return bad_batch(record, in, "sequence number out of range");
  if (commit_ts > kMaxTimestamp) return bad_batch(record, in, "commit timestamp out of range");
  if (count > in.size() / kMinEntrySize) {
    return bad_batch(record, in, "entry count " + std::to_string(count) + " exceeds the input");
  }
  Entry e{};
  for (uint32_t i = 0; i < count; ++i) SKV_RETURN_IF_ERROR(decode_entry(record, &in, &e));
  if (!in.empty()) return bad_batch(record, in, "trailing bytes");
  return Status();
}

SequenceNumber WriteBatch::sequence_of(std::string_view record) {
  return decode_fixed64(record.data());
}

uint64_t WriteBatch::commit_timestamp_of(std::string_view record) {
  return decode_fixed64(record.data() + kCommitTimestampOffset);
}

std::string_view WriteBatch::entries_of(std::string_view record, SequenceNumber* seq,
                                        uint64_t* commit_ts, uint32_t* count) {
  *seq = decode_fixed64(record.data());
  *commit_ts = decode_fixed64(record.data() + kCommitTimestampOffset);
  *count = decode_fixed32(record.data() + kCountOffset);
  return record.substr(kBatchHeaderSize);
}

void WriteBatch::next_entry(std::string_view* in, uint64_t commit_ts, Entry* e) {
  const auto tag = static_cast<uint8_t>((*in)[0]);
  e->kind = static_cast<ValueKind>(tag & static_cast<uint8_t>(~kExplicitTimestamp));
  in->remove_prefix(1);
  uint32_t len = 0;
  (void)get_varint32(in, &len);
  e->key = in->substr(0, len);
  in->remove_prefix(len);
  e->timestamp = commit_ts;
  if ((tag & kExplicitTimestamp) != 0) (void)get_fixed64(in, &e->timestamp);
  e->value = {};
  if (e->kind == ValueKind::Value) {
    (void)get_varint32(in, &len);
    e->value = in->substr(0, len);
    in->remove_prefix(len);
  }
}

Status WriteBatch::decode(std::string_view record, SequenceNumber* seq,
                          const std::function<void(const Entry&)>& fn) {
  // Everything is checked before anything is delivered: a damaged batch is never half applied.
  SKV_RETURN_IF_ERROR(check(record));
  *seq = for_each(record, fn);
  return Status();
}

}  // namespace skv
