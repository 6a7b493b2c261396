#include "native/migrate/source.h"

namespace skv::migration {

Result<std::unique_ptr<SourceReader>> open_rocksdb(const std::string& dir) {
  return Status::not_supported(dir + ": reading RocksDB databases is not built yet");
}

}  // namespace skv::migration
