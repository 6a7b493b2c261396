// Migration into skv (docs/migration.md): the live data of a database written by another engine
// (RocksDB, SurrealKV 0.20/0.21) or of an IndexedDB dump file, copied into a new skv database.
//
//   skv::MigrateOptions options;
//   options.progress = [](const skv::MigrateProgress& p) { ... };
//   skv::Result<skv::MigrateSummary> s = skv::migrate("old/rocksdb", "new/skvdb", options);
//
// Implemented by the skv::migrate library, which only native builds have. The source is opened
// read-only and never written to; it must not be open in its own engine meanwhile. The
// destination is built in a temporary directory beside it and renamed into place once every
// record is written and synced, so a failed or interrupted migration leaves no directory at
// `destination` (a leftover temporary directory does not open as a database; the next run
// removes it and starts again).
//
// Thread safety: migrate() may be called from any thread; concurrent calls need distinct
// destinations.

#ifndef SKV_MIGRATE_H_
#define SKV_MIGRATE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "skv/status.h"
#include "skv/tree.h"

namespace skv {

// What a migration reads.
enum class MigrationSource : unsigned char {
  Auto,           // detected from the source's files (detect_migration_source)
  RocksDb,        // a RocksDB directory (CURRENT, MANIFEST-*, *.sst, *.log, *.blob)
  SurrealKv,      // a SurrealKV 0.20/0.21 directory (manifest/, sstables/, wal/, vlog/)
  IndexedDbDump,  // an IndexedDB dump file (magic "INDXDB01"), or a directory holding one
};

// Stable lower-case name: "auto", "rocksdb", "surrealkv", "indexeddb-dump".
std::string_view migration_source_name(MigrationSource source);

// How several RocksDB column families land in one skv database.
enum class FamilyMapping : unsigned char {
  // Each key becomes `family name`, one 0x00 byte, then the key: families stay apart and each
  // is one contiguous key range, ordered by name. Used when more than one family is imported.
  Prefix,
  // Keys are copied as they are. Refused when two imported families hold the same key.
  Merge,
};

struct MigrateProgress {
  uint64_t bytes_read = 0;   // of the source's live files
  uint64_t bytes_total = 0;  // of the source's live files (0 when unknown)
  uint64_t keys = 0;         // distinct keys written so far
  uint64_t versions = 0;     // versions written so far (equal to keys without versions)
};

struct MigrateOptions {
  MigrationSource source = MigrationSource::Auto;
  // RocksDB column families to import, by name. Empty: "default" alone. A name the source does
  // not have is InvalidArgument. all_column_families imports every family the source has.
  std::vector<std::string> column_families;
  bool all_column_families = false;
  FamilyMapping family_mapping = FamilyMapping::Prefix;
  // Where the source stores versions with their times (SurrealKV with versioning, RocksDB with
  // timestamps in its keys), import every one of them into a versioned destination (created
  // with TreeBuilder::with_versioning(true, retention_ns)). False, or a source without versions:
  // the newest value of each key, stamped with the time of the import.
  bool versions = true;
  uint64_t retention_ns = 0;  // the destination's retention when versions are imported (0: all)
  // Records per destination transaction (each commit is one batch).
  size_t batch_bytes = 4 << 20;
  // Called after each batch and once at the end, on the calling thread.
  std::function<void(const MigrateProgress&)> progress;
};

struct MigrateSummary {
  MigrationSource source = MigrationSource::Auto;  // what was read (never Auto)
  std::vector<std::string> column_families;        // imported (RocksDB), in order
  bool versioned = false;     // the destination holds the source's versions and times
  uint64_t keys = 0;          // distinct keys in the destination
  uint64_t versions = 0;      // versions written, tombstone versions included
  uint64_t tombstones = 0;    // of those, versions that delete their key (versioned only)
  uint64_t bytes = 0;         // key and value bytes written
  uint64_t source_bytes = 0;  // bytes of the source's files read
};

// What the file or directory at `source` is: RocksDb (a CURRENT naming a MANIFEST), SurrealKv
// (manifest/00000000000000000000.manifest), IndexedDbDump (the magic, in the file or in
// `source`/indxdb_dump.bin). Reads no more than names and first bytes. NotFound when `source`
// does not exist; InvalidArgument (naming what was looked for) when it is none of these.
Result<MigrationSource> detect_migration_source(const std::string& source);

// Copies the live data of `source` into a new skv database at `destination`. `builder` gives
// the destination's options (its path is replaced by migrate; with_versioning is set when
// versions are imported). `destination` must not exist (InvalidArgument otherwise, and nothing
// is touched). Errors in the source are named, with the file and offset: Corruption for bytes
// that fail a check, NotSupported for a feature the reader does not decode (for example merge
// operands, listing their keys). On any error nothing is left at `destination`.
Result<MigrateSummary> migrate(const std::string& source, const std::string& destination,
                               const MigrateOptions& options = {},
                               TreeBuilder builder = TreeBuilder());

}  // namespace skv

#endif  // SKV_MIGRATE_H_
