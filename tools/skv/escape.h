// Byte escaping for the skv tool. Keys and values are arbitrary bytes; the tool prints them with
// printable ASCII as is, a backslash as "\\" and every other byte as "\xNN" (two lower-case hex
// digits), so output is one line per entry and can be pasted back as an argument: arguments are
// unescaped with the same rules.
//
// Thread safety: pure functions.

#ifndef SKV_TOOLS_SKV_ESCAPE_H_
#define SKV_TOOLS_SKV_ESCAPE_H_

#include <string>
#include <string_view>

#include "skv/status.h"

namespace skv::cli {

// Returns `bytes` escaped as described above.
std::string escape(std::string_view bytes);

// Reverses escape(): "\\" becomes a backslash and "\xNN" (either case) the byte NN; any other
// character stands for itself. InvalidArgument (naming the offset) for a backslash followed by
// anything else or a truncated "\x" sequence.
Result<std::string> unescape(std::string_view text);

}  // namespace skv::cli

#endif  // SKV_TOOLS_SKV_ESCAPE_H_
