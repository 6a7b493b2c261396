#include "native/migrate/staging_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

namespace skv::migration {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarkerName = "SKV-MIGRATION-IN-PROGRESS";
constexpr const char* kMarkerText =
    "This directory is an unfinished skv migration; the next run of the same migration removes "
    "it.\n";

Status fs_error(const std::string& path, std::string_view what, const std::error_code& ec) {
  return Status::io_error(path + ": " + std::string(what) + ": " + ec.message());
}

Status sync_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::io_error(path + ": open to sync: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::io_error(path + ": sync: " + std::strerror(err));
  return Status::OK();
}

std::string parent_of(const std::string& path) {
  fs::path p = fs::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

}  // namespace

StagingDir::StagingDir(std::string destination, std::string root)
    : destination_(std::move(destination)), root_(std::move(root)), db_path_(root_ + "/db") {}

StagingDir::StagingDir(StagingDir&& other) noexcept
    : destination_(std::move(other.destination_)),
      root_(std::move(other.root_)),
      db_path_(std::move(other.db_path_)),
      done_(std::exchange(other.done_, true)) {}

StagingDir::~StagingDir() {
  if (!done_) discard();
}

Result<StagingDir> StagingDir::create(const std::string& destination) {
  std::string dest = destination;
  while (dest.size() > 1 && dest.back() == '/') dest.pop_back();
  if (dest.empty()) return Status::invalid_argument("migrate: empty destination path");
  std::error_code ec;
  if (fs::symlink_status(dest, ec).type() != fs::file_type::not_found) {
    return Status::invalid_argument(dest +
                                    ": the destination exists; migrate writes a new "
                                    "database and never into an existing path");
  }
  const std::string root = dest + ".migrating";
  const fs::file_type root_type = fs::symlink_status(root, ec).type();
  if (root_type != fs::file_type::not_found) {
    if (root_type != fs::file_type::directory ||
        fs::symlink_status(root + "/" + kMarkerName, ec).type() != fs::file_type::regular) {
      return Status::invalid_argument(root +
                                      " exists and is not an unfinished skv migration; move it "
                                      "away to migrate to " +
                                      dest);
    }
    // Left by an interrupted run of a migration: every file in it is ours.
    fs::remove_all(root, ec);
    if (ec) return fs_error(root, "remove an unfinished migration", ec);
  }
  if (!fs::create_directory(root, ec) || ec) return fs_error(root, "create", ec);
  {
    std::ofstream marker(root + "/" + kMarkerName, std::ios::binary);
    marker << kMarkerText;
    if (!marker.flush()) {
      fs::remove_all(root, ec);
      return Status::io_error(root + "/" + kMarkerName + ": write failed");
    }
  }
  return StagingDir(dest, root);
}

Status StagingDir::publish() {
  std::error_code ec;
  if (fs::symlink_status(destination_, ec).type() != fs::file_type::not_found) {
    return Status::invalid_argument(destination_ + ": the destination appeared while migrating");
  }
  // The database's own files were synced by its close; the rename and its removal from the
  // staging directory are made durable by syncing both parents.
  fs::rename(db_path_, destination_, ec);
  if (ec) return fs_error(destination_, "rename the migrated database into place", ec);
  if (Status s = sync_dir(parent_of(destination_)); !s.ok()) return s;
  done_ = true;
  fs::remove_all(root_, ec);
  if (ec) return fs_error(root_, "remove the staging directory", ec);
  return sync_dir(parent_of(root_));
}

void StagingDir::discard() {
  done_ = true;
  std::error_code ec;
  fs::remove_all(root_, ec);
}

}  // namespace skv::migration
