// Compiles <skv/memory_platform.h> against the installed (or in-tree) skv::memory target.
#include <memory>

#include "skv/memory_platform.h"
#include "skv/skv.h"

std::shared_ptr<skv::Platform> make_memory_platform() {
  return std::make_shared<skv::MemoryPlatform>();
}
