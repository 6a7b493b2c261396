// dir_snapshot: every entry under a directory with its size and contents, for tests that check
// that a refused call changed nothing on disk. Entries at or under `skip` (when given) are left
// out, for a test whose own database changes while it checks its neighbours.

#ifndef SKV_TESTS_SUPPORT_DIR_SNAPSHOT_H_
#define SKV_TESTS_SUPPORT_DIR_SNAPSHOT_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace skv::testing {

inline std::string dir_snapshot(const std::string& dir, const std::string& skip = "") {
  std::vector<std::string> lines;
  for (auto it = std::filesystem::recursive_directory_iterator(dir);
       it != std::filesystem::recursive_directory_iterator(); ++it) {
    const auto& e = *it;
    if (!skip.empty() && e.path() == std::filesystem::path(skip)) {
      if (e.is_directory()) it.disable_recursion_pending();
      continue;
    }
    std::ostringstream line;
    line << e.path().string();
    if (e.is_regular_file()) {
      std::ifstream in(e.path(), std::ios::binary);
      line << " " << e.file_size() << " " << std::string(std::istreambuf_iterator<char>(in), {});
    }
    lines.push_back(line.str());
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_DIR_SNAPSHOT_H_
