// TempDir: a fresh directory under $TMPDIR (or /tmp) for a test on real files, removed with
// everything in it when the object goes.
//
// Thread safety: a plain value; sub() may be called from several threads.

#ifndef SKV_TESTS_SUPPORT_TEMP_DIR_H_
#define SKV_TESTS_SUPPORT_TEMP_DIR_H_

#include <stdlib.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace skv::testing {

struct TempDir {
  // `prefix` names the directory ("skv-<prefix>-XXXXXX"), which helps when a test leaves one.
  explicit TempDir(const std::string& prefix = "test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/skv-" +
                       prefix + "-XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // "<path>/<name>".
  std::string sub(const std::string& name) const { return path + "/" + name; }

  std::string path;
};

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_TEMP_DIR_H_
