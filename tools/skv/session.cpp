#include "session.h"

#include <cstdio>
#include <string>
#include <utility>

namespace skv::cli {

Status Session::wait(const Future<Status>& future) {
  Executor& executor = platform_->executor();
  while (!future.ready() && !executor.concurrent()) {
    if (executor.run_pending(16) == 0) {
      return Status::io_error("background work stopped before the operation completed");
    }
  }
  return future.wait();
}

Status Session::commit(Transaction& tx) {
  tx.set_durability(Durability::Immediate);
  return wait(tx.commit());
}

int exit_code(const Status& s) {
  switch (s.code()) {
    case Code::Ok:
      return kExitOk;
    case Code::NotFound:
      return kExitNotFound;
    case Code::InvalidArgument:
      return kExitUsage;
    default:
      return kExitFailed;
  }
}

void print_error(std::string_view command, const Status& status) {
  std::string text = code_name(status.code());
  if (status.encryption_error() != EncryptionError::None) {
    text += '/';
    text += encryption_error_name(status.encryption_error());
  }
  text += ": " + status.message();
  switch (status.encryption_error()) {
    case EncryptionError::NotConfigured:
      text += " (give its key with --key-file PATH or SKV_KEY_FILE)";
      break;
    case EncryptionError::NotEncrypted:
      text += " (run the command without --key-file, and with SKV_KEY_FILE unset)";
      break;
    case EncryptionError::UnknownKeyId:
      text += " (--key-id names the id the key file's key is held under)";
      break;
    default:
      break;
  }
  std::fprintf(stderr, "skv: %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               text.c_str());
}

namespace {

// Options::versioning stays unset, so an existing database opens as it was created. `keys` null:
// no encryption (an encrypted database is refused with NotConfigured).
Result<Tree> open_tree(const std::shared_ptr<Platform>& platform, const Database& db,
                       const std::shared_ptr<KeyManager>& keys, bool create, bool versioned,
                       bool read_only) {
  TreeBuilder builder;
  builder.with_path(db.dir)
      .with_platform(platform)
      .with_create_if_missing(create)
      .with_read_only(read_only)
      .with_default_durability(Durability::Immediate);
  if (versioned) builder.with_versioning(true, 0);
  if (keys != nullptr) {
    if (db.keys.cipher) {
      builder.with_encryption(keys, *db.keys.cipher);
    } else {
      builder.with_encryption(keys);
    }
  }
  return builder.build();
}

}  // namespace

Result<std::shared_ptr<KeyManager>> load_keys(const KeyOptions& keys) {
  if (keys.key_file.empty()) return std::shared_ptr<KeyManager>();
  if (keys.cipher && !cipher_available(*keys.cipher)) {
    return Status::not_supported(std::string("the cipher ") + cipher_name(*keys.cipher) +
                                 " is not available in this build or on this CPU");
  }
  // The messages name the path and the problem (mode, size, missing), never key bytes.
  Result<std::shared_ptr<SoftwareKeyManager>> manager =
      SoftwareKeyManager::from_key_file(keys.key_file, keys.key_id);
  if (!manager.ok()) return manager.status();
  return std::shared_ptr<KeyManager>(std::move(manager).value());
}

int with_tree(std::string_view command, const Database& db, OpenMode mode,
              const std::function<Status(Session&)>& body) {
  const std::string& dir = db.dir;
  Result<std::shared_ptr<KeyManager>> keys = load_keys(db.keys);
  if (!keys.ok()) {
    // A refused key file (its mode, its size, missing) is a refused key: exit status 3.
    print_error(command, keys.status());
    return keys.status().code() == Code::NotFound ? kExitNotFound : kExitFailed;
  }
  std::shared_ptr<Platform> platform = default_platform();
  // A versioned create: open what exists as it is (with_versioning would replace a stored
  // retention), and only a database that is not there yet is created versioned.
  Result<Tree> tree =
      open_tree(platform, db, *keys, mode.create && !mode.versioned, false, mode.read_only);
  if (mode.create && mode.versioned && tree.status().is_not_found()) {
    tree = open_tree(platform, db, *keys, true, true, false);
  }
  if (tree.ok() && mode.versioned && !tree->versioning().enabled) {
    (void)tree->close();
    tree = Status::invalid_argument(dir +
                                    ": the database is not versioned, and versioning "
                                    "cannot be turned on for a database that exists");
  }
  if (!tree.ok()) {
    print_error(command, tree.status().with_context("opening " + dir));
    return exit_code(tree.status());
  }
  Session session(platform, std::move(tree).value());
  Status s = body(session);
  Status closed = session.tree().close();
  if (!s.ok()) {
    print_error(command, s);
    return exit_code(s);
  }
  if (!closed.ok()) {
    print_error(command, closed.with_context("closing " + dir));
    return exit_code(closed);
  }
  return kExitOk;
}

}  // namespace skv::cli
