#include "session.h"

#include <cstdio>
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

void print_error(std::string_view command, const Status& status) {
  std::fprintf(stderr, "skv: %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               status.to_string().c_str());
}

namespace {

// Options::versioning stays unset, so an existing database opens as it was created.
Result<Tree> open_tree(const std::shared_ptr<Platform>& platform, const std::string& dir,
                       bool create, bool versioned) {
  TreeBuilder builder;
  builder.with_path(dir)
      .with_platform(platform)
      .with_create_if_missing(create)
      .with_default_durability(Durability::Immediate);
  if (versioned) builder.with_versioning(true, 0);
  return builder.build();
}

}  // namespace

int with_tree(std::string_view command, const std::string& dir, bool create,
              const std::function<Status(Session&)>& body) {
  return with_tree(command, dir, OpenMode{create, false}, body);
}

int with_tree(std::string_view command, const std::string& dir, OpenMode mode,
              const std::function<Status(Session&)>& body) {
  std::shared_ptr<Platform> platform = default_platform();
  // A versioned create: open what exists as it is (with_versioning would replace a stored
  // retention), and only a database that is not there yet is created versioned.
  Result<Tree> tree = open_tree(platform, dir, mode.create && !mode.versioned, false);
  if (mode.create && mode.versioned && tree.status().is_not_found()) {
    tree = open_tree(platform, dir, true, true);
  }
  if (tree.ok() && mode.versioned && !tree->versioning().enabled) {
    (void)tree->close();
    tree = Status::invalid_argument(dir +
                                    ": the database is not versioned, and versioning "
                                    "cannot be turned on for a database that exists");
  }
  if (!tree.ok()) {
    print_error(command, tree.status().with_context("opening " + dir));
    return 1;
  }
  Session session(platform, std::move(tree).value());
  Status s = body(session);
  Status closed = session.tree().close();
  if (!s.ok()) {
    print_error(command, s);
    return 1;
  }
  if (!closed.ok()) {
    print_error(command, closed.with_context("closing " + dir));
    return 1;
  }
  return 0;
}

}  // namespace skv::cli
