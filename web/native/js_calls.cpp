#include "web/native/js_calls.h"

#include <emscripten/emscripten.h>

#include <cstdlib>
#include <string>

// Every function below catches whatever JavaScript throws, stores it in Module.skvLastError and
// returns a failure value instead. Emval is Embind's handle table (handles cross as integers).

using emscripten::EM_VAL;

// clang-format off
// Returns a malloc'd UTF-8 string: the stored exception's name (which == 0) or message (which ==
// 1, which also clears it); null if even that failed.
EM_JS(char*, skv_js_take_error, (int which), {
  var s;
  try {
    var e = Module.skvLastError;
    if (which == 0) {
      s = (e && typeof e.name === "string" && e.name) ? e.name : "Error";
    } else {
      Module.skvLastError = undefined;
      s = (e && e.message !== undefined) ? String(e.message) : String(e);
    }
  } catch (ignored) {
    s = which == 0 ? "Error" : "(an exception that cannot be printed)";
  }
  try {
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    if (p) stringToUTF8(s, p, n);
    return p;
  } catch (ignored) {
    return 0;
  }
});

// Reads obj[field]: 0 absent (undefined or null), 1 number, 2 boolean (both in *number), 3
// string, 4 another type (its name); the string or the name goes to a malloc'd *text. -1 if the
// read threw.
EM_JS(int, skv_js_field, (EM_VAL obj, const char* field, double* number, char** text), {
  try {
    var o = Emval.toValue(obj);
    if (o === undefined || o === null) return 0;
    var v = o[UTF8ToString(field)];
    if (v === undefined || v === null) return 0;
    var t = typeof v;
    if (t === "number" || t === "boolean") {
      HEAPF64[number >> 3] = Number(v);
      return t === "number" ? 1 : 2;
    }
    var s = t === "string" ? v : (t === "object" && Array.isArray(v) ? "array" : t);
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    if (!p) throw new RangeError("out of wasm memory for a string of " + n + " bytes");
    stringToUTF8(s, p, n);
    HEAPU32[text >> 2] = p;
    return t === "string" ? 3 : 4;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

// Reads obj[field] as a new Emval handle in *out (undefined when obj is undefined or null); -1 if
// the read threw.
EM_JS(int, skv_js_property, (EM_VAL obj, const char* field, EM_VAL* out), {
  try {
    var o = Emval.toValue(obj);
    var v = (o === undefined || o === null) ? undefined : o[UTF8ToString(field)];
    HEAPU32[out >> 2] = Emval.toHandle(v);
    return 0;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

// Reads a BigInt or a safe-integer Number from 0 to 2^63 - 1 into words[0] (low 32 bits) and
// words[1] (high): 0 absent (undefined or null), 1 read. Otherwise a malloc'd description of the
// value goes to *text and the result is 2. -1 if something threw. (No BigInt literals: the
// optimizer's parser may predate them.)
EM_JS(int, skv_js_u63, (EM_VAL handle, uint32_t* words, char** text), {
  try {
    var v = Emval.toValue(handle);
    if (v === undefined || v === null) return 0;
    var t = typeof v;
    var two32 = 4294967296;
    if (t === "bigint" && v >= BigInt(0) && v <= BigInt("9223372036854775807")) {
      HEAPU32[words >> 2] = Number(v & BigInt(two32 - 1));
      HEAPU32[(words >> 2) + 1] = Number(v >> BigInt(32));
      return 1;
    }
    if (t === "number" && Number.isSafeInteger(v) && v >= 0) {
      HEAPU32[words >> 2] = v % two32;
      HEAPU32[(words >> 2) + 1] = Math.floor(v / two32);
      return 1;
    }
    var s;
    if (t === "bigint") s = v.toString() + "n";
    else if (t === "number") s = String(v);
    else if (t === "string") s = JSON.stringify(v.length > 40 ? v.slice(0, 40) + "..." : v);
    else if (t === "boolean") s = String(v);
    else if (t === "object") s = Array.isArray(v) ? "an array" : "an object";
    else s = "a " + t;
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    if (!p) throw new RangeError("out of wasm memory for a string of " + n + " bytes");
    stringToUTF8(s, p, n);
    HEAPU32[text >> 2] = p;
    return 2;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

// Reads obj[field] as a 32-byte key straight into out[0..32): a Uint8Array of exactly 32 bytes is
// copied, a string of exactly 64 hex digits (either case) is decoded. Returns 0 absent (undefined
// or null), 1 read, 2 another type (its name to a malloc'd *text), 3 a Uint8Array of another
// length (*number), 4 a string of another length (*number), 5 a string of 64 characters that are
// not all hex digits; -1 if something threw. Nothing of the value itself ever reaches *text.
EM_JS(int, skv_js_key, (EM_VAL obj, const char* field, uint8_t* out, double* number, char** text), {
  try {
    var o = Emval.toValue(obj);
    if (o === undefined || o === null) return 0;
    var v = o[UTF8ToString(field)];
    if (v === undefined || v === null) return 0;
    if (v instanceof Uint8Array) {
      if (v.length !== 32) {
        HEAPF64[number >> 3] = v.length;
        return 3;
      }
      HEAPU8.set(v, out);
      return 1;
    }
    if (typeof v === "string") {
      if (v.length !== 64) {
        HEAPF64[number >> 3] = v.length;
        return 4;
      }
      if (!/^[0-9a-fA-F]{64}$/.test(v)) return 5;
      for (var i = 0; i < 32; i++) HEAPU8[out + i] = parseInt(v.substr(2 * i, 2), 16);
      return 1;
    }
    var t = typeof v;
    var s = t === "object" ? (Array.isArray(v) ? "an array" : ArrayBuffer.isView(v) ||
        v instanceof ArrayBuffer ? "a " + Object.prototype.toString.call(v).slice(8, -1)
        : "an object") : "a " + t;
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    if (!p) throw new RangeError("out of wasm memory for a string of " + n + " bytes");
    stringToUTF8(s, p, n);
    HEAPU32[text >> 2] = p;
    return 2;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

// A new Uint8Array copied from [src, src + n), as an Emval handle; 0 if it could not be made.
EM_JS(EM_VAL, skv_js_bytes, (const char* src, double n), {
  try {
    return Emval.toHandle(HEAPU8.slice(src, src + n));
  } catch (e) {
    Module.skvLastError = e;
    return 0;
  }
});
// clang-format on

namespace skv::web {

namespace {

std::string take_string(int which) {
  char* p = skv_js_take_error(which);
  if (p == nullptr) return which == 0 ? "Error" : "(no memory for the message)";
  std::string s(p);
  std::free(p);
  return s;
}

std::string describe(const JsError& e) { return e.name + ": " + e.message; }

}  // namespace

JsError take_js_error() {
  JsError e;
  e.name = take_string(0);
  e.message = take_string(1);
  return e;
}

Status read_js_field(const emscripten::val& object, const char* field, JsField* out) {
  *out = JsField();
  double number = 0;
  char* text = nullptr;
  const int kind = skv_js_field(object.as_handle(), field, &number, &text);
  if (kind < 0) {
    return Status::invalid_argument(std::string("option ") + field +
                                    " could not be read: " + describe(take_js_error()));
  }
  if (text != nullptr) {
    out->text = text;
    std::free(text);
  }
  out->number = number;
  switch (kind) {
    case 1:
      out->type = JsField::Type::Number;
      break;
    case 2:
      out->type = JsField::Type::Boolean;
      break;
    case 3:
      out->type = JsField::Type::String;
      break;
    case 4:
      out->type = JsField::Type::Other;
      break;
    default:
      out->type = JsField::Type::Absent;
      break;
  }
  return Status();
}

Status read_js_property(const emscripten::val& object, const char* field, emscripten::val* out) {
  EM_VAL handle = nullptr;
  if (skv_js_property(object.as_handle(), field, &handle) < 0) {
    return Status::invalid_argument(std::string("option ") + field +
                                    " could not be read: " + describe(take_js_error()));
  }
  *out = emscripten::val::take_ownership(handle);
  return Status();
}

Status read_js_u63(const emscripten::val& value, const std::string& what, uint64_t min,
                   uint64_t* out, bool* present) {
  *present = false;
  uint32_t words[2] = {0, 0};
  char* text = nullptr;
  const int kind = skv_js_u63(value.as_handle(), words, &text);
  const std::string range =
      " must be a BigInt or a safe integer from " + std::to_string(min) + " to 9223372036854775807";
  if (kind < 0) {
    return Status::invalid_argument(what + range + ", and reading it threw " +
                                    describe(take_js_error()));
  }
  if (kind == 2) {
    std::string shown = text != nullptr ? text : "a value that cannot be shown";
    std::free(text);
    return Status::invalid_argument(what + range + ", not " + shown);
  }
  if (kind == 0) return Status();
  const uint64_t v = (uint64_t{words[1]} << 32) | words[0];
  if (v < min) return Status::invalid_argument(what + range + ", not " + std::to_string(v));
  *out = v;
  *present = true;
  return Status();
}

Status read_js_key(const emscripten::val& object, const char* field, uint8_t* out, bool* present) {
  *present = false;
  double number = 0;
  char* text = nullptr;
  const int kind = skv_js_key(object.as_handle(), field, out, &number, &text);
  const std::string what = std::string("option ") + field +
                           " must be a Uint8Array of 32 bytes or a string of 64 hex digits";
  switch (kind) {
    case 0:
      return Status();
    case 1:
      *present = true;
      return Status();
    case 2: {
      std::string shown = text != nullptr ? text : "a value that cannot be shown";
      std::free(text);
      return Status::invalid_argument(what + ", not " + shown);
    }
    case 3:
      return Status::invalid_argument(what + ", not a Uint8Array of " +
                                      std::to_string(static_cast<uint64_t>(number)) + " bytes");
    case 4:
      return Status::invalid_argument(what + ", not a string of " +
                                      std::to_string(static_cast<uint64_t>(number)) +
                                      " characters");
    case 5:
      return Status::invalid_argument(what +
                                      ", not a string with a character that is not a hex digit");
    default:
      return Status::invalid_argument(std::string("option ") + field +
                                      " could not be read: " + describe(take_js_error()));
  }
}

Result<emscripten::val> js_bytes(std::string_view bytes) {
  EM_VAL handle = skv_js_bytes(bytes.data(), static_cast<double>(bytes.size()));
  if (handle == nullptr) {
    return Status::io_error("could not copy " + std::to_string(bytes.size()) +
                            " bytes out of wasm: " + describe(take_js_error()));
  }
  return emscripten::val::take_ownership(handle);
}

}  // namespace skv::web
