// libFuzzer target: the WAL reader (wal/log_reader.h) and the write-batch decoder
// (wal/write_batch.h).
//
// The input is read three ways: as one WriteBatch record payload; as a WAL segment, as it is;
// and as that segment with its header and record checksums recomputed (fuzz_support.h), so the
// framing and batch parsers see mutated records. Properties:
//   - nothing crashes, and every failure is Corruption (the file is in memory: no I/O errors);
//   - a record handed out is exactly the bytes the file holds at its offset, with a matching
//     checksum, the records are back to back from the header on, and valid_end() is where the
//     last one ends (the whole file after a clean end); an error repeats on the next call and an
//     end stays an end;
//   - with recomputed checksums, every record the fix-up walked is handed out, in order, before
//     anything else is reported;
//   - a batch that decodes re-encodes to an equivalent batch: decoding the re-encoding gives the
//     same sequence and entries, the re-encoding is never longer than the input (the decoder
//     accepts over-long varints), and is byte-identical when it has the same length. A batch that
//     fails to decode delivered no entries.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "wal/log_reader.h"
#include "wal/write_batch.h"

using namespace skv;

namespace {

struct OwnedEntry {
  ValueKind kind;
  std::string key;
  std::string value;
  uint64_t timestamp;
  bool operator==(const OwnedEntry& o) const {
    return kind == o.kind && key == o.key && value == o.value && timestamp == o.timestamp;
  }
};

// Decodes `record`; on success returns true and fills *seq and *out.
bool decode_batch(std::string_view record, SequenceNumber* seq, std::vector<OwnedEntry>* out) {
  out->clear();
  const char* begin = record.data();
  const char* end = record.data() + record.size();
  auto inside = [&](std::string_view v) {
    return v.empty() || (v.data() >= begin && v.data() + v.size() <= end);
  };
  Status s = WriteBatch::decode(record, seq, [&](const WriteBatch::Entry& e) {
    SKV_FUZZ_CHECK(inside(e.key) && inside(e.value), "entry views must point into the record");
    out->push_back({e.kind, std::string(e.key), std::string(e.value), e.timestamp});
  });
  if (!s.ok()) {
    SKV_FUZZ_CHECK(s.is_corruption(), s.to_string());
    SKV_FUZZ_CHECK(out->empty(), "a batch that fails to decode must deliver no entry");
    return false;
  }
  return true;
}

void check_batch(std::string_view record) {
  SequenceNumber seq = 0;
  std::vector<OwnedEntry> entries;
  if (!decode_batch(record, &seq, &entries)) return;
  SKV_FUZZ_CHECK(seq <= kMaxSequenceNumber, "sequence out of range");
  SKV_FUZZ_CHECK(record.size() >= 20, "a decoded batch has a header");
  SKV_FUZZ_CHECK(entries.size() == decode_fixed32(record.data() + 16), "entry count");
  const uint64_t commit_ts = WriteBatch::commit_timestamp_of(record);
  SKV_FUZZ_CHECK(commit_ts <= kMaxTimestamp, "commit timestamp out of range");
  WriteBatch batch;
  batch.set_sequence(seq);
  batch.set_commit_timestamp(commit_ts);
  for (const OwnedEntry& e : entries) {
    SKV_FUZZ_CHECK(!e.key.empty(), "empty key decoded");
    SKV_FUZZ_CHECK(e.kind == ValueKind::Value || e.kind == ValueKind::Delete,
                   "a kind a batch cannot hold decoded");
    SKV_FUZZ_CHECK(e.timestamp <= kMaxTimestamp, "timestamp out of range");
    // An entry stamped with the commit's time re-encodes without a timestamp of its own (the
    // shorter form), so a same-length re-encoding must equal the input.
    const uint64_t own = e.timestamp == commit_ts ? 0 : e.timestamp;
    if (e.kind == ValueKind::Value) {
      batch.put(e.key, e.value, own);
    } else {
      SKV_FUZZ_CHECK(e.value.empty(), "a tombstone carries no value");
      batch.del(e.key, own);
    }
  }
  const std::string encoded = batch.encoded();
  SKV_FUZZ_CHECK(encoded.size() <= record.size(), "re-encoding is longer than the input");
  if (encoded.size() == record.size()) {
    SKV_FUZZ_CHECK(encoded == record, "same-length re-encoding differs from the input");
  }
  SequenceNumber seq2 = 0;
  std::vector<OwnedEntry> entries2;
  SKV_FUZZ_CHECK(decode_batch(encoded, &seq2, &entries2), "re-encoded batch fails to decode");
  SKV_FUZZ_CHECK(seq2 == seq && entries2 == entries, "decode(encode(x)) != x");
}

// Reads `bytes` as a WAL segment. `expected`: the records a checksum fix-up walked, or null.
void read_log(std::string bytes, const std::vector<fuzz::RecordSpan>* expected) {
  fuzz::StringLogFile file("000007.wal", &bytes);
  log::Reader reader(&file, FileKind::Wal);
  FileHeader header;
  Status hs = reader.read_header(&header);
  std::string record;
  uint64_t offset = 0;
  if (!hs.ok()) {
    SKV_FUZZ_CHECK(fuzz::is_header_refusal(hs), hs.to_string());
    Result<bool> again = reader.read_record(&record, &offset);
    SKV_FUZZ_CHECK(!again.ok() && again.status().message() == hs.message(),
                   "a bad header must fail every read");
    return;
  }
  const bool torn_header = reader.torn_tail();
  if (torn_header) {
    SKV_FUZZ_CHECK(reader.valid_end() == 0, "a torn header ends the valid data at 0");
  } else {
    SKV_FUZZ_CHECK(header.kind == FileKind::Wal, "header kind");
  }
  uint64_t expected_offset = torn_header ? 0 : kFileHeaderSize;
  size_t count = 0;
  // Every record takes at least 9 bytes, so this bounds the loop without ever cutting it short.
  const size_t max_records = bytes.size() / 9 + 2;
  while (true) {
    SKV_FUZZ_CHECK(count <= max_records, "more records than the file can hold");
    Result<bool> got = reader.read_record(&record, &offset);
    if (!got.ok()) {
      SKV_FUZZ_CHECK(got.status().is_corruption(), got.status().to_string());
      Result<bool> again = reader.read_record(&record, &offset);
      SKV_FUZZ_CHECK(!again.ok() && again.status().message() == got.status().message(),
                     "an error must repeat");
      break;
    }
    if (!*got) {
      SKV_FUZZ_CHECK(reader.valid_end() == expected_offset, "valid_end after the last record");
      if (!reader.torn_tail()) {
        SKV_FUZZ_CHECK(expected_offset == bytes.size(), "a clean end is the end of the file");
      }
      Result<bool> again = reader.read_record(&record, &offset);
      SKV_FUZZ_CHECK(again.ok() && !*again, "an end must stay an end");
      break;
    }
    // No invented data: the record is what the file holds there, under a matching checksum.
    SKV_FUZZ_CHECK(offset == expected_offset, "records must be back to back");
    SKV_FUZZ_CHECK(!record.empty() && record.size() <= log::kMaxRecordSize, "record size");
    SKV_FUZZ_CHECK(offset + log::kRecordHeaderSize + record.size() <= bytes.size(),
                   "record past the end of the file");
    const char* h = bytes.data() + offset;
    SKV_FUZZ_CHECK(decode_fixed32(h + 4) == record.size(), "record length field");
    SKV_FUZZ_CHECK(std::string_view(h + log::kRecordHeaderSize, record.size()) == record,
                   "record bytes differ from the file");
    SKV_FUZZ_CHECK(decode_fixed32(h) == fuzz::log_record_crc(record), "record checksum");
    if (expected != nullptr && !torn_header && count < expected->size()) {
      SKV_FUZZ_CHECK((*expected)[count].offset == offset, "fixed-up record offset");
    }
    expected_offset = offset + log::kRecordHeaderSize + record.size();
    SKV_FUZZ_CHECK(reader.valid_end() == expected_offset, "valid_end after a record");
    check_batch(record);
    ++count;
  }
  if (expected != nullptr && !torn_header) {
    SKV_FUZZ_CHECK(count >= expected->size(), "an intact record was not handed out");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_view(data, size);
  check_batch(input);
  read_log(std::string(input), nullptr);
  std::string fixed(input);
  fuzz::fix_file_header(&fixed);
  const std::vector<fuzz::RecordSpan> spans = fuzz::fix_log_records(&fixed, kFileHeaderSize);
  if (fixed != input) read_log(std::move(fixed), &spans);
  return 0;
}
