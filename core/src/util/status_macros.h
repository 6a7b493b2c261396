// Early-return helpers for code that passes Status and Result<T> values up the stack. Internal to
// skv (the core and its platforms); not part of the public API.
//
//   SKV_RETURN_IF_ERROR(file->sync());               returns the Status if it is an error
//   SKV_ASSIGN_OR_RETURN(auto file, store.open(n));  declares `file` from a Result, or returns
//                                                    the Result's error

#ifndef SKV_UTIL_STATUS_MACROS_H_
#define SKV_UTIL_STATUS_MACROS_H_

#include <utility>

#include "skv/status.h"

#define SKV_RETURN_IF_ERROR(expr)    \
  do {                               \
    ::skv::Status _skv_s = (expr);   \
    if (!_skv_s.ok()) return _skv_s; \
  } while (0)

#define SKV_CONCAT_INNER_(a, b) a##b
#define SKV_CONCAT_(a, b) SKV_CONCAT_INNER_(a, b)
#define SKV_ASSIGN_OR_RETURN(decl, expr)                                                    \
  auto SKV_CONCAT_(_skv_r_, __LINE__) = (expr);                                             \
  if (!SKV_CONCAT_(_skv_r_, __LINE__).ok()) return SKV_CONCAT_(_skv_r_, __LINE__).status(); \
  decl = std::move(SKV_CONCAT_(_skv_r_, __LINE__)).value()

#endif  // SKV_UTIL_STATUS_MACROS_H_
