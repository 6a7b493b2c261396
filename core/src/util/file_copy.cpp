#include "util/file_copy.h"

#include <memory>
#include <string_view>
#include <vector>

#include "util/status_macros.h"

namespace skv {

namespace {

constexpr size_t kCopyChunk = 1u << 20;

// Reads `reader` from start to end (its size fixed at `size`), handing each chunk to `sink`.
template <typename Reader, typename Sink>
Status copy_bytes(const Reader& reader, uint64_t size, const std::string& label, Sink sink) {
  std::vector<char> scratch(kCopyChunk);
  uint64_t offset = 0;
  while (offset < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kCopyChunk, size - offset));
    std::string_view got;
    SKV_RETURN_IF_ERROR(reader.read_at(offset, want, scratch.data(), &got));
    if (got.empty()) {
      return Status::io_error(label + ": copy: the file ended at offset " + std::to_string(offset) +
                              " of " + std::to_string(size));
    }
    SKV_RETURN_IF_ERROR(sink(got));
    offset += got.size();
  }
  return Status::OK();
}

}  // namespace

Status copy_file(Storage& from, Storage& to, const std::string& name, bool object, FileCopy how,
                 uint64_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  if (how == FileCopy::LinkOrCopy) {
    Status linked = to.link_from(from, name);
    if (linked.ok() || linked.code() != Code::NotSupported) return linked;
  }
  const std::string label = from.location() + "/" + name;
  uint64_t size = 0;
  if (object) {
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> reader, from.objects().open(name));
    size = reader->size();
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectWriter> writer, to.objects().create(name));
    Status s = copy_bytes(*reader, size, label,
                          [&](std::string_view chunk) { return writer->append(chunk); });
    if (s.ok()) s = writer->finish();
    if (!s.ok()) {
      writer->abort();
      return s;
    }
  } else {
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> reader, from.logs().open(name));
    size = reader->size();
    Result<std::unique_ptr<LogFile>> created = to.logs().create(name);
    if (!created.ok()) {
      (void)reader->close();
      return created.status();
    }
    std::unique_ptr<LogFile> writer = std::move(created).value();
    Status s = copy_bytes(*reader, size, label,
                          [&](std::string_view chunk) { return writer->append(chunk); });
    if (s.ok()) s = writer->sync();
    Status closed = writer->close();
    if (s.ok()) s = closed;
    (void)reader->close();
    if (!s.ok()) {
      (void)to.logs().remove(name);
      return s;
    }
  }
  if (bytes != nullptr) *bytes = size;
  return Status::OK();
}

}  // namespace skv
