// migrate_from: the part of migrate() after the source is open, over any SourceReader: chooses
// the families and whether versions are imported, builds the destination in a StagingDir
// through a TreeSink, and publishes it. Separate from migrate() so tests can drive it with a
// reader of their own.
//
// Thread safety: as migrate().

#ifndef SKV_NATIVE_MIGRATE_MIGRATE_DRIVER_H_
#define SKV_NATIVE_MIGRATE_MIGRATE_DRIVER_H_

#include <string>

#include "native/migrate/source.h"
#include "skv/migrate.h"

namespace skv::migration {

Result<MigrateSummary> migrate_from(SourceReader& reader, const std::string& destination,
                                    const MigrateOptions& options, TreeBuilder builder);

}  // namespace skv::migration

#endif  // SKV_NATIVE_MIGRATE_MIGRATE_DRIVER_H_
