#include "web/native/js_slot_handles.h"

#include <emscripten/emscripten.h>

#include <string>

#include "web/native/js_calls.h"

// The glue below runs inside the worker. Offsets and sizes cross as doubles (exact to 2^53;
// Emscripten 3.1.6 has no i64 parameters without WASM_BIGINT). A failed call returns -1 after
// storing the exception in Module.skvLastError, which take_js_error() hands back; nothing here
// lets an exception out (js_calls.h says why).

// clang-format off
// The number of handles in the table; 0 when there is no such table.
EM_JS(int, skv_js_slot_count, (int table), {
  try {
    var t = Module.skvTables[table];
    return (t && t.handles) ? t.handles.length : 0;
  } catch (e) {
    return 0;
  }
});

// A handle call that returns a count or a size must return a non-negative number; anything else
// is reported as an error rather than turned into a size.
EM_JS(double, skv_js_read, (int table, double slot, double offset, char* dst, double n), {
  try {
    var got = Module.skvTables[table].handles[slot].read(HEAPU8.subarray(dst, dst + n), {at: offset});
    if (!(got >= 0 && got <= n)) throw new TypeError("read() returned " + got);
    return got;
  } catch (e) {
    Module.skvLastError = e;
    return -1;
  }
});

EM_JS(double, skv_js_write, (int table, double slot, double offset, const char* src, double n), {
  try {
    var wrote = Module.skvTables[table].handles[slot].write(HEAPU8.subarray(src, src + n), {at: offset});
    if (!(wrote >= 0 && wrote <= n)) throw new TypeError("write() returned " + wrote);
    return wrote;
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
    var size = Module.skvTables[table].handles[slot].getSize();
    if (!(size >= 0)) throw new TypeError("getSize() returned " + size);
    return size;
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

// clang-format on

namespace skv::web {

namespace {

HandleError take_error() {
  JsError e = take_js_error();
  return HandleError::make(std::move(e.name), std::move(e.message));
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
