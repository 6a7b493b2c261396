// ProgressBar: a one-line progress bar on stderr for the skv tool's long commands (verify, load,
// migrate), drawn only when stderr is a terminal and erased when the bar goes away.
//
// Thread safety: one thread at a time.

#ifndef SKV_TOOLS_SKV_PROGRESS_H_
#define SKV_TOOLS_SKV_PROGRESS_H_

#include <cstdint>
#include <string>

namespace skv::cli {

// `bytes` as "12.3 MiB".
std::string mib(uint64_t bytes);

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Redraws the bar when the whole percentage of done/total changed (nothing when total is 0).
  void update(uint64_t done, uint64_t total);
  // Text after the bar (for example a count of keys), shown at the next redraw.
  void set_suffix(std::string suffix) { suffix_ = std::move(suffix); }

 private:
  const std::string label_;
  const bool on_;
  bool drawn_ = false;
  int last_ = -1;
  std::string suffix_;
};

}  // namespace skv::cli

#endif  // SKV_TOOLS_SKV_PROGRESS_H_
