// default_platform() of the native library: the POSIX platform with a ThreadPoolExecutor.
//
// Callers share one instance while any of them holds it: every tree opened without an explicit
// platform uses the same thread pool (two workers), the way one process shares one Env in
// LevelDB. Only a weak reference is cached, so the pool's threads end when the last tree (or
// other holder) releases it, and no platform is left to be torn down during static destruction,
// when trees and their background tasks may already be gone. The next call after that starts a
// fresh platform. Database locks live in a process-wide registry, so two instances still exclude
// each other.

#include <memory>
#include <mutex>

#include "native/thread_pool_executor.h"
#include "platform/posix/posix_platform.h"

namespace skv {

std::shared_ptr<Platform> default_platform() {
  // Never destroyed: default_platform() may be called during static destruction.
  static std::mutex* mu = new std::mutex;
  static std::weak_ptr<Platform>* cached = new std::weak_ptr<Platform>;
  std::lock_guard<std::mutex> lock(*mu);
  if (std::shared_ptr<Platform> p = cached->lock()) return p;
  auto p = std::make_shared<PosixPlatform>(std::make_shared<ThreadPoolExecutor>());
  *cached = p;
  return p;
}

}  // namespace skv
