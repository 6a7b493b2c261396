// libFuzzer target: the decrypting readers (docs/encryption.md). An input is the bytes of a
// sealed file; it is read, as it is and with its header and record checksums recomputed
// (fuzz_support.h, so the envelope checks and the authentication behind the checksums are
// reached), as a WAL segment and a manifest (log::Reader), a value log (VlogScanner) and a table
// (Table::open, then a forward walk and get()), all under the fixed keyring of sealed_files.h.
//
// Oracle: nothing crashes or hangs; every failure is a named Status (Corruption, Encryption with
// its sub-kind, or NotSupported); and whatever a reader hands out is a plaintext the corpus
// generator sealed (sealed_files.h): a sealed unit that is edited, moved or forged never opens.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "fuzz_support.h"
#include "sealed_files.h"
#include "sstable/table.h"
#include "vlog/vlog_scanner.h"
#include "wal/log_reader.h"

using namespace skv;

namespace {

bool named_error(const Status& s) {
  return s.is_corruption() || s.code() == Code::NotSupported ||
         (s.code() == Code::Encryption && s.encryption_error() != EncryptionError::None);
}

const std::set<std::string>& known_records() {
  static const std::set<std::string>* set = [] {
    auto* s = new std::set<std::string>;
    for (FileKind k : {FileKind::Wal, FileKind::Manifest}) {
      for (const std::string& r : fuzz::sealed_log_records(k)) s->insert(r);
    }
    return s;
  }();
  return *set;
}

const std::set<std::pair<std::string, std::string>>& known_entries() {
  static const std::set<std::pair<std::string, std::string>>* set = [] {
    auto* s = new std::set<std::pair<std::string, std::string>>;
    for (const auto& e : fuzz::sealed_vlog_entries()) s->insert(e);
    for (const auto& e : fuzz::sealed_table_entries()) s->insert(e);
    return s;
  }();
  return *set;
}

void read_log(std::string bytes, FileKind kind) {
  fuzz::StringLogFile file(kind == FileKind::Wal ? "000007.wal" : "MANIFEST-000003", &bytes);
  log::Reader reader(&file, kind, fuzz::sealed_keyring());
  FileHeader header;
  Status hs = reader.read_header(&header);
  if (!hs.ok()) {
    SKV_FUZZ_CHECK(named_error(hs), hs.to_string());
    return;
  }
  std::string record;
  uint64_t offset = 0;
  for (size_t n = 0; n <= bytes.size() / 9 + 2; ++n) {
    Result<bool> got = reader.read_record(&record, &offset);
    if (!got.ok()) {
      SKV_FUZZ_CHECK(named_error(got.status()), got.status().to_string());
      return;
    }
    if (!*got) return;
    // A plaintext header (the file is not sealed) is refused by cipher_for_header, so every
    // record handed out was opened.
    SKV_FUZZ_CHECK(known_records().count(record) == 1, "a record that was never sealed");
  }
  SKV_FUZZ_CHECK(false, "more records than the file can hold");
}

void read_vlog(std::string bytes) {
  fuzz::StringLogFile file("000009.vlog", &bytes);
  vlog::VlogScanner scanner(&file, fuzz::kSealedVlogNumber, fuzz::sealed_keyring());
  vlog::VlogEntry e;
  for (size_t n = 0; n <= bytes.size() / 12 + 2; ++n) {
    Result<bool> got = scanner.next(&e);
    if (!got.ok()) {
      SKV_FUZZ_CHECK(named_error(got.status()), got.status().to_string());
      return;
    }
    if (!*got) return;
    SKV_FUZZ_CHECK(known_entries().count({e.key, e.value}) == 1,
                   "a value log entry that was never sealed");
  }
  SKV_FUZZ_CHECK(false, "more entries than the file can hold");
}

void read_table(std::string bytes) {
  auto file = std::make_unique<fuzz::StringObjectReader>("000042.sst", std::move(bytes));
  Result<std::shared_ptr<Table>> t =
      Table::open(std::move(file), fuzz::kSealedTableNumber, nullptr, fuzz::sealed_keyring());
  if (!t.ok()) {
    SKV_FUZZ_CHECK(named_error(t.status()), t.status().to_string());
    return;
  }
  std::unique_ptr<InternalIterator> it = (*t)->new_iterator();
  size_t n = 0;
  for (it->seek_first(); it->valid() && n < (1 << 16); it->next(), ++n) {
    SKV_FUZZ_CHECK(known_entries().count({std::string(it->key()), std::string(it->value())}) == 1,
                   "a table entry that was never sealed");
  }
  if (!it->status().ok()) SKV_FUZZ_CHECK(named_error(it->status()), it->status().to_string());
  for (int i = 0; i < 90; i += 7) {
    Table::GetResult r;
    Status s = (*t)->get(fuzz::sealed_key(i), kMaxSequenceNumber, &r);
    if (!s.ok()) {
      SKV_FUZZ_CHECK(named_error(s), s.to_string());
      continue;
    }
    if (r.found && r.kind == ValueKind::Value) {
      SKV_FUZZ_CHECK(r.value == fuzz::sealed_value(i), "get() returned a value never sealed");
    }
  }
}

void read_all(const std::string& bytes) {
  read_log(bytes, FileKind::Wal);
  read_log(bytes, FileKind::Manifest);
  read_vlog(bytes);
  read_table(bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(fuzz::as_view(data, size));
  read_all(input);
  std::string fixed = input;
  fuzz::fix_file_header(&fixed);
  fuzz::fix_log_records(&fixed, kFileHeaderSize);
  if (fixed != input) read_all(fixed);
  return 0;
}
