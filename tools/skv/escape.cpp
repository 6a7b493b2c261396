#include "escape.h"

#include <cstdio>
#include <string>

namespace skv::cli {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The length of the well-formed UTF-8 sequence at bytes[i], or 0 if there is none.
size_t utf8_length(std::string_view bytes, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(bytes[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // no overlong forms
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // no overlong forms
    if (c == 0xf4) hi = 0x8f;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (i + n > bytes.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xbf) return 0;
  }
  return n;
}

void append_hex_byte(std::string* out, unsigned char c) {
  out->push_back(kHexDigits[c >> 4]);
  out->push_back(kHexDigits[c & 0xf]);
}

}  // namespace

std::string escape(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\\') {
      out += "\\\\";
      ++i;
      continue;
    }
    const size_t n = utf8_length(bytes, i);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
      out += "\\x";
      append_hex_byte(&out, c);
      ++i;
      continue;
    }
    out.append(bytes.substr(i, n));
    i += n;
  }
  return out;
}

Result<std::string> unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') {
      out.push_back('\\');
      i += 1;
      continue;
    }
    if (i + 3 < text.size() && text[i + 1] == 'x') {
      const int hi = hex_value(text[i + 2]);
      const int lo = hex_value(text[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 3;
        continue;
      }
    }
    return Status::invalid_argument("bad escape at offset " + std::to_string(i) + " in '" +
                                    std::string(text) + "' (use \\\\ or \\xNN)");
  }
  return out;
}

std::string to_hex(std::string_view bytes) {
  std::string out;
  out.reserve(2 * bytes.size());
  for (char c : bytes) append_hex_byte(&out, static_cast<unsigned char>(c));
  return out;
}

Result<std::string> from_hex(std::string_view text) {
  if (text.size() % 2 != 0) {
    return Status::invalid_argument("hex '" + escape(text) + "' has an odd number of digits");
  }
  std::string out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) {
      return Status::invalid_argument("hex '" + escape(text) + "' has a non-hex digit at offset " +
                                      std::to_string(hi < 0 ? i : i + 1));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool is_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = utf8_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out += '"';
  return out;
}

std::string json_field(std::string_view name, std::string_view bytes, bool hex) {
  if (!hex && is_utf8(bytes)) return json_string(name) + ":" + json_string(bytes);
  return json_string(std::string(name) + "_hex") + ":\"" + to_hex(bytes) + "\"";
}

}  // namespace skv::cli
