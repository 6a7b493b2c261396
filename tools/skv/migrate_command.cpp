// skv migrate (commands.h, docs/migration.md).

#include <cinttypes>
#include <cstdio>
#include <string>

#include "commands.h"
#include "escape.h"
#include "progress.h"
#include "session.h"
#include "skv/migrate.h"
#include "skv/skv.h"

namespace skv::cli {

namespace {

Result<MigrateOptions> migrate_options(const MigrateRequest& r) {
  MigrateOptions o;
  if (r.source_kind == "auto") {
    o.source = MigrationSource::Auto;
  } else if (r.source_kind == "rocksdb") {
    o.source = MigrationSource::RocksDb;
  } else if (r.source_kind == "surrealkv") {
    o.source = MigrationSource::SurrealKv;
  } else if (r.source_kind == "indexeddb-dump") {
    o.source = MigrationSource::IndexedDbDump;
  } else {
    return Status::invalid_argument(
        "--source takes auto, rocksdb, surrealkv or indexeddb-dump, got '" + r.source_kind + "'");
  }
  if (r.family_mapping == "prefix") {
    o.family_mapping = FamilyMapping::Prefix;
  } else if (r.family_mapping == "merge") {
    o.family_mapping = FamilyMapping::Merge;
  } else {
    return Status::invalid_argument("--family-mapping takes prefix or merge, got '" +
                                    r.family_mapping + "'");
  }
  o.column_families = r.column_families;
  o.all_column_families = r.all_column_families;
  o.versions = r.versions;
  o.retention_ns = r.retention_ns;
  return o;
}

std::string count_text(uint64_t keys, uint64_t versions) {
  return std::to_string(keys) + " keys" +
         (versions != keys ? ", " + std::to_string(versions) + " versions" : "");
}

}  // namespace

int run_migrate(const MigrateRequest& request, const Database& destination,
                const OutputOptions& out) {
  auto options = migrate_options(request);
  if (!options.ok()) {
    print_error("migrate", options.status());
    return exit_code(options.status());
  }
  auto keys = load_keys(destination.keys);
  if (!keys.ok()) {
    print_error("migrate", keys.status());
    return exit_code(keys.status());
  }
  TreeBuilder builder;
  if (*keys != nullptr) {
    if (destination.keys.cipher) {
      builder.with_encryption(*keys, *destination.keys.cipher);
    } else {
      builder.with_encryption(*keys);
    }
  }
  ProgressBar bar("migrate");
  options->progress = [&bar](const MigrateProgress& p) {
    bar.set_suffix(count_text(p.keys, p.versions));
    bar.update(p.bytes_read, p.bytes_total);
  };
  Result<MigrateSummary> summary =
      migrate(request.source, destination.dir, *options, std::move(builder));
  if (!summary.ok()) {
    print_error("migrate", summary.status());
    return exit_code(summary.status());
  }
  const MigrateSummary& s = *summary;
  if (out.json) {
    std::string families;
    for (const std::string& f : s.column_families) {
      families +=
          (families.empty() ? "" : ",") + std::string("{") + json_field("name", f, false) + "}";
    }
    std::printf("{%s,%s,%s,\"versioned\":%s,\"keys\":%" PRIu64 ",\"versions\":%" PRIu64
                ",\"tombstones\":%" PRIu64 ",\"skipped\":0,\"bytes\":%" PRIu64
                ",\"source_bytes\":%" PRIu64 ",\"column_families\":[%s]}\n",
                json_field("source", request.source, false).c_str(),
                json_field("destination", destination.dir, false).c_str(),
                json_field("kind", migration_source_name(s.source), false).c_str(),
                s.versioned ? "true" : "false", s.keys, s.versions, s.tombstones, s.bytes,
                s.source_bytes, families.c_str());
  } else {
    std::printf("migrated %s (%s) -> %s\n", escape(request.source).c_str(),
                std::string(migration_source_name(s.source)).c_str(),
                escape(destination.dir).c_str());
    if (!s.column_families.empty()) {
      std::string list;
      for (const std::string& f : s.column_families) list += (list.empty() ? "" : ", ") + escape(f);
      std::printf("column families: %s\n", list.c_str());
    }
    std::printf("keys: %" PRIu64 "\nversions: %" PRIu64 "%s\n", s.keys, s.versions,
                s.versioned ? " (with their timestamps)" : " (newest value of each key)");
    if (s.tombstones != 0) std::printf("deletions kept as versions: %" PRIu64 "\n", s.tombstones);
    std::printf("skipped: nothing (the readers refuse what they cannot decode)\n");
    std::printf("bytes written: %" PRIu64 " (%s)\nsource bytes read: %" PRIu64 " (%s)\n", s.bytes,
                mib(s.bytes).c_str(), s.source_bytes, mib(s.source_bytes).c_str());
  }
  return kExitOk;
}

}  // namespace skv::cli
