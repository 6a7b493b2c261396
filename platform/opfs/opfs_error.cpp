#include "platform/opfs/opfs_error.h"

namespace skv {

Code opfs_error_code(std::string_view dom_exception_name) {
  if (dom_exception_name == "QuotaExceededError") return Code::Quota;
  return Code::IO;
}

Status opfs_handle_error(std::string_view target, std::string_view op, const HandleError& error) {
  std::string msg(target);
  msg += ": ";
  msg.append(op);
  msg += ": ";
  msg += error.name.empty() ? std::string("UnknownError") : error.name;
  if (!error.message.empty()) {
    msg += ": ";
    msg += error.message;
  }
  return Status(opfs_error_code(error.name), msg);
}

std::string opfs_slot_target(std::string_view location, std::string_view file, size_t slot) {
  std::string s(location);
  if (!file.empty()) {
    s += '/';
    s.append(file);
  }
  s += " (slot ";
  s += std::to_string(slot);
  s += ')';
  return s;
}

}  // namespace skv
