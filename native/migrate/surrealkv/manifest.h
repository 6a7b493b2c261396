// The SurrealKV 0.20/0.21 manifest (manifest/00000000000000000000.manifest): which tables are
// live on which level, the first WAL segment to replay and the last flushed sequence number.
//
// Grammar (all big-endian, no checksum, no magic):
//   version u16 (=1) | next_table_id u64 | log_number u64 | last_sequence u64 |
//   level_count u8 | level_count × { table_count u32 | table_id u64 × table_count } |
//   snapshot_count u32 | snapshot_count × { len u32 (=24) | seq u64 | created_at u128 }
//
// With no checksum, every field is checked: the version, every count against the bytes left,
// no trailing bytes, table ids nonzero, distinct and below next_table_id. The checks that need
// the tables themselves are in the reader (surrealkv_reader.cpp).
//
// Plain values and a function; thread-compatible.

#ifndef SKV_NATIVE_MIGRATE_SURREALKV_MANIFEST_H_
#define SKV_NATIVE_MIGRATE_SURREALKV_MANIFEST_H_

#include <cstdint>
#include <vector>

#include "native/migrate/source_file.h"
#include "skv/status.h"

namespace skv::migration::surrealkv {

struct Manifest {
  uint64_t next_table_id = 0;
  uint64_t log_number = 0;
  uint64_t last_sequence = 0;
  std::vector<std::vector<uint64_t>> levels;  // table ids, level 0 first, in manifest order
};

// Reads and checks the whole manifest. Corruption (file and offset) for any field that fails a
// check; NotSupported for an unknown version.
Result<Manifest> read_manifest(const SourceFile& file);

}  // namespace skv::migration::surrealkv

#endif  // SKV_NATIVE_MIGRATE_SURREALKV_MANIFEST_H_
