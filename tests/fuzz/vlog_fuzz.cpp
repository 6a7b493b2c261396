// libFuzzer target: the value log (vlog/vlog_scanner.h, vlog/vlog_reader.h) and the value pointer
// codec (vlog/value_pointer.h).
//
// The input is read as a value pointer; as a value log file, as it is; and as that file with its
// header and entry checksums recomputed (the way the writer would have), so the scanner and the
// point reads see mutated entries behind valid checksums. Properties:
//   - nothing crashes, and every failure is Corruption (or NotSupported for an encrypted header;
//     the file is in memory: no I/O errors);
//   - a pointer that decodes is valid and re-encodes to exactly the input;
//   - an entry the scanner hands out is exactly the bytes the file holds at its offset, under a
//     matching checksum; entries are back to back from the header on, and valid_end() is where
//     the last one ends (the whole file after a clean end); an error repeats and an end stays one;
//   - a point read at the pointer of every scanned entry returns its value; a point read at any
//     other position either fails with Corruption or returns bytes that are a whole entry there;
//   - with recomputed checksums, every entry the fix-up walked is handed out, in order.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/file_names.h"
#include "fuzz_support.h"
#include "skv/options.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_format.h"
#include "vlog/vlog_reader.h"
#include "vlog/vlog_scanner.h"

using namespace skv;
using namespace skv::vlog;

namespace {

constexpr uint64_t kNumber = 7;

void check_pointer(std::string_view input) {
  Result<ValuePointer> p = decode_value_pointer(input);
  if (!p.ok()) {
    SKV_FUZZ_CHECK(p.status().is_corruption(), p.status().to_string());
    return;
  }
  SKV_FUZZ_CHECK(check_value_pointer(*p).ok(), "a decoded pointer must be valid");
  std::string encoded;
  encode_value_pointer(*p, &encoded);
  SKV_FUZZ_CHECK(encoded == input, "a pointer has one encoding");
  SKV_FUZZ_CHECK(encoded.size() <= kMaxValuePointerSize, "pointer longer than the maximum");
}

// Recomputes the checksum of each entry from `start`, walking by the length fields, up to the
// first entry whose lengths are impossible or run past the end. Returns the offsets it fixed.
std::vector<uint64_t> fix_entries(std::string* file, size_t start) {
  std::vector<uint64_t> out;
  size_t pos = start;
  while (file->size() >= pos + kEntryHeaderSize) {
    const uint32_t key_len = decode_fixed32(file->data() + pos + 4);
    const uint32_t value_len = decode_fixed32(file->data() + pos + 8);
    if (key_len == 0 || key_len > kMaxKeySize || value_len > kMaxValueSize ||
        entry_size(key_len, value_len) > file->size() - pos) {
      break;
    }
    const auto size = static_cast<size_t>(entry_size(key_len, value_len));
    std::string_view body(file->data() + pos + kEntryHeaderSize, size - kEntryHeaderSize);
    encode_fixed32(file->data() + pos, entry_crc(key_len, value_len, body));
    out.push_back(pos);
    pos += size;
  }
  return out;
}

bool acceptable_error(const Status& s) { return fuzz::is_header_refusal(s); }

// A point read of an entry guessed at `offset` (lengths and key taken from the bytes there).
void probe(const VlogReader& reader, const std::string& bytes, uint64_t offset) {
  if (offset + kEntryHeaderSize > bytes.size()) return;
  const uint32_t key_len = decode_fixed32(bytes.data() + offset + 4);
  const uint32_t value_len = decode_fixed32(bytes.data() + offset + 8);
  const size_t k =
      std::min<size_t>({key_len, kMaxKeySize, bytes.size() - offset - kEntryHeaderSize});
  if (k == 0) return;
  const std::string key = bytes.substr(offset + kEntryHeaderSize, k);
  ValuePointer p{kNumber, offset, entry_size(key_len, value_len)};
  std::string value;
  Status s = reader.get(p, key, &value);
  if (!s.ok()) {
    SKV_FUZZ_CHECK(s.is_corruption(), s.to_string());
    return;
  }
  SKV_FUZZ_CHECK(key_len == k, "a read with a key of another length succeeded");
  SKV_FUZZ_CHECK(offset + p.size <= bytes.size(), "a read past the end succeeded");
  SKV_FUZZ_CHECK(value == std::string_view(bytes).substr(offset + kEntryHeaderSize + k, value_len),
                 "value differs from the file");
  SKV_FUZZ_CHECK(
      decode_fixed32(bytes.data() + offset) ==
          entry_crc(key_len, value_len,
                    std::string_view(bytes).substr(offset + kEntryHeaderSize, k + value_len)),
      "a read under a bad checksum succeeded");
}

// Reads `bytes` as value log kNumber. `expected`: the entries a checksum fix-up walked, or null.
void read_log(std::string bytes, const std::vector<uint64_t>* expected) {
  const std::string name = vlog_file_name(kNumber);
  fuzz::StringLogFile file(name, &bytes);
  VlogScanner scanner(&file, kNumber);
  FileHeader header;
  Status hs = scanner.read_header(&header);
  VlogEntry entry;
  if (!hs.ok()) {
    SKV_FUZZ_CHECK(acceptable_error(hs), hs.to_string());
    Result<bool> again = scanner.next(&entry);
    SKV_FUZZ_CHECK(!again.ok() && again.status().message() == hs.message(),
                   "a bad header must fail every read");
    return;
  }
  const bool torn_header = scanner.torn_tail();
  if (torn_header) {
    SKV_FUZZ_CHECK(scanner.valid_end() == 0, "a torn header ends the valid data at 0");
  } else {
    SKV_FUZZ_CHECK(header.kind == FileKind::ValueLog && header.file_number == kNumber,
                   "header kind and number");
  }
  Result<std::unique_ptr<VlogReader>> reader =
      VlogReader::open(std::make_unique<fuzz::StringLogFile>(name, &bytes), kNumber);
  SKV_FUZZ_CHECK(reader.ok() != torn_header, "the reader opens exactly the files with a header");
  uint64_t expected_offset = torn_header ? 0 : kFileHeaderSize;
  size_t count = 0;
  const size_t max_entries = bytes.size() / kMinEntrySize + 2;
  while (true) {
    SKV_FUZZ_CHECK(count <= max_entries, "more entries than the file can hold");
    Result<bool> got = scanner.next(&entry);
    if (!got.ok()) {
      SKV_FUZZ_CHECK(got.status().is_corruption(), got.status().to_string());
      SKV_FUZZ_CHECK(got.status().message().find(name + ": corrupt value log entry at offset " +
                                                 std::to_string(expected_offset)) == 0,
                     "the error names the file and the entry's offset");
      Result<bool> again = scanner.next(&entry);
      SKV_FUZZ_CHECK(!again.ok() && again.status().message() == got.status().message(),
                     "an error must repeat");
      break;
    }
    if (!*got) {
      SKV_FUZZ_CHECK(scanner.valid_end() == expected_offset, "valid_end after the last entry");
      if (!scanner.torn_tail()) {
        SKV_FUZZ_CHECK(expected_offset == bytes.size(), "a clean end is the end of the file");
      }
      Result<bool> again = scanner.next(&entry);
      SKV_FUZZ_CHECK(again.ok() && !*again, "an end must stay an end");
      break;
    }
    const ValuePointer& p = entry.pointer;
    SKV_FUZZ_CHECK(p.offset == expected_offset, "entries must be back to back");
    SKV_FUZZ_CHECK(check_value_pointer(p).ok(), "a scanned entry's pointer is valid");
    SKV_FUZZ_CHECK(p.file_number == kNumber, "pointer file number");
    SKV_FUZZ_CHECK(!entry.key.empty() && entry.key.size() <= kMaxKeySize, "key size");
    SKV_FUZZ_CHECK(entry.value.size() <= kMaxValueSize, "value size");
    SKV_FUZZ_CHECK(p.size == entry_size(entry.key.size(), entry.value.size()), "pointer size");
    SKV_FUZZ_CHECK(p.offset + p.size <= bytes.size(), "entry past the end of the file");
    const char* h = bytes.data() + p.offset;
    SKV_FUZZ_CHECK(
        decode_fixed32(h + 4) == entry.key.size() && decode_fixed32(h + 8) == entry.value.size(),
        "entry length fields");
    SKV_FUZZ_CHECK(std::string_view(h + kEntryHeaderSize, p.size - kEntryHeaderSize) ==
                       entry.key + entry.value,
                   "entry bytes differ from the file");
    SKV_FUZZ_CHECK(decode_fixed32(h) == entry_crc(static_cast<uint32_t>(entry.key.size()),
                                                  static_cast<uint32_t>(entry.value.size()),
                                                  entry.key + entry.value),
                   "entry checksum");
    if (expected != nullptr && !torn_header && count < expected->size()) {
      SKV_FUZZ_CHECK((*expected)[count] == p.offset, "fixed-up entry offset");
    }
    SKV_FUZZ_CHECK(reader.ok(), "entries without a reader");
    std::string value;
    Status read = (*reader)->get(p, entry.key, &value);
    SKV_FUZZ_CHECK(read.ok(), read.to_string());
    SKV_FUZZ_CHECK(value == entry.value, "a point read differs from the scan");
    std::string encoded;
    encode_value_pointer(p, &encoded);
    Result<ValuePointer> decoded = decode_value_pointer(encoded);
    SKV_FUZZ_CHECK(decoded.ok() && *decoded == p, "pointer round trip");
    expected_offset = p.offset + p.size;
    SKV_FUZZ_CHECK(scanner.valid_end() == expected_offset, "valid_end after an entry");
    ++count;
  }
  if (expected != nullptr && !torn_header) {
    SKV_FUZZ_CHECK(count >= expected->size(), "an intact entry was not handed out");
  }
  // Point reads at positions no scan vouched for.
  if (reader.ok()) {
    const uint64_t step = bytes.size() / 64 + 1;
    for (uint64_t q = kFileHeaderSize; q < bytes.size(); q += step) probe(**reader, bytes, q);
    if (expected != nullptr) {
      for (uint64_t q : *expected) probe(**reader, bytes, q);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_view(data, size);
  check_pointer(input);
  if (input.size() > kMaxValuePointerSize) {
    check_pointer(input.substr(input.size() - kMaxValuePointerSize));
  }
  read_log(std::string(input), nullptr);
  std::string fixed(input);
  fuzz::fix_file_header(&fixed);
  const std::vector<uint64_t> offsets = fix_entries(&fixed, kFileHeaderSize);
  if (fixed != input) read_log(std::move(fixed), &offsets);
  return 0;
}
