// migrate() and detect_migration_source() (skv/migrate.h), and migrate_from(), the driver they
// share with the tests (migrate_driver.h).

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include "native/migrate/indexeddb_dump.h"
#include "native/migrate/migrate_driver.h"
#include "native/migrate/source.h"
#include "native/migrate/source_file.h"
#include "native/migrate/staging_dir.h"
#include "native/migrate/tree_sink.h"
#include "skv/migrate.h"

namespace skv {

std::string_view migration_source_name(MigrationSource source) {
  switch (source) {
    case MigrationSource::Auto:
      return "auto";
    case MigrationSource::RocksDb:
      return "rocksdb";
    case MigrationSource::SurrealKv:
      return "surrealkv";
    case MigrationSource::IndexedDbDump:
      return "indexeddb-dump";
  }
  return "unknown";
}

namespace {

namespace fs = std::filesystem;
using migration::SourceFile;

// The first `n` bytes of the regular file at `path` ("" when it is missing or shorter).
std::string first_bytes(const std::string& path, size_t n) {
  auto f = SourceFile::open(path);
  std::string out;
  if (!f.ok() || f->size() < n || !f->read_at(0, n, &out).ok()) return "";
  return out;
}

bool is_dump(const std::string& path) {
  return first_bytes(path, migration::kIndexedDbDumpMagic.size()) == migration::kIndexedDbDumpMagic;
}

}  // namespace

Result<MigrationSource> detect_migration_source(const std::string& source) {
  std::error_code ec;
  const fs::file_type type = fs::status(source, ec).type();
  if (type == fs::file_type::not_found) return Status::not_found(source + ": no such source");
  if (type == fs::file_type::regular) {
    if (is_dump(source)) return MigrationSource::IndexedDbDump;
    return Status::invalid_argument(source +
                                    ": a file that is not an IndexedDB dump (no INDXDB01 magic)");
  }
  if (type != fs::file_type::directory) {
    return Status::invalid_argument(source + ": neither a directory nor a dump file");
  }
  if (is_dump(source + "/" + std::string(migration::kIndexedDbDumpFileName))) {
    return MigrationSource::IndexedDbDump;
  }
  if (migration::path_exists(source + "/manifest/00000000000000000000.manifest")) {
    return MigrationSource::SurrealKv;
  }
  // RocksDB and skv both keep a CURRENT naming a MANIFEST-<n>; skv's files start with "SKV1".
  std::string current = first_bytes(source + "/CURRENT", 9);
  if (current == "MANIFEST-") {
    auto f = SourceFile::open(source + "/CURRENT");
    std::string name;
    if (f.ok() && f->read_all(&name).ok()) {
      while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
      if (name.find('/') == std::string::npos &&
          first_bytes(source + "/" + name, 4) == std::string("SKV1", 4)) {
        return Status::invalid_argument(source + ": already an skv database");
      }
    }
    return MigrationSource::RocksDb;
  }
  return Status::invalid_argument(
      source +
      ": not a source migrate reads (looked for a RocksDB CURRENT, a SurrealKV "
      "manifest/00000000000000000000.manifest, and an IndexedDB dump)");
}

Result<MigrateSummary> migrate(const std::string& source, const std::string& destination,
                               const MigrateOptions& options, TreeBuilder builder) {
  MigrationSource kind = options.source;
  if (kind == MigrationSource::Auto) {
    auto detected = detect_migration_source(source);
    if (!detected.ok()) return detected.status();
    kind = *detected;
  }
  Result<std::unique_ptr<migration::SourceReader>> reader =
      Status::invalid_argument("migrate: no source kind");
  switch (kind) {
    case MigrationSource::RocksDb:
      reader = migration::open_rocksdb(source);
      break;
    case MigrationSource::SurrealKv:
      reader = migration::open_surrealkv(source);
      break;
    case MigrationSource::IndexedDbDump:
      reader = migration::open_indexeddb_dump(source);
      break;
    case MigrationSource::Auto:
      break;
  }
  if (!reader.ok()) return reader.status();
  return migration::migrate_from(**reader, destination, options, std::move(builder));
}

}  // namespace skv

namespace skv::migration {

namespace {

// The families to read, in order, as the options ask.
Result<std::vector<std::string>> chosen_families(const SourceReader& reader,
                                                 const MigrateOptions& options) {
  const std::vector<std::string> have = reader.families();
  const bool has_families = reader.kind() == MigrationSource::RocksDb;
  if (!has_families) {
    if (!options.column_families.empty() || options.all_column_families) {
      return Status::invalid_argument("migrate: column families were asked for, but the source (" +
                                      std::string(migration_source_name(reader.kind())) +
                                      ") has none");
    }
    return have;
  }
  if (options.all_column_families) {
    if (!options.column_families.empty()) {
      return Status::invalid_argument(
          "migrate: name column families or ask for all of them, not both");
    }
    return have;
  }
  if (options.column_families.empty()) return std::vector<std::string>{have.front()};
  std::vector<std::string> out;
  for (const std::string& name : options.column_families) {
    if (std::find(have.begin(), have.end(), name) == have.end()) {
      std::string list;
      for (const std::string& h : have) list += (list.empty() ? "" : ", ") + h;
      return Status::invalid_argument("migrate: the source has no column family \"" + name +
                                      "\" (it has: " + list + ")");
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return Status::invalid_argument("migrate: column family \"" + name + "\" named twice");
    }
    out.push_back(name);
  }
  return out;
}

}  // namespace

Result<MigrateSummary> migrate_from(SourceReader& reader, const std::string& destination,
                                    const MigrateOptions& options, TreeBuilder builder) {
  if (options.batch_bytes == 0) {
    return Status::invalid_argument("migrate: batch_bytes must be at least 1");
  }
  auto families = chosen_families(reader, options);
  if (!families.ok()) return families.status();
  const bool versioned = options.versions && reader.has_versions();
  const bool several = families->size() > 1;

  auto staging = StagingDir::create(destination);
  if (!staging.ok()) return staging.status();
  builder.with_path(staging->db_path()).with_create_if_missing(true);
  if (versioned) builder.with_versioning(true, options.retention_ns);
  auto tree = builder.build();
  if (!tree.ok()) return tree.status().with_context("migrate: create the destination");

  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const uint64_t import_time =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  TreeSink sink(*tree, options, several && options.family_mapping == FamilyMapping::Prefix,
                several && options.family_mapping == FamilyMapping::Merge, versioned, import_time);
  SourceReadOptions read;
  read.families = *families;
  read.versions = versioned;
  read.progress = [&sink](uint64_t done, uint64_t total) { sink.set_source_progress(done, total); };
  sink.set_source_progress(0, reader.total_bytes());
  Status s = reader.read(read, sink);
  if (s.ok()) s = sink.finish();
  // Everything written reaches tables, synced with the manifest, before the rename.
  if (s.ok()) s = tree->flush().wait();
  Status closed = tree->close();
  if (s.ok()) s = closed;
  if (!s.ok()) return s;  // the staging directory goes with `staging`
  if (Status p = staging->publish(); !p.ok()) return p;

  MigrateSummary summary = sink.summary();
  summary.source = reader.kind();
  summary.source_bytes = reader.total_bytes();  // every live file was read
  if (reader.kind() == MigrationSource::RocksDb) summary.column_families = *families;
  return summary;
}

}  // namespace skv::migration
