#include "native/migrate/surrealkv/table_meta.h"

#include "native/migrate/surrealkv/surrealkv_format.h"

namespace skv::migration::surrealkv {

namespace {

constexpr uint8_t kTableFormat = 1;

}  // namespace

Status decode_table_meta(const SourceFile& file, uint64_t offset, std::string_view bytes,
                         TableMeta* out) {
  auto bad = [&](const std::string& what) {
    return Status::corruption(file.where(offset, "table metadata: " + what));
  };
  Cursor c(bytes, 0);
  uint64_t props_len = 0;
  if (!c.u8(&out->has_point_keys) || !c.be64(&out->smallest_seq) || !c.be64(&out->largest_seq) ||
      !c.be64(&props_len)) {
    return bad("cut short");
  }
  if (out->has_point_keys > 2) {
    return bad("unknown has_point_keys byte " + std::to_string(out->has_point_keys));
  }
  if (props_len != kPropertiesSize) {
    return bad("properties of " + std::to_string(props_len) + " bytes, expected " +
               std::to_string(kPropertiesSize));
  }
  std::string_view props;
  if (!c.bytes(kPropertiesSize, &props)) return bad("properties cut short");
  Cursor p(props, 0);
  uint8_t format = 0;
  uint64_t skip = 0;
  std::string_view skip_bytes;
  bool ok = p.be64(&out->id) && p.u8(&format) && p.be64(&out->num_entries) &&
            p.be64(&out->num_deletions) && p.be64(&skip) /* data_size */ &&
            p.be64(&skip) /* oldest_vlog_file_id */ && p.be64(&out->num_data_blocks) &&
            p.be64(&skip) /* index_size */ && p.be64(&out->index_partitions);
  // top_level_index_size, filter_size, raw_key_size, raw_value_size, created_at (u128),
  // item_count, key_count, tombstone_count.
  ok = ok && p.bytes(4 * 8 + 16 + 3 * 8, &skip_bytes) && p.be64(&out->num_soft_deletes);
  // num_range_deletions, block_size, block_count, compression, seqnos, key times.
  ok = ok && p.bytes(8 + 4 + 4 + 1 + 16 + 16, &skip_bytes) && p.done();
  if (!ok) return bad("properties do not add up to their length");
  if (format != kTableFormat) {
    return Status::not_supported(
        file.where(offset, "table metadata: unknown table format " + std::to_string(format)));
  }
  for (std::optional<std::string>* point : {&out->smallest_point, &out->largest_point}) {
    uint8_t present = 0;
    if (!c.u8(&present)) return bad("key bounds cut short");
    if (present == 0) {
      point->reset();
      continue;
    }
    uint64_t len = 0;
    std::string_view key;
    if (present != 1) return bad("unknown key bound flag " + std::to_string(present));
    if (!c.be64(&len) || len > c.remaining() || !c.bytes(static_cast<size_t>(len), &key)) {
      return bad("key bound cut short");
    }
    *point = std::string(key);
  }
  if (!c.done()) return bad(std::to_string(c.remaining()) + " trailing bytes");
  return Status::OK();
}

}  // namespace skv::migration::surrealkv
