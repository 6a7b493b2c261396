#include "web/native/web_import.h"

#include <emscripten/bind.h>

#include <utility>

#include "format/file_names.h"
#include "platform/opfs/slot_header.h"
#include "util/status_macros.h"
#include "web/native/js_slot_handles.h"

namespace skv::web {

int WebImport::fail(const Status& s) {
  error_ = s;
  return static_cast<int>(s.code());
}

int WebImport::begin(const std::string& name, int table) {
  if (!error_.ok()) return static_cast<int>(error_.code());
  if (storage_ != nullptr) {
    return fail(Status::invalid_argument("opfs:" + name + ": the import has begun already"));
  }
  name_ = name;
  Result<std::unique_ptr<OpfsStorage>> storage =
      OpfsStorage::open(name, std::make_shared<JsSlotHandles>(table));
  if (!storage.ok()) return fail(storage.status());
  const SlotPoolStats p = (*storage)->stats();
  if (p.used != 0 || p.damaged != 0) {
    return fail(Status::invalid_argument("opfs:" + name +
                                         ": already exists (its slot table holds " +
                                         std::to_string(p.used + p.damaged) + " files)"));
  }
  storage_ = std::move(storage).value();
  return 0;
}

Status WebImport::start(const std::string& file) {
  const std::string location = "opfs:" + name_ + "/" + file;
  if (storage_ == nullptr) return Status::invalid_argument(location + ": the import has not begun");
  if (!file_.empty()) {
    return Status::invalid_argument(location + ": " + file_ + " is not ended yet");
  }
  FileType type = FileType::Unknown;
  uint64_t number = 0;
  if (!parse_file_name(file, &type, &number) || type == FileType::Temp) {
    return Status::invalid_argument(
        "opfs:" + name_ + ": " + (file.empty() ? std::string("an empty name") : file) +
        " is not a name of a database file (NNNNNN.sst, NNNNNN.wal, NNNNNN.vlog, "
        "MANIFEST-NNNNNN or CURRENT)");
  }
  if (!seen_.insert(file).second) {
    return Status::invalid_argument(location + ": the name is given twice");
  }
  file_ = file;
  switch (type) {
    case FileType::Current:
      in_current_ = true;
      current_.clear();
      return Status();
    case FileType::Table: {
      SKV_ASSIGN_OR_RETURN(object_, storage_->objects().create(file));
      return Status();
    }
    default: {
      SKV_ASSIGN_OR_RETURN(log_, storage_->logs().create(file));
      return Status();
    }
  }
}

int WebImport::start_file(const std::string& file) {
  if (!error_.ok()) return static_cast<int>(error_.code());
  return fail(start(file));
}

int WebImport::append(const std::string& bytes) {
  if (!error_.ok()) return static_cast<int>(error_.code());
  if (file_.empty()) {
    return fail(Status::invalid_argument("opfs:" + name_ + ": append before start_file"));
  }
  if (in_current_) {
    if (current_.size() + bytes.size() > kSlotMaxPointerBytes) {
      return fail(Status::invalid_argument("opfs:" + name_ + "/CURRENT: more than " +
                                           std::to_string(kSlotMaxPointerBytes) +
                                           " bytes (it names a manifest)"));
    }
    current_ += bytes;
    return 0;
  }
  return fail(object_ ? object_->append(bytes) : log_->append(bytes));
}

Status WebImport::end() {
  if (file_.empty()) {
    return Status::invalid_argument("opfs:" + name_ + ": end_file without start_file");
  }
  if (in_current_) {
    in_current_ = false;
    has_current_ = true;
  } else if (object_) {
    SKV_RETURN_IF_ERROR(object_->finish());
    object_.reset();
  } else {
    SKV_RETURN_IF_ERROR(log_->sync());
    SKV_RETURN_IF_ERROR(log_->close());
    log_.reset();
  }
  file_.clear();
  return Status();
}

int WebImport::end_file() {
  if (!error_.ok()) return static_cast<int>(error_.code());
  return fail(end());
}

Status WebImport::done() {
  if (storage_ == nullptr) return Status::invalid_argument("opfs:" + name_ + ": nothing imported");
  if (!file_.empty())
    return Status::invalid_argument("opfs:" + name_ + "/" + file_ + ": not ended");
  if (!has_current_) {
    return Status::invalid_argument("opfs:" + name_ +
                                    ": the files hold no CURRENT (it names the live manifest; "
                                    "without it they are no database)");
  }
  // Every other name durable before CURRENT can name a manifest that points at them.
  SKV_RETURN_IF_ERROR(storage_->sync_dir());
  SKV_RETURN_IF_ERROR(storage_->write_pointer(current_file_name(), current_));
  storage_.reset();
  return Status();
}

int WebImport::finish() {
  if (!error_.ok()) return static_cast<int>(error_.code());
  return fail(done());
}

}  // namespace skv::web

EMSCRIPTEN_BINDINGS(skv_web_import) {
  using skv::web::WebImport;
  emscripten::class_<WebImport>("WebImport")
      .constructor<>()
      .function("begin", &WebImport::begin)
      .function("startFile", &WebImport::start_file)
      .function("append", &WebImport::append)
      .function("endFile", &WebImport::end_file)
      .function("finish", &WebImport::finish)
      .function("errorCode", &WebImport::error_code)
      .function("errorMessage", &WebImport::error_message);
}
