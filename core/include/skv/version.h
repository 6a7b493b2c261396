// The version of skv this header belongs to, and the on-disk format it writes.
//
// The library follows semantic versioning once it reaches 1.0; before that, a minor version may
// change the API. The format version is separate: every file skv writes starts with it (docs/
// wal.md, "File header"), and a build refuses files of a newer format than its own with
// Corruption, never reading them wrongly.
//
// Thread safety: constants only.

#ifndef SKV_VERSION_H_
#define SKV_VERSION_H_

#include <cstdint>
#include <string_view>

// The CMake project reads its version from these three lines.
#define SKV_VERSION_MAJOR 0
#define SKV_VERSION_MINOR 1
#define SKV_VERSION_PATCH 0

namespace skv {

constexpr int kVersionMajor = SKV_VERSION_MAJOR;
constexpr int kVersionMinor = SKV_VERSION_MINOR;
constexpr int kVersionPatch = SKV_VERSION_PATCH;
// "major.minor.patch".
constexpr std::string_view kVersion = "0.1.0";

// The format version written into every file header. Before 1.0 a format change bumps it and
// files of older versions are refused by name (NotSupported), not converted. Version 2: write
// batches carry a commit timestamp, the manifest records versioning and the last commit timestamp
// (tags 7, 8), tables hold value-log pointers (kind 2) and the manifest records value logs (tags
// 9-11); docs/wal.md, docs/manifest.md, docs/vlog.md.
constexpr uint16_t kFormatVersion = 2;
// The oldest format version this build reads.
constexpr uint16_t kOldestReadableFormatVersion = 2;

}  // namespace skv

#endif  // SKV_VERSION_H_
