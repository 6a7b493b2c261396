// Shared pieces of skv's libFuzzer targets (tests/fuzz/*_fuzz.cpp) and of the corpus generator:
// files held in memory over a string, a check that aborts with a message (libFuzzer records the
// input as a crash), and checksum fix-ups.
//
// Every stored format checks a CRC32C, so almost every mutation of a valid file is rejected by
// its first checksum. The fix-ups recompute the checksums of a mutated input the way the writer
// would have, so the decoders behind the checksums (record, batch, block, index and edit
// parsers) see the mutated bytes too. Targets run both the input as it is and its fixed-up copy.
//
// Thread safety: single-threaded, like the fuzz targets.

#ifndef SKV_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define SKV_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "format/file_header.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "sstable/block.h"
#include "sstable/block_format.h"
#include "tests/support/string_object_reader.h"
#include "tests/support/string_object_writer.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

// Aborts with `what` when `cond` is false: a property of the decoder under test is broken.
#define SKV_FUZZ_CHECK(cond, what)                                                                \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s\n  (%s)\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                    \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)

namespace skv::fuzz {

// How a file whose header this build will not read is refused: Corruption for damage, or
// NotSupported, naming it, for a valid header of something this build does not read (an older
// format version, a cipher). The plaintext targets read as a database without a key manager, so
// a header that says the file is sealed is Encryption/NotConfigured.
inline bool is_header_refusal(const Status& s) {
  return s.is_corruption() || s.code() == Code::NotSupported ||
         (s.code() == Code::Encryption && s.encryption_error() == EncryptionError::NotConfigured);
}

inline std::string_view as_view(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A LogFile over a string it does not own. Reads copy into the caller's scratch.
class StringLogFile final : public LogFile {
 public:
  StringLogFile(std::string name, std::string* data) : name_(std::move(name)), data_(data) {}
  const std::string& name() const override { return name_; }
  Status append(std::string_view d) override {
    data_->append(d.data(), d.size());
    return Status::OK();
  }
  Status sync() override { return Status::OK(); }
  uint64_t size() const override { return data_->size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    if (offset >= data_->size()) {
      *result = {};
      return Status::OK();
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, data_->size() - offset));
    std::memcpy(scratch, data_->data() + offset, n);
    *result = std::string_view(scratch, n);
    return Status::OK();
  }
  Status truncate(uint64_t size) override {
    if (size < data_->size()) data_->resize(static_cast<size_t>(size));
    return Status::OK();
  }
  Status close() override { return Status::OK(); }

 private:
  std::string name_;
  std::string* data_;
};

// Files held in memory: readers over a string (with `zero_copy`, reads return views of it instead
// of copying into scratch; both forms are allowed by the contract), and the corpus generator's
// writer for tables built in memory.
using testing::StringObjectReader;
using testing::StringObjectWriter;

// The masked CRC32C a log record carries: over length:fixed32 ‖ payload.
inline uint32_t log_record_crc(std::string_view payload) {
  char len[4];
  encode_fixed32(len, static_cast<uint32_t>(payload.size()));
  return crc32c::mask(crc32c::extend(crc32c::value(len, 4), payload.data(), payload.size()));
}

// Recomputes the checksum of the 64-byte file header, if the file has one.
inline void fix_file_header(std::string* file) {
  if (file->size() < kFileHeaderSize) return;
  encode_fixed32(file->data() + 60, crc32c::mask(crc32c::value(file->data(), 60)));
}

struct RecordSpan {
  uint64_t offset = 0;  // of the record header
  uint32_t length = 0;  // payload bytes
};

// Walks the records of a log file from `start` by their length fields and recomputes each
// checksum, up to the first record whose length is zero, too large or runs past the end.
// Returns the records it fixed, in order.
inline std::vector<RecordSpan> fix_log_records(std::string* file, size_t start) {
  std::vector<RecordSpan> out;
  size_t pos = start;
  while (file->size() >= pos + log::kRecordHeaderSize) {
    const uint32_t len = decode_fixed32(file->data() + pos + 4);
    if (len == 0 || len > log::kMaxRecordSize ||
        len > file->size() - pos - log::kRecordHeaderSize) {
      break;
    }
    std::string_view payload(file->data() + pos + log::kRecordHeaderSize, len);
    encode_fixed32(file->data() + pos, log_record_crc(payload));
    out.push_back({pos, len});
    pos += log::kRecordHeaderSize + len;
  }
  return out;
}

// Whether results are compared on every input. Block::create once accepted a restart point
// inside an entry and the manifest decoder once accepted file numbers at the top of the number
// space (both found here, both fixed in the core); the targets can still skip those inputs'
// comparisons with SKV_FUZZ_STRICT=0, for bisecting an old revision. Strict by default.
inline bool strict_mode() {
  static const bool strict = [] {
    const char* v = std::getenv("SKV_FUZZ_STRICT");
    return v == nullptr || v[0] != '0';
  }();
  return strict;
}

// True if `contents` (a block: entries, restart array, count) has a restart point that is not
// the start of an entry, as far as the entries decode from offset 0. Independent of Block.
inline bool restarts_misframed(std::string_view contents) {
  if (contents.size() < 4) return false;
  const char* d = contents.data();
  const uint32_t n = decode_fixed32(d + contents.size() - 4);
  if (n == 0 || n > (contents.size() - 4) / 4) return false;
  const size_t restarts_offset = contents.size() - 4 - size_t{n} * 4;
  std::vector<uint32_t> starts;
  const char* p = d;
  const char* limit = d + restarts_offset;
  uint32_t decoded_end = static_cast<uint32_t>(restarts_offset);  // entries known up to here
  while (p < limit) {
    const uint32_t start = static_cast<uint32_t>(p - d);
    starts.push_back(start);
    uint32_t shared = 0, non_shared = 0, value_len = 0;
    if ((p = decode_varint32(p, limit, &shared)) == nullptr ||
        (p = decode_varint32(p, limit, &non_shared)) == nullptr ||
        (p = decode_varint32(p, limit, &value_len)) == nullptr ||
        uint64_t{non_shared} + value_len > static_cast<uint64_t>(limit - p)) {
      decoded_end = start;
      break;
    }
    p += non_shared + value_len;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t r = decode_fixed32(d + restarts_offset + size_t{i} * 4);
    if (r < decoded_end && !std::binary_search(starts.begin(), starts.end(), r)) return true;
  }
  return false;
}

// Recomputes the trailer checksum of the stored block at `h`, if it lies inside the file.
inline void fix_block(std::string* file, const BlockHandle& h) {
  if (h.size > kMaxBlockSize || h.offset > file->size() ||
      h.size + kBlockTrailerSize > file->size() - h.offset) {
    return;
  }
  char* p = file->data() + h.offset;
  const size_t covered = static_cast<size_t>(h.size) + 1;  // payload ‖ compression type
  encode_fixed32(p + covered, crc32c::mask(crc32c::value(p, covered)));
}

// Recomputes every checksum of an SSTable the way the table reader finds its blocks: the file
// header, the footer, the metadata blocks the footer names, and every data block the index
// names (as far as the index decodes). Leaves bytes it cannot place unchanged.
inline void fix_table(std::string* file) {
  fix_file_header(file);
  if (file->size() < kFileHeaderSize + kTableFooterSize) return;
  char* footer = file->data() + file->size() - kTableFooterSize;
  encode_fixed32(footer + 60, crc32c::mask(crc32c::value(footer, 60)));
  TableFooter f;
  if (!decode_table_footer(std::string_view(footer, kTableFooterSize), "fixup", 0, &f).ok()) {
    return;
  }
  fix_block(file, f.properties);
  if (f.filter.size != 0) fix_block(file, f.filter);
  fix_block(file, f.index);
  StringObjectReader reader("fixup", *file);
  Result<BlockContents> index = read_block(reader, f.index);
  if (!index.ok()) return;
  Result<std::shared_ptr<const Block>> block = Block::create(std::move(*index), "fixup", 0);
  if (!block.ok()) return;
  BlockIterator it(*block, "fixup", 0);
  size_t n = 0;
  for (it.seek_first(); it.valid() && n < 100000; it.next(), ++n) {
    std::string_view v = it.value();
    BlockHandle h;
    if (decode_block_handle(&v, &h)) fix_block(file, h);
  }
}

}  // namespace skv::fuzz

#endif  // SKV_TESTS_FUZZ_FUZZ_SUPPORT_H_
