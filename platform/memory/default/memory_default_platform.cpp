// default_platform() for programs whose only platform is the in-memory one (the wasm smoke test,
// in-memory trees, tests): one process-wide MemoryPlatform, so a path opened, closed and opened
// again finds its data for as long as the process lives. Natively, skv::native provides
// default_platform() instead; a program links exactly one of them.

#include <memory>

#include "platform/memory/memory_platform.h"

namespace skv {

std::shared_ptr<Platform> default_platform() {
  static const std::shared_ptr<Platform> platform = std::make_shared<MemoryPlatform>();
  return platform;
}

}  // namespace skv
