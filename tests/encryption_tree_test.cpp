// skv-test-modules: engine native
// skv-test-wasm: off
// Encryption at rest through the tree (docs/encryption.md): an encrypted database round-trips
// through flushes, compactions, the value log, versioning and reopening, with no key or value in
// any file; every file names the database's cipher, id and key; refused opens (no key manager,
// a key manager for a plaintext database, a wrong key, a missing key id, another cipher) are
// named errors that leave the directory byte-identical; a tampered CURRENT is refused; and a
// rotated key seals new files while old ones stay readable.

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "crypto/sealed_pointer.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "skv/skv.h"
#include "support/dir_snapshot.h"
#include "support/temp_dir.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;
namespace fs = std::filesystem;

namespace {

// Whether `type` is a file that starts with a file header.
bool has_header(FileType type) {
  return type == FileType::Table || type == FileType::Wal || type == FileType::ValueLog ||
         type == FileType::Manifest;
}

std::shared_ptr<SoftwareKeyManager> keys(char fill, uint32_t id = 1) {
  auto m = SoftwareKeyManager::from_bytes(std::string(32, fill), id);
  REQUIRE(m.ok());
  return *m;
}

TreeBuilder encrypted(const std::string& path, std::shared_ptr<KeyManager> km) {
  TreeBuilder b;
  b.with_path(path)
      .with_memtable_size(16 * 1024)
      .with_block_size(1024)
      .with_target_file_size(64 * 1024)
      .with_level_base_bytes(128 * 1024)
      .with_l0_compaction_trigger(2)
      .with_enable_vlog(true)
      .with_vlog_value_threshold(200)
      .with_vlog_max_file_size(16 * 1024)
      .with_versioning(true, 0);
  if (km) b.with_encryption(std::move(km));
  return b;
}

std::string value_for(int i, int round) {
  std::string v = "secret-value-" + std::to_string(i) + "-" + std::to_string(round) + "-";
  v.resize(i % 3 == 0 ? 400 : 40, static_cast<char>('a' + i % 26));  // some go to the value log
  return v;
}

// Writes `n` keys (round `round`) and returns the model.
void write(const Tree& tree, Model* model, int n, int round) {
  for (int i = 0; i < n; ++i) {
    const std::string k = "secret-key-" + std::to_string(1000 + i);
    (*model)[k] = value_for(i, round);
    require_ok(tree.set(k, (*model)[k]));
  }
}

std::string read_all_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Result<Tree> open_with(const std::string& path, std::shared_ptr<KeyManager> km) {
  return encrypted(path, std::move(km)).with_create_if_missing(false).build();
}

}  // namespace

TEST_CASE("an encrypted database round-trips and no file holds a key or a value",
          "[encryption][tree]") {
  TempDir dir("enc-tree");
  const std::string path = dir.sub("db");
  Model model;
  {
    Tree tree = open_or_fail(encrypted(path, keys('k')));
    write(tree, &model, 300, 1);
    require_ok(tree.flush().wait());
    write(tree, &model, 200, 2);
    require_ok(tree.compact_all());
    require_ok(tree.collect_vlog_garbage());
    write(tree, &model, 50, 3);  // stays in the WAL
    CHECK(read_all(tree) == model);
    require_ok(tree.close());
  }
  // Every file: no plaintext, and a header naming the cipher, one database id and key 1.
  std::array<uint8_t, 16> db_id{};
  std::map<FileType, int> kinds;
  for (const auto& e : fs::directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    const std::string bytes = read_all_bytes(e.path());
    INFO(name);
    CHECK(bytes.find("secret") == std::string::npos);
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(name, &type, &number) || !has_header(type) || bytes.empty()) continue;
    FileKind kind = type == FileType::Table      ? FileKind::Table
                    : type == FileType::Wal      ? FileKind::Wal
                    : type == FileType::ValueLog ? FileKind::ValueLog
                                                 : FileKind::Manifest;
    auto h = decode_file_header(bytes, kind, name);
    REQUIRE(h.ok());
    CHECK(h->cipher == static_cast<uint8_t>(CipherSuite::XChaCha20Poly1305));
    CHECK(h->key_id == 1);
    if (db_id == std::array<uint8_t, 16>{}) db_id = h->db_id;
    CHECK(h->db_id == db_id);
    ++kinds[type];
  }
  CHECK(kinds[FileType::Table] > 0);
  CHECK(kinds[FileType::ValueLog] > 0);
  CHECK(kinds[FileType::Wal] > 0);
  CHECK(kinds[FileType::Manifest] == 1);
  CHECK(db_id != std::array<uint8_t, 16>{});
  CHECK(read_all_bytes(fs::path(path) / "CURRENT").find("sealed v1 cipher=1 key=1 db=") !=
        std::string::npos);

  Tree again = open_or_fail(encrypted(path, keys('k')));
  CHECK(read_all(again) == model);
  Transaction tx = begin_or_fail(again, Mode::ReadOnly);
  Result<std::vector<KeyVersion>> h = tx.history("secret-key-1003");
  REQUIRE(h.ok());
  CHECK(h->size() == 3);  // versions of rounds 1, 2 and 3, kept by the versioned tree
}

TEST_CASE("refused opens are named errors and leave the directory byte-identical",
          "[encryption][tree]") {
  TempDir dir("enc-refused");
  const std::string sealed = dir.sub("sealed"), plain = dir.sub("plain");
  Model model;
  {
    Tree tree = open_or_fail(encrypted(sealed, keys('k')));
    write(tree, &model, 100, 1);
    require_ok(tree.flush().wait());
    write(tree, &model, 10, 2);
    require_ok(tree.close());
    Tree p = open_or_fail(encrypted(plain, nullptr));
    write(p, &model, 10, 1);
    require_ok(p.close());
  }
  auto refused = [](const std::string& path, Result<Tree> r, Code code, EncryptionError sub,
                    const std::string& before) {
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == code);
    CHECK(r.status().encryption_error() == sub);
    CHECK(dir_snapshot(path) == before);
    return r.status().message();
  };
  const std::string before = dir_snapshot(sealed);
  refused(sealed, open_with(sealed, nullptr), Code::Encryption, EncryptionError::NotConfigured,
          before);
  const std::string wrong = refused(sealed, open_with(sealed, keys('w')), Code::Encryption,
                                    EncryptionError::WrongKey, before);
  CHECK(wrong.find("MANIFEST-") != std::string::npos);
  refused(sealed, open_with(sealed, keys('k', 2)), Code::Encryption, EncryptionError::UnknownKeyId,
          before);
  if (cipher_available(CipherSuite::Aes256Gcm)) {
    refused(sealed,
            encrypted(sealed, keys('k'))
                .with_encryption(keys('k'), CipherSuite::Aes256Gcm)
                .with_create_if_missing(false)
                .build(),
            Code::InvalidArgument, EncryptionError::None, before);
  }
  const std::string plain_before = dir_snapshot(plain);
  refused(plain, open_with(plain, keys('k')), Code::Encryption, EncryptionError::NotEncrypted,
          plain_before);
  // A cipher without a key manager is a bad option, checked before anything is created.
  TreeBuilder bad = encrypted(dir.sub("never"), nullptr);
  Options o = bad.options();
  o.cipher = CipherSuite::XChaCha20Poly1305;
  CHECK(TreeBuilder().with_options(o).build().status().code() == Code::InvalidArgument);
  CHECK_FALSE(fs::exists(dir.sub("never")));

  // The right key still opens everything, after all of that.
  Tree ok = open_or_fail(encrypted(sealed, keys('k')));
  CHECK(read_all(ok).size() == 100);
}

TEST_CASE("a tampered CURRENT is refused by name", "[encryption][tree]") {
  TempDir dir("enc-current");
  const std::string path = dir.sub("db");
  {
    Tree tree = open_or_fail(encrypted(path, keys('k')));
    require_ok(tree.set("a", "b"));
    require_ok(tree.close());
  }
  const std::string current = read_all_bytes(fs::path(path) / "CURRENT");
  auto with_current = [&](const std::string& contents) {
    std::ofstream(fs::path(path) / "CURRENT", std::ios::binary | std::ios::trunc) << contents;
    return open_with(path, keys('k')).status();
  };
  // A flipped MAC digit.
  std::string edited = current;
  edited[edited.size() - 2] = edited[edited.size() - 2] == '0' ? '1' : '0';
  Status s = with_current(edited);
  CHECK(s.code() == Code::Corruption);
  CHECK(s.message().find("fails authentication") != std::string::npos);
  // The seal line dropped: the database then reads as plaintext, which the key manager refuses.
  CHECK(with_current(current.substr(0, current.find('\n') + 1)).encryption_error() ==
        EncryptionError::NotEncrypted);
  // A malformed seal line.
  CHECK(with_current(current.substr(0, current.find('\n') + 1) + "sealed v1 cipher=9\n").code() ==
        Code::Corruption);
  require_ok(with_current(current));
}

TEST_CASE("two tables whose names are swapped are refused by name before anything is written",
          "[encryption][tree]") {
  TempDir dir("enc-swap");
  const std::string path = dir.sub("db");
  {
    Tree tree = open_or_fail(encrypted(path, keys('k')).with_l0_compaction_trigger(8));
    for (int round = 1; round <= 2; ++round) {
      Model m;
      write(tree, &m, 50, round);
      require_ok(tree.flush().wait());
    }
    require_ok(tree.close());
  }
  std::vector<fs::path> tables;
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.path().extension() == ".sst") tables.push_back(e.path());
  }
  REQUIRE(tables.size() >= 2);
  const fs::path tmp = fs::path(path) / "swap.tmp";
  fs::rename(tables[0], tmp);
  fs::rename(tables[1], tables[0]);
  fs::rename(tmp, tables[1]);
  const std::string before = dir_snapshot(path);
  Result<Tree> r = open_with(path, keys('k'));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::Corruption);
  CHECK(r.status().message().find("header names file number") != std::string::npos);
  CHECK(dir_snapshot(path) == before);
}

TEST_CASE("a rotated key seals new files, and old ones stay readable while the key is held",
          "[encryption][tree]") {
  TempDir dir("enc-rotate");
  const std::string path = dir.sub("db");
  const std::string k1(32, '1'), k2(32, '2');
  Model model;
  auto key_ids = [&] {
    std::map<uint32_t, int> ids;
    for (const auto& e : fs::directory_iterator(path)) {
      FileType type;
      uint64_t number = 0;
      const std::string name = e.path().filename().string();
      const std::string bytes = read_all_bytes(e.path());
      if (!parse_file_name(name, &type, &number) || !has_header(type) ||
          bytes.size() < kFileHeaderSize) {
        continue;
      }
      ++ids[static_cast<uint8_t>(bytes[20])];  // the key id's low byte
    }
    return ids;
  };
  {
    auto km = SoftwareKeyManager::from_bytes(k1, 1);
    REQUIRE(km.ok());
    Tree tree = open_or_fail(encrypted(path, *km));
    write(tree, &model, 300, 1);
    require_ok(tree.flush().wait());
    write(tree, &model, 100, 2);
    require_ok(tree.close());
  }
  CHECK(key_ids().count(2) == 0);
  auto both = std::make_shared<SoftwareKeyManager>();
  require_ok(both->add_key(1, k1));
  require_ok(both->add_key(2, k2));
  require_ok(both->set_active_key_id(2));
  {
    Tree tree = open_or_fail(encrypted(path, both));
    CHECK(read_all(tree) == model);
    write(tree, &model, 50, 3);
    require_ok(tree.flush().wait());
    // New files are sealed under key 2, old ones stay under key 1 and readable.
    std::map<uint32_t, int> ids = key_ids();
    CHECK(ids[1] > 0);
    CHECK(ids[2] > 0);
    CHECK(read_all(tree) == model);
    require_ok(tree.rewrite_with_active_key());
    CHECK(read_all(tree) == model);
    require_ok(tree.close());
  }
  std::map<uint32_t, int> ids = key_ids();
  CHECK(ids.count(1) == 0);
  CHECK(ids[2] > 0);
  // Key 1 can go: the database opens, reads and writes with key 2 alone.
  auto only2 = SoftwareKeyManager::from_bytes(k2, 2);
  REQUIRE(only2.ok());
  Tree tree = open_or_fail(encrypted(path, *only2));
  CHECK(read_all(tree) == model);
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<std::vector<KeyVersion>> h = tx.history("secret-key-1003");
  REQUIRE(h.ok());
  CHECK(h->size() == 3);
  // And with key 1 alone it is refused by name.
  require_ok(tree.close());
  auto only1 = SoftwareKeyManager::from_bytes(k1, 1);
  REQUIRE(only1.ok());
  CHECK(open_with(path, *only1).status().encryption_error() == EncryptionError::UnknownKeyId);
}

TEST_CASE("rewrite_with_active_key on a plaintext database is refused", "[encryption][tree]") {
  TempDir dir("enc-plain-rewrite");
  Tree tree = open_or_fail(encrypted(dir.sub("db"), nullptr));
  CHECK(tree.rewrite_with_active_key().encryption_error() == EncryptionError::NotEncrypted);
}

TEST_CASE("AES-256-GCM where the CPU has it", "[encryption][tree]") {
  if (!cipher_available(CipherSuite::Aes256Gcm)) {
    WARN("skipped: AES-256-GCM is not available on this CPU");
    return;
  }
  TempDir dir("enc-aes");
  const std::string path = dir.sub("db");
  Model model;
  {
    Tree tree =
        open_or_fail(encrypted(path, keys('a')).with_encryption(keys('a'), CipherSuite::Aes256Gcm));
    write(tree, &model, 100, 1);
    require_ok(tree.flush().wait());
    require_ok(tree.close());
  }
  CHECK(read_all_bytes(fs::path(path) / "CURRENT").find("cipher=2") != std::string::npos);
  Tree tree = open_or_fail(encrypted(path, keys('a')));  // Auto opens the stored cipher
  CHECK(read_all(tree) == model);
}
