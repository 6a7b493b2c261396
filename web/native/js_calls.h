// Calls from the browser build's C++ into JavaScript that never throw.
//
// A JavaScript exception must never unwind through wasm frames: the C++ destructors on the way
// are skipped (leaking heap memory), and so is the restore of the wasm stack pointer, so every
// such exception leaks stack; a few thousand of them overrun the stack and corrupt the instance
// for every database the worker has open. So every call from C++ into JavaScript that can throw
// (reading a property of an object the application handed in, which may be a getter or a
// Proxy; allocating a Uint8Array, which throws RangeError when the JavaScript heap is short; a
// file handle call) runs inside a try/catch in JavaScript and reports the exception as a value.
// The exception itself waits in Module.skvLastError for take_js_error().
//
// What the glue still does with emscripten::val directly is build small arrays and objects for
// its results; those throw only when the JavaScript heap is exhausted, which the browser treats
// as fatal anyway.
//
// Thread safety: none; the worker thread makes every call.

#ifndef SKV_WEB_NATIVE_JS_CALLS_H_
#define SKV_WEB_NATIVE_JS_CALLS_H_

#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "skv/status.h"

namespace skv::web {

// The exception the last failed call stored: its name ("QuotaExceededError", "TypeError", ...;
// "Error" when it has none) and message. Clears it.
struct JsError {
  std::string name;
  std::string message;
};
JsError take_js_error();

// One property of a JavaScript object, read without running anything but the property's own
// getter (and a Proxy's traps), inside a try/catch.
struct JsField {
  enum class Type { Absent, Number, Boolean, String, Other };
  Type type = Type::Absent;  // Absent: undefined or null (or `object` itself is)
  double number = 0;         // Number: the value; Boolean: 0 or 1
  std::string text;          // String: the UTF-8 value; Other: the JavaScript type ("object",
                             // "array", "bigint", "symbol", "function")
};

// Reads `object[field]` into `*out`. InvalidArgument naming `field` and the exception if reading
// threw.
Status read_js_field(const emscripten::val& object, const char* field, JsField* out);

// Reads `object[field]` as it is, for an option that is itself an object: `*out` is undefined
// when `object` is undefined or null. InvalidArgument naming `field` and the exception if reading
// threw.
Status read_js_property(const emscripten::val& object, const char* field, emscripten::val* out);

// A timestamp or another integer up to 2^63 - 1 (kMaxTimestamp), as JavaScript hands it over: a
// BigInt, or a Number that is a safe integer. `*present` is false for undefined or null (and
// `*out` is left alone). Anything else (a negative value, a fraction, NaN, a Number beyond 2^53 -
// 1, a BigInt beyond 2^63 - 1, a string, an object) is InvalidArgument: "<what> must be a BigInt
// or a safe integer from <min> to 9223372036854775807, not <the value>". Never throws.
Status read_js_u63(const emscripten::val& value, const std::string& what, uint64_t min,
                   uint64_t* out, bool* present);

// A root key option (kRootKeySize bytes) read from `object[field]` straight into `out`, which must
// have room for 32 bytes: a Uint8Array of exactly 32 bytes, or a string of exactly 64 hex digits
// (either case), decoded in JavaScript so that only the raw bytes reach wasm memory. `*present`
// is false for undefined or null (and `out` is left alone). Anything else is InvalidArgument
// naming `field` and the value's type and length, never its contents. The caller wipes `out`.
Status read_js_key(const emscripten::val& object, const char* field, uint8_t* out, bool* present);

// A Uint8Array holding a copy of `bytes` (the copy is made before anything can grow the wasm
// heap). IO naming the exception if JavaScript could not allocate it.
Result<emscripten::val> js_bytes(std::string_view bytes);

}  // namespace skv::web

#endif  // SKV_WEB_NATIVE_JS_CALLS_H_
