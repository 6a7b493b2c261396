#include "native/migrate/surrealkv/manifest.h"

#include <set>
#include <string>

#include "native/migrate/surrealkv/surrealkv_format.h"
#include "util/status_macros.h"

namespace skv::migration::surrealkv {

namespace {

constexpr uint16_t kManifestVersion = 1;
constexpr uint32_t kSnapshotSize = 8 + 16;

}  // namespace

Result<Manifest> read_manifest(const SourceFile& file) {
  std::string data;
  SKV_RETURN_IF_ERROR(file.read_all(&data));
  Cursor c(data, 0);
  auto cut = [&](const char* what) {
    return Status::corruption(file.where(c.offset(), std::string("manifest ends inside ") + what));
  };
  Manifest m;
  uint16_t version = 0;
  if (!c.be16(&version)) return cut("the version");
  if (version != kManifestVersion) {
    return Status::not_supported(
        file.where(0, "unknown manifest version " + std::to_string(version)));
  }
  if (!c.be64(&m.next_table_id) || !c.be64(&m.log_number) || !c.be64(&m.last_sequence)) {
    return cut("the header");
  }
  uint8_t level_count = 0;
  uint64_t at = c.offset();
  if (!c.u8(&level_count)) return cut("the level count");
  if (level_count == 0) return Status::corruption(file.where(at, "manifest with no levels"));
  std::set<uint64_t> seen;
  for (unsigned level = 0; level < level_count; ++level) {
    uint32_t count = 0;
    at = c.offset();
    if (!c.be32(&count)) return cut("a table count");
    if (count > c.remaining() / 8) {
      return Status::corruption(file.where(
          at, "level " + std::to_string(level) + " table count " + std::to_string(count) +
                  " larger than the " + std::to_string(c.remaining()) + " bytes left allow"));
    }
    std::vector<uint64_t> ids(count);
    for (uint64_t& id : ids) {
      at = c.offset();
      if (!c.be64(&id)) return cut("a table id");
      if (id == 0 || id >= m.next_table_id) {
        return Status::corruption(
            file.where(at, "table id " + std::to_string(id) + " outside 1..next_table_id " +
                               std::to_string(m.next_table_id) + " (exclusive)"));
      }
      if (!seen.insert(id).second) {
        return Status::corruption(
            file.where(at, "table id " + std::to_string(id) + " listed twice"));
      }
    }
    m.levels.push_back(std::move(ids));
  }
  uint32_t snapshots = 0;
  at = c.offset();
  if (!c.be32(&snapshots)) return cut("the snapshot count");
  if (snapshots > c.remaining() / (4 + kSnapshotSize)) {
    return Status::corruption(
        file.where(at, "snapshot count " + std::to_string(snapshots) + " larger than the " +
                           std::to_string(c.remaining()) + " bytes left allow"));
  }
  for (uint32_t i = 0; i < snapshots; ++i) {
    uint32_t len = 0;
    std::string_view body;
    at = c.offset();
    if (!c.be32(&len)) return cut("a snapshot");
    if (len != kSnapshotSize) {
      return Status::corruption(
          file.where(at, "snapshot record of " + std::to_string(len) + " bytes, expected 24"));
    }
    if (!c.bytes(len, &body)) return cut("a snapshot");
  }
  if (!c.done()) {
    return Status::corruption(file.where(
        c.offset(), std::to_string(c.remaining()) + " trailing bytes after the manifest"));
  }
  return m;
}

}  // namespace skv::migration::surrealkv
