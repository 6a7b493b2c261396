#include "crypto/sealed_pointer.h"

#include <charconv>

#include "util/status_macros.h"

namespace skv::crypto {

namespace {

constexpr std::string_view kPrefix = "sealed v1 ";

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(d[p[i] >> 4]);
    out.push_back(d[p[i] & 15]);
  }
  return out;
}

bool from_hex(std::string_view s, uint8_t* out, size_t n) {
  if (s.size() != 2 * n) return false;
  auto digit = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < n; ++i) {
    const int hi = digit(s[2 * i]), lo = digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

// Takes "<name>=<value>" followed by `end` (a space or the end of the text) off the front of *s.
bool take_field(std::string_view* s, std::string_view name, std::string_view* value) {
  if (s->substr(0, name.size()) != name || s->size() <= name.size() || (*s)[name.size()] != '=') {
    return false;
  }
  s->remove_prefix(name.size() + 1);
  const size_t space = s->find(' ');
  *value = s->substr(0, space);
  s->remove_prefix(space == std::string_view::npos ? s->size() : space + 1);
  return true;
}

bool parse_u32(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The seal line without its MAC field: what the MAC covers, after the manifest line.
std::string unsigned_line(const PointerSeal& seal) {
  return std::string(kPrefix) + "cipher=" + std::to_string(static_cast<int>(seal.suite)) +
         " key=" + std::to_string(seal.key_id) + " db=" + to_hex(seal.db_id.data(), 16);
}

std::array<uint8_t, 32> mac_of(const SecretKey& root, std::string_view first_line,
                               const PointerSeal& seal) {
  return pointer_mac(root, seal.db_id, seal.key_id, std::string(first_line) + unsigned_line(seal));
}

}  // namespace

Status split_pointer(std::string_view contents, const std::string& label,
                     std::string_view* first_line, std::optional<PointerSeal>* seal) {
  seal->reset();
  const size_t nl = contents.find('\n');
  if (nl == std::string_view::npos || nl + 1 == contents.size()) {
    *first_line = contents;
    return Status::OK();
  }
  *first_line = contents.substr(0, nl + 1);
  std::string_view rest = contents.substr(nl + 1);
  auto bad = [&](const char* what) {
    return Status::corruption(label + ": the second line is not a seal line (" + what + ")");
  };
  if (rest.back() != '\n') return bad("no newline at its end");
  rest.remove_suffix(1);
  if (rest.find('\n') != std::string_view::npos) return bad("more than one line follows");
  if (rest.substr(0, kPrefix.size()) != kPrefix) return bad("unknown prefix");
  rest.remove_prefix(kPrefix.size());
  PointerSeal s;
  std::string_view v;
  uint32_t cipher = 0;
  if (!take_field(&rest, "cipher", &v) || !parse_u32(v, &cipher)) return bad("cipher");
  if (cipher != static_cast<uint32_t>(CipherSuite::XChaCha20Poly1305) &&
      cipher != static_cast<uint32_t>(CipherSuite::Aes256Gcm)) {
    return bad("unknown cipher");
  }
  s.suite = static_cast<CipherSuite>(cipher);
  if (!take_field(&rest, "key", &v) || !parse_u32(v, &s.key_id) || s.key_id == 0) {
    return bad("key id");
  }
  if (!take_field(&rest, "db", &v) || !from_hex(v, s.db_id.data(), 16)) return bad("db id");
  if (!take_field(&rest, "mac", &v) || !from_hex(v, s.mac.data(), 32)) return bad("mac");
  if (!rest.empty()) return bad("trailing fields");
  *seal = s;
  return Status::OK();
}

Result<std::string> seal_pointer(Keyring& ring, std::string_view first_line) {
  PointerSeal seal;
  seal.suite = ring.suite();
  seal.key_id = ring.active_key_id();
  seal.db_id = ring.db_id();
  SecretKey root;
  SKV_RETURN_IF_ERROR(ring.root_key(seal.key_id, &root));
  const std::array<uint8_t, 32> mac = mac_of(root, first_line, seal);
  return std::string(first_line) + unsigned_line(seal) + " mac=" + to_hex(mac.data(), 32) + "\n";
}

Status verify_pointer(Keyring& ring, std::string_view first_line, const PointerSeal& seal,
                      const std::string& label) {
  if (seal.db_id != ring.db_id() || seal.suite != ring.suite()) {
    return Status::corruption(label + ": the seal names another database or cipher");
  }
  SecretKey root;
  Status s = ring.root_key(seal.key_id, &root);
  if (!s.ok()) return s.with_context(label);
  const std::array<uint8_t, 32> mac = mac_of(root, first_line, seal);
  // Not secret-dependent timing that matters here (the MAC is over public contents), but compare
  // every byte anyway.
  uint8_t diff = 0;
  for (size_t i = 0; i < mac.size(); ++i) diff |= static_cast<uint8_t>(mac[i] ^ seal.mac[i]);
  if (diff != 0) {
    return Status::corruption(label + ": fails authentication (edited, or sealed under another " +
                              "key with the same id)");
  }
  return Status::OK();
}

}  // namespace skv::crypto
