// errno → Status for the POSIX platform. See posix_error.h.

#include "platform/posix/posix_error.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace skv {

namespace {

// strerror_r comes in two shapes (XSI returns int, GNU returns the message); these overloads
// accept either, so the file builds with both C libraries.
[[maybe_unused]] const char* pick_message(int rc, const char* buf) {
  return rc == 0 ? buf : "unknown error";
}
[[maybe_unused]] const char* pick_message(const char* msg, const char* /*buf*/) {
  return msg != nullptr ? msg : "unknown error";
}

}  // namespace

Code posix_error_code(int err) {
  switch (err) {
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
      return Code::Quota;
    case ENOENT:
      return Code::NotFound;
    default:
      return Code::IO;
  }
}

Status posix_error(std::string_view target, std::string_view op, int err) {
  char buf[256];
  buf[0] = '\0';
  const char* text = pick_message(strerror_r(err, buf, sizeof(buf)), buf);
  std::string msg;
  msg.reserve(target.size() + op.size() + 64);
  msg.append(target);
  msg += ": ";
  msg.append(op);
  msg += ": ";
  msg += text;
  return Status(posix_error_code(err), msg);
}

}  // namespace skv
