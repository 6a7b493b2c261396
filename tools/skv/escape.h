// How the skv tool writes keys and values, which are arbitrary bytes, and reads them back
// (docs/cli.md, "Bytes").
//
// Text (the default): valid UTF-8 is printed as it is, except that a backslash is "\\" and
// every control character (below U+0020, and U+007F) and every byte that is not part of a valid
// UTF-8 sequence is "\xNN" (two lower-case hex digits). So an entry stays on one line and can be
// pasted back as an argument: arguments are unescaped with the same rules.
// Hex (--hex): every byte as two lower-case hex digits, and arguments are read as hex.
// JSON (--json): a byte string is a JSON string when it is valid UTF-8, else an object field
// "<name>_hex" holds its hex instead (json_field).
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

// Every byte as two lower-case hex digits.
std::string to_hex(std::string_view bytes);
// Reverses to_hex() (either case). InvalidArgument for an odd length or a non-hex digit.
Result<std::string> from_hex(std::string_view text);

// Whether `bytes` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool is_utf8(std::string_view bytes);

// `text` as a JSON string literal, quotes included. REQUIRES: is_utf8(text).
std::string json_string(std::string_view text);

// `"name":<json string>` when `bytes` is valid UTF-8 and `hex` is false, else
// `"name_hex":"<hex>"`.
std::string json_field(std::string_view name, std::string_view bytes, bool hex);

}  // namespace skv::cli

#endif  // SKV_TOOLS_SKV_ESCAPE_H_
