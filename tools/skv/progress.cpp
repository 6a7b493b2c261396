#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace skv::cli {

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), on_(::isatty(2) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void ProgressBar::update(uint64_t done, uint64_t total) {
  if (!on_ || total == 0) return;
  const int percent = static_cast<int>(100 * std::min(done, total) / total);
  if (percent == last_) return;
  last_ = percent;
  drawn_ = true;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r\033[K%s [%.*s%.*s] %3d%% %s of %s%s%s", label_.c_str(), filled,
               "##############################", kWidth - filled, "                              ",
               percent, mib(done).c_str(), mib(total).c_str(), suffix_.empty() ? "" : ", ",
               suffix_.c_str());
  std::fflush(stderr);
}

}  // namespace skv::cli
