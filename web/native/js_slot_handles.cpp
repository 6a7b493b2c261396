#include "web/native/js_slot_handles.h"

#include <emscripten/emscripten.h>

#include <cstdlib>
#include <string>

// The glue below runs inside the worker. Offsets and sizes cross as doubles (exact to 2^53;
// Emscripten 3.1.6 has no i64 parameters without WASM_BIGINT). A failed call returns -1 after
// storing the exception in Module.skvLastError, which skv_js_take_error() hands back.

// clang-format off
EM_JS(int, skv_js_slot_count, (int table), {
  return Module.skvTables[table].handles.length;
});

EM_JS(double, skv_js_read, (int table, double slot, double offset, char* dst, double n), {
  try {
    return Module.skvTables[table].handles[slot].read(HEAPU8.subarray(dst, dst + n), {at: offset});
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

EM_JS(double, skv_js_write, (int table, double slot, double offset, const char* src, double n), {
  try {
    return Module.skvTables[table].handles[slot].write(HEAPU8.subarray(src, src + n), {at: offset});
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

EM_JS(int, skv_js_truncate, (int table, double slot, double size), {
  try {
    Module.skvTables[table].handles[slot].truncate(size);
    return 0;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

EM_JS(double, skv_js_size, (int table, double slot), {
  try {
    return Module.skvTables[table].handles[slot].getSize();
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

EM_JS(int, skv_js_flush, (int table, double slot), {
  try {
    Module.skvTables[table].handles[slot].flush();
    return 0;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

// Returns a malloc'd UTF-8 string: the stored exception's name (which == 0) or message.
EM_JS(char*, skv_js_take_error, (int which), {
  var e = Module.skvLastError;
  var s;
  if (which == 0) {
    s = (e && e.name) ? String(e.name) : "Error";
  } else {
    s = (e && e.message !== undefined) ? String(e.message) : String(e);
    Module.skvLastError = undefined;
  }
  var n = lengthBytesUTF8(s) + 1;
  var p = _malloc(n);
  stringToUTF8(s, p, n);
  return p;
});
// clang-format on

namespace skv::web {

namespace {

std::string take_string(int which) {
  char* p = skv_js_take_error(which);
  std::string s(p);
  std::free(p);
  return s;
}

HandleError take_error() {
  std::string name = take_string(0);
  std::string message = take_string(1);
  return HandleError::make(std::move(name), std::move(message));
}

double as_double(uint64_t v) { return static_cast<double>(v); }

}  // namespace

size_t JsSlotHandles::slot_count() const { return static_cast<size_t>(skv_js_slot_count(table_)); }

HandleError JsSlotHandles::read(size_t slot, uint64_t offset, char* dst, size_t n,
                                size_t* bytes_read) {
  *bytes_read = 0;
  const double got = skv_js_read(table_, as_double(slot), as_double(offset), dst, as_double(n));
  if (got < 0) return take_error();
  *bytes_read = static_cast<size_t>(got);
  return HandleError::none();
}

HandleError JsSlotHandles::write(size_t slot, uint64_t offset, std::string_view bytes) {
  const double wrote = skv_js_write(table_, as_double(slot), as_double(offset), bytes.data(),
                                    as_double(bytes.size()));
  if (wrote < 0) return take_error();
  if (static_cast<size_t>(wrote) != bytes.size()) {
    return HandleError::make("ShortWrite", "wrote " + std::to_string(static_cast<size_t>(wrote)) +
                                               " of " + std::to_string(bytes.size()) + " bytes");
  }
  return HandleError::none();
}

HandleError JsSlotHandles::truncate(size_t slot, uint64_t size) {
  if (skv_js_truncate(table_, as_double(slot), as_double(size)) < 0) return take_error();
  return HandleError::none();
}

HandleError JsSlotHandles::size(size_t slot, uint64_t* size) {
  const double got = skv_js_size(table_, as_double(slot));
  if (got < 0) return take_error();
  *size = static_cast<uint64_t>(got);
  return HandleError::none();
}

HandleError JsSlotHandles::flush(size_t slot) {
  if (skv_js_flush(table_, as_double(slot)) < 0) return take_error();
  return HandleError::none();
}

}  // namespace skv::web
