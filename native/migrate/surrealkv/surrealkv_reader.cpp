#include "native/migrate/source.h"

namespace skv::migration {

Result<std::unique_ptr<SourceReader>> open_surrealkv(const std::string& dir) {
  return Status::not_supported(dir + ": reading SurrealKV databases is not built yet");
}

}  // namespace skv::migration
