// Simulation: encrypted seeds. A third of the seeds (drawn from the seed apart from every other
// choice) open every tree with_encryption(keys_), a SoftwareKeyManager holding root keys derived
// from the seed. On those seeds a reopen now and then first tries an open that must be refused
// by name without changing a byte of the database (no key manager: Encryption/NotConfigured; the
// right key ids under other keys: Encryption/WrongKey), or rotates the key: the next key id is
// added and made active, so new files are sealed under it while the manager keeps the older ones
// as DecryptOnly for the files written under them.
//
// Thread safety: see simulation.h.

#ifndef SKV_TOOLS_SIM_SIM_ENCRYPTION_H_
#define SKV_TOOLS_SIM_SIM_ENCRYPTION_H_

#include <string>

#include "tools/sim/simulation.h"

namespace skv::sim {

// 32 key bytes for `key_id` of this seed; `wrong` gives other bytes for the same id.
inline std::string Simulation::root_key_bytes(uint32_t key_id, bool wrong) const {
  Rng r(config_.seed * 0xd1342543de82ef95ull + (uint64_t{key_id} << 1) + (wrong ? 1 : 0));
  std::string out;
  for (int i = 0; i < 4; ++i) {
    const uint64_t v = r.next();
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>(v >> (8 * b)));
  }
  return out;
}

// Whether this seed is encrypted, and with what: from a hash of the seed of its own, so the
// versioning, value log and tree shape choices of every seed stay as they were.
inline void Simulation::choose_encryption() {
  uint64_t e = (config_.seed + 0x5eedc0de) * 0xbf58476d1ce4e5b9ull;
  e ^= e >> 29;
  e *= 0x94d049bb133111ebull;
  e ^= e >> 32;
  encrypted_ = e % 3 == 0;
  if (!encrypted_) return;
  ++stats_.encrypted_seeds;
  keys_ = std::make_shared<SoftwareKeyManager>();
  active_key_ = 1;
  (void)keys_->add_key(active_key_, root_key_bytes(active_key_, false));
  // A quarter of them take AES-256-GCM where the CPU runs it; the others XChaCha20-Poly1305.
  cipher_ = (e >> 8) % 4 == 0 && cipher_available(CipherSuite::Aes256Gcm)
                ? CipherSuite::Aes256Gcm
                : CipherSuite::XChaCha20Poly1305;
  note("options: encrypted with %s", cipher_name(cipher_));
}

// While the tree is closed: sometimes a refused open, sometimes a key rotation. False on failure.
inline bool Simulation::encryption_before_open() {
  if (!encrypted_) return true;
  if (!faults_active_ && rng_.one_in(4) && !refused_encrypted_open()) return false;
  if (rng_.one_in(6) && active_key_ < 16) {
    ++active_key_;
    Status s = keys_->add_key(active_key_, root_key_bytes(active_key_, false));
    if (s.ok()) s = keys_->set_active_key_id(active_key_);
    if (!s.ok()) return fail("rotating to key " + std::to_string(active_key_) + ": " + show(s));
    if (keys_->key_state(active_key_ - 1) != KeyState::DecryptOnly) {
      return fail("after rotating to key " + std::to_string(active_key_) + ", key " +
                  std::to_string(active_key_ - 1) + " is not decrypt-only");
    }
    ++stats_.key_rotations;
    note("key rotated: key %u active, keys 1..%u decrypt-only", active_key_, active_key_ - 1);
  }
  return true;
}

// An open of the encrypted database without a key manager, or with one that holds every key id
// under other bytes: refused by name, and not a byte of the database changes.
inline bool Simulation::refused_encrypted_open() {
  const bool no_keys = rng_.one_in(2);
  Options o = builder().options();
  if (no_keys) {
    o.key_manager = nullptr;
    o.cipher.reset();
  } else {
    auto wrong = std::make_shared<SoftwareKeyManager>();
    for (uint32_t id = 1; id <= active_key_; ++id) {
      (void)wrong->add_key(id, root_key_bytes(id, true));
    }
    (void)wrong->set_active_key_id(active_key_);
    o.key_manager = wrong;
  }
  const std::string what = no_keys ? "open without a key manager" : "open with a wrong key";
  const EncryptionError want = no_keys ? EncryptionError::NotConfigured : EncryptionError::WrongKey;
  const std::string before = file_digest();
  const uint64_t clock = clock_now();
  Result<Tree> t = TreeBuilder().with_options(o).build();
  note("%s: %s", what.c_str(), show(t.status()).c_str());
  ++stats_.refused_encrypted_opens;
  if (t.ok()) {
    (void)t->close();
    return fail(what + " of an encrypted database succeeded");
  }
  if (t.status().code() != Code::Encryption || t.status().encryption_error() != want) {
    return fail(what + ": " + show(t.status()) + ", expected " +
                (no_keys ? "encryption/not_configured" : "encryption/wrong_key"));
  }
  const std::string after = file_digest();
  if (after != before) {
    return fail("a refused " + what + " changed the database: files were " + before + "; now " +
                after);
  }
  if (clock_now() != clock) return fail("a refused " + what + " read the clock");
  return true;
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_ENCRYPTION_H_
