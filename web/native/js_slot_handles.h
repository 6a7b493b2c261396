// JsSlotHandles: the SlotHandles of the browser build, over a table of FileSystemSyncAccessHandle
// objects that the JS wrapper opened before the database opened (web/src/slots.js).
//
// The table lives on the JavaScript side as Module.skvTables[id].handles (an array the wrapper may
// append to between calls). Every call is synchronous; a JavaScript exception is caught in the
// glue and comes back as a HandleError carrying the DOMException's name and message, so nothing
// ever unwinds through wasm.
//
// Thread safety: none; the worker that owns the handles makes every call.

#ifndef SKV_WEB_NATIVE_JS_SLOT_HANDLES_H_
#define SKV_WEB_NATIVE_JS_SLOT_HANDLES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "platform/opfs/slot_handles.h"

namespace skv::web {

class JsSlotHandles final : public SlotHandles {
 public:
  // `table` is the id under which the wrapper registered the handle array.
  explicit JsSlotHandles(int table) : table_(table) {}

  size_t slot_count() const override;
  HandleError read(size_t slot, uint64_t offset, char* dst, size_t n, size_t* bytes_read) override;
  HandleError write(size_t slot, uint64_t offset, std::string_view bytes) override;
  HandleError truncate(size_t slot, uint64_t size) override;
  HandleError size(size_t slot, uint64_t* size) override;
  HandleError flush(size_t slot) override;

 private:
  const int table_;
};

}  // namespace skv::web

#endif  // SKV_WEB_NATIVE_JS_SLOT_HANDLES_H_
