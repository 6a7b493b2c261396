#include "native/migrate/surrealkv/table_block.h"

#include <snappy.h>

#include "native/migrate/surrealkv/surrealkv_format.h"
#include "util/status_macros.h"

namespace skv::migration::surrealkv {

namespace {

constexpr uint8_t kNoCompression = 0;
constexpr uint8_t kSnappy = 1;
// A block larger than this once uncompressed is refused rather than allocated.
constexpr size_t kMaxBlock = size_t{1} << 30;

}  // namespace

Status read_block(const SourceFile& file, const BlockHandle& h, std::string_view what,
                  std::string* contents) {
  std::string w(what);
  if (h.offset > file.size() || h.size > file.size() - h.offset ||
      kBlockTrailer > file.size() - h.offset - h.size) {
    return Status::corruption(file.where(h.offset, w + " of " + std::to_string(h.size) +
                                                       " bytes (and trailer) past the end of the "
                                                       "file of " +
                                                       std::to_string(file.size()) + " bytes"));
  }
  std::string raw;
  SKV_RETURN_IF_ERROR(file.read_at(h.offset, static_cast<size_t>(h.size + kBlockTrailer), &raw));
  std::string_view stored(raw.data(), static_cast<size_t>(h.size));
  Cursor t(std::string_view(raw).substr(static_cast<size_t>(h.size)), h.offset + h.size);
  uint8_t compression = 0;
  uint32_t masked = 0;
  if (!t.u8(&compression) || !t.le32(&masked)) {
    return Status::corruption(file.where(h.offset + h.size, w + " trailer cut short"));
  }
  uint32_t actual = crc32_ieee(stored, std::string_view(raw.data() + h.size, 1));
  if (unmask_crc(masked) != actual) {
    return Status::corruption(file.where(h.offset, w + " fails its CRC-32 check"));
  }
  if (compression == kNoCompression) {
    contents->assign(stored);
    return Status::OK();
  }
  if (compression != kSnappy) {
    return Status::not_supported(file.where(
        h.offset + h.size, w + " with unknown compression byte " + std::to_string(compression)));
  }
  size_t n = 0;
  if (!snappy::GetUncompressedLength(stored.data(), stored.size(), &n) || n > kMaxBlock) {
    return Status::corruption(file.where(h.offset, w + ": bad Snappy length"));
  }
  contents->resize(n);
  if (!snappy::RawUncompress(stored.data(), stored.size(), contents->data())) {
    return Status::corruption(file.where(h.offset, w + ": Snappy data does not uncompress"));
  }
  return Status::OK();
}

Status decode_block(const SourceFile& file, uint64_t offset, std::string_view contents,
                    std::vector<BlockEntry>* out) {
  out->clear();
  auto bad = [&](const std::string& what) {
    return Status::corruption(file.where(offset, "block: " + what));
  };
  if (contents.size() < 4) return bad("shorter than its restart count");
  Cursor tail(contents.substr(contents.size() - 4), 0);
  uint32_t n = 0;
  (void)tail.le32(&n);
  if (n == 0) return bad("no restart points");
  if (n > (contents.size() - 4) / 4)
    return bad("restart count " + std::to_string(n) + " too large");
  size_t limit = contents.size() - 4 - 4 * static_cast<size_t>(n);
  Cursor restarts(contents.substr(limit, 4 * static_cast<size_t>(n)), 0);
  std::vector<uint32_t> starts(n);
  for (uint32_t& s : starts) (void)restarts.le32(&s);
  Cursor c(contents.substr(0, limit), 0);
  size_t next_restart = 0;
  std::string key;
  while (!c.done()) {
    size_t at = static_cast<size_t>(c.offset());
    bool is_restart = next_restart < starts.size() && starts[next_restart] == at;
    if (next_restart < starts.size() && starts[next_restart] < at) {
      return bad("restart offset " + std::to_string(starts[next_restart]) +
                 " is not an entry start");
    }
    uint64_t shared = 0, unshared = 0, vlen = 0;
    std::string_view suffix, value;
    if (!c.varint(&shared) || !c.varint(&unshared) || !c.varint(&vlen)) {
      return bad("entry header at byte " + std::to_string(at) + " cut short");
    }
    if (shared > key.size() || (is_restart && shared != 0) || (at == 0 && shared != 0)) {
      return bad("entry at byte " + std::to_string(at) + " shares " + std::to_string(shared) +
                 " bytes with a key of " + std::to_string(key.size()));
    }
    if (unshared > c.remaining() || !c.bytes(static_cast<size_t>(unshared), &suffix) ||
        vlen > c.remaining() || !c.bytes(static_cast<size_t>(vlen), &value)) {
      return bad("entry at byte " + std::to_string(at) + " runs past the entries");
    }
    key.resize(static_cast<size_t>(shared));
    key.append(suffix);
    out->push_back(BlockEntry{key, value});
    if (is_restart) ++next_restart;
  }
  if (next_restart != starts.size()) {
    return bad("restart offset " + std::to_string(starts[next_restart]) + " is not an entry start");
  }
  if (out->empty()) return bad("no entries");
  return Status::OK();
}

bool decode_handle(std::string_view bytes, BlockHandle* h) {
  Cursor c(bytes, 0);
  return c.varint(&h->offset) && c.varint(&h->size) && c.done();
}

}  // namespace skv::migration::surrealkv
