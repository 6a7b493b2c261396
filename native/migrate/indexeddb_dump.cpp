#include "native/migrate/indexeddb_dump.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "native/migrate/source.h"
#include "native/migrate/source_file.h"

namespace skv::migration {

namespace {

uint32_t be32(const std::string& buf, size_t at) {
  return (uint32_t{static_cast<unsigned char>(buf[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(buf[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(buf[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(buf[at + 3])};
}

// The dump is read in one pass to check its structure and build an index of its records (keys
// and value offsets), sorted by key; values are read again, one at a time, as they are handed
// over, so memory holds the keys and one value.
class IndexedDbDumpReader : public SourceReader {
 public:
  explicit IndexedDbDumpReader(SourceFile file) : file_(std::move(file)) {}

  MigrationSource kind() const override { return MigrationSource::IndexedDbDump; }
  std::vector<std::string> families() const override { return {""}; }
  bool has_versions() const override { return false; }
  uint64_t total_bytes() const override { return file_.size(); }

  Status read(const SourceReadOptions& options, RecordSink& sink) override {
    for (const std::string& f : options.families) {
      if (!f.empty()) {
        return Status::invalid_argument(file_.path() +
                                        ": an IndexedDB dump has no column families");
      }
    }
    std::vector<Entry> entries;
    if (Status s = index(&entries); !s.ok()) return s;
    if (options.progress) options.progress(file_.size(), file_.size());
    std::string value;
    for (const Entry& e : entries) {
      if (Status s = file_.read_at(e.value_at, e.value_len, &value); !s.ok()) return s;
      SourceRecord r;
      r.key = e.key;
      r.value = value;
      if (Status s = sink.put(r); !s.ok()) return s;
    }
    return Status::OK();
  }

 private:
  struct Entry {
    std::string key;
    uint64_t key_at;
    uint64_t value_at;
    uint32_t value_len;
  };

  // Checks the whole layout and fills `entries`, sorted by key.
  Status index(std::vector<Entry>* entries) const {
    const uint64_t size = file_.size();
    std::string head;
    if (size < kIndexedDbDumpMagic.size() + 4) {
      return Status::corruption(file_.where(0, "an IndexedDB dump of " + std::to_string(size) +
                                                   " bytes is shorter than its 12-byte header"));
    }
    if (Status s = file_.read_at(0, 12, &head); !s.ok()) return s;
    if (std::string_view(head).substr(0, 8) != kIndexedDbDumpMagic) {
      return Status::corruption(
          file_.where(0, "not an IndexedDB dump (the magic is not INDXDB01)"));
    }
    const uint32_t count = be32(head, 8);
    uint64_t at = 12;
    std::string len;
    // Every record takes at least 8 bytes: a count the file cannot hold is refused before any
    // memory is reserved for it.
    if (count > (size - at) / 8) {
      return Status::corruption(file_.where(8, "the dump says " + std::to_string(count) +
                                                   " records, more than its " +
                                                   std::to_string(size) + " bytes can hold"));
    }
    entries->reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      Entry e{};
      if (size - at < 4) return truncated(at, i, count);
      if (Status s = file_.read_at(at, 4, &len); !s.ok()) return s;
      const uint32_t key_len = be32(len, 0);
      e.key_at = at + 4;
      if (key_len > size - e.key_at) return past_end(at, "key", i);
      if (Status s = file_.read_at(e.key_at, key_len, &e.key); !s.ok()) return s;
      at = e.key_at + key_len;
      if (size - at < 4) return truncated(at, i, count);
      if (Status s = file_.read_at(at, 4, &len); !s.ok()) return s;
      e.value_len = be32(len, 0);
      e.value_at = at + 4;
      if (e.value_len > size - e.value_at) return past_end(at, "value", i);
      at = e.value_at + e.value_len;
      entries->push_back(std::move(e));
    }
    if (at != size) {
      return Status::corruption(file_.where(at, std::to_string(size - at) +
                                                    " bytes follow the last of the " +
                                                    std::to_string(count) + " records"));
    }
    std::sort(entries->begin(), entries->end(),
              [](const Entry& x, const Entry& y) { return x.key < y.key; });
    for (size_t i = 1; i < entries->size(); ++i) {
      if ((*entries)[i - 1].key == (*entries)[i].key) {
        return Status::corruption(
            file_.where((*entries)[i].key_at - 4, "a key appears twice in the dump"));
      }
    }
    return Status::OK();
  }

  Status truncated(uint64_t at, uint32_t i, uint32_t count) const {
    return Status::corruption(file_.where(
        at, "the dump ends inside record " + std::to_string(i) + " of " + std::to_string(count)));
  }
  Status past_end(uint64_t at, const char* what, uint32_t i) const {
    return Status::corruption(file_.where(at, std::string("the ") + what + " length of record " +
                                                  std::to_string(i) +
                                                  " runs past the end of the dump"));
  }

  SourceFile file_;
};

}  // namespace

Result<std::unique_ptr<SourceReader>> open_indexeddb_dump(const std::string& path) {
  std::string file = path;
  if (path_exists(path + "/" + std::string(kIndexedDbDumpFileName))) {
    file = path + "/" + std::string(kIndexedDbDumpFileName);
  }
  auto f = SourceFile::open(file);
  if (!f.ok()) return f.status();
  return std::unique_ptr<SourceReader>(new IndexedDbDumpReader(std::move(f).value()));
}

}  // namespace skv::migration
