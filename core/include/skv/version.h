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

// The format version written into every file header. Readers accept every version from 1 up to
// their own. Version 2 added the value log to the tree: table entries of kind 2 (value-log
// pointers) and manifest tags 9-11 (docs/manifest.md); a version 1 build refuses such files.
constexpr uint16_t kFormatVersion = 2;

}  // namespace skv

#endif  // SKV_VERSION_H_
