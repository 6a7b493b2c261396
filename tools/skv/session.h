// Session: one open tree for the duration of one skv command, plus the helpers every command
// needs (waiting for futures, committing durably, reporting errors).
//
// Thread safety: used by one thread.

#ifndef SKV_TOOLS_SKV_SESSION_H_
#define SKV_TOOLS_SKV_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "commands.h"
#include "skv/skv.h"

namespace skv::cli {

class Session {
 public:
  Session(std::shared_ptr<Platform> platform, Tree tree)
      : platform_(std::move(platform)), tree_(std::move(tree)) {}

  const Tree& tree() const { return tree_; }

  // Waits for `future`. With a concurrent executor this blocks; with a queue executor it runs
  // queued tasks until the future completes, and fails with IO if the queue runs dry first.
  Status wait(const Future<Status>& future);

  // Commits `tx` with Durability::Immediate and waits for the outcome.
  Status commit(Transaction& tx);

 private:
  std::shared_ptr<Platform> platform_;
  Tree tree_;
};

// Prints "skv: <command>: <code>: <message>" to stderr; an encryption error prints its sub-kind
// too ("encryption/wrong_key: ..."), and one that a key would cure says how to give it.
void print_error(std::string_view command, const Status& status);

// How a command opens its tree. A database always opens as it was created (versioned or not);
// `versioned` only decides how a missing one is created.
struct OpenMode {
  bool create = false;     // create the database when it does not exist
  bool versioned = false;  // ... versioned, keeping every version
  bool read_only = false;  // Options::read_only: the command changes no byte of the database
};

// Opens the tree at `db.dir` as `mode` says, runs `body`, then closes the tree. With a key file in
// `db.keys`, the key is loaded first (a key file that is missing, the wrong size, or readable by
// its group or others is refused before the database is touched) and the tree opens with it: an
// encrypted database opens, a missing one is created encrypted. Returns 0 if loading the key,
// opening, the body and closing all succeeded; otherwise prints the first error and returns its
// exit_code().
int with_tree(std::string_view command, const Database& db, OpenMode mode,
              const std::function<Status(Session&)>& body);

// The key manager `keys` asks for: null without a key file. A key file that is missing, the
// wrong size or readable by its group or others is refused (the message names the path and the
// problem, never key bytes); so is a cipher this build or CPU lacks.
Result<std::shared_ptr<KeyManager>> load_keys(const KeyOptions& keys);

}  // namespace skv::cli

#endif  // SKV_TOOLS_SKV_SESSION_H_
