// Small helpers for the tests of platforms (memory, fault wrapper, ...): open a Storage, write
// and read back log files and objects, list names in order. Each REQUIREs success.
//
// Thread safety: none needed; they act on the objects they are given.

#ifndef SKV_TESTS_SUPPORT_STORAGE_HELPERS_H_
#define SKV_TESTS_SUPPORT_STORAGE_HELPERS_H_

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skv/platform.h"

namespace skv::testing {

inline std::unique_ptr<Storage> open_db(Platform& p, const std::string& path = "db") {
  auto r = p.open_storage(path, StorageOptions{});
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return std::move(*r);
}

inline std::unique_ptr<LogFile> create_log(Storage& s, const std::string& name,
                                           std::string_view data, bool sync) {
  auto f = s.logs().create(name);
  REQUIRE(f.ok());
  if (!data.empty()) REQUIRE((*f)->append(data).ok());
  if (sync) REQUIRE((*f)->sync().ok());
  return std::move(*f);
}

inline void write_object(Storage& s, const std::string& name, std::string_view data) {
  auto w = s.objects().create(name);
  REQUIRE(w.ok());
  REQUIRE((*w)->append(data).ok());
  REQUIRE((*w)->finish().ok());
}

// Every byte of a log file.
inline std::string read_all(const LogFile& f) {
  std::string scratch(f.size() + 8, '\0');
  std::string_view got;
  REQUIRE(f.read_at(0, scratch.size(), scratch.data(), &got).ok());
  return std::string(got);
}

inline std::vector<std::string> sorted(Result<std::vector<std::string>> names) {
  REQUIRE(names.ok());
  std::vector<std::string> v = *names;
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_STORAGE_HELPERS_H_
