#include "skv/migrate.h"

#include "native/migrate/source.h"

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

}  // namespace skv

namespace skv::migration {

Result<std::unique_ptr<SourceReader>> open_indexeddb_dump(const std::string& path) {
  return Status::not_supported(path + ": reading IndexedDB dumps is not built yet");
}

}  // namespace skv::migration
