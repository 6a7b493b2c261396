// StagingDir: where migrate() builds a destination before it exists. For a destination D it is
// the directory "D.migrating" holding a marker file and the database in "D.migrating/db". The
// marker says the directory is a migration's own work, so a run that finds one left by an
// interrupted run removes it and starts again, while a "D.migrating" without the marker (not
// ours) is refused and left alone. publish() renames the database to D, syncing the directories
// so the rename survives a crash; until then nothing exists at D, and the staged database does
// not open as D.
//
// Not thread-safe; one per migration.

#ifndef SKV_NATIVE_MIGRATE_STAGING_DIR_H_
#define SKV_NATIVE_MIGRATE_STAGING_DIR_H_

#include <string>

#include "skv/status.h"

namespace skv::migration {

class StagingDir {
 public:
  // Prepares the staging directory of `destination`: InvalidArgument when `destination` exists
  // (nothing is touched) or when "<destination>.migrating" exists without the marker.
  static Result<StagingDir> create(const std::string& destination);
  StagingDir(StagingDir&& other) noexcept;
  StagingDir& operator=(StagingDir&&) = delete;
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  // Removes the staging directory unless publish() succeeded.
  ~StagingDir();

  // The path the database is built at.
  const std::string& db_path() const { return db_path_; }
  // Moves the (closed) database to the destination and removes the staging directory.
  Status publish();
  // Removes the staging directory and everything in it (all of it written by this migration).
  void discard();

 private:
  StagingDir(std::string destination, std::string root);
  std::string destination_;
  std::string root_;
  std::string db_path_;
  bool done_ = false;
};

}  // namespace skv::migration

#endif  // SKV_NATIVE_MIGRATE_STAGING_DIR_H_
