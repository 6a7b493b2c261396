// default_platform() for the programs of this repository that link no native platform (tests on
// the in-memory or OPFS platform, the simulation, the wasm smoke program): there is none, so a
// TreeBuilder without with_platform() fails with InvalidArgument instead of quietly choosing
// one. See default_platform() in skv/platform.h.

#include <memory>

#include "skv/platform.h"

namespace skv {

std::shared_ptr<Platform> default_platform() { return nullptr; }

}  // namespace skv
