// `skv demo <dir>`: a guided tour of the API on a real directory, printing each step.

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "escape.h"
#include "session.h"
#include "skv/skv.h"
#include "util/status_macros.h"

namespace skv::cli {

namespace {

struct User {
  const char* id;
  const char* handle;
  const char* city;
};

constexpr User kUsers[] = {
    {"user:001", "otter", "Lisbon"}, {"user:002", "heron", "Oslo"},
    {"user:003", "lynx", "Nairobi"}, {"user:004", "marten", "Quito"},
    {"user:005", "ibis", "Hanoi"},   {"user:006", "puffin", "Reykjavik"},
    {"user:007", "gecko", "Perth"},  {"user:008", "tapir", "Manaus"},
    {"user:009", "wren", "Dublin"},  {"user:010", "yak", "Lhasa"},
};

std::string user_value(const User& u) {
  return std::string("{\"handle\":\"") + u.handle + "\",\"city\":\"" + u.city + "\"}";
}

// Prints every entry of [start, end) in one direction, one indented line each.
Status print_scan(const Transaction& tx, const std::string& start, const std::string& end,
                  bool reverse) {
  std::printf("scan [%s, %s) %s:\n", escape(start).c_str(), escape(end).c_str(),
              reverse ? "backward" : "forward");
  SKV_ASSIGN_OR_RETURN(Iterator it, tx.range(start, end));
  for (reverse ? it.seek_last() : it.seek_first(); it.valid(); reverse ? it.prev() : it.next()) {
    SKV_ASSIGN_OR_RETURN(std::string_view value, it.value());
    std::printf("  %s = %s\n", escape(it.key()).c_str(), escape(value).c_str());
  }
  return it.status();
}

Status demo(Session& session) {
  const Tree& tree = session.tree();

  // 1. Two transactions of five users each.
  for (size_t first = 0; first < std::size(kUsers); first += 5) {
    SKV_ASSIGN_OR_RETURN(Transaction tx, tree.begin());
    for (size_t i = first; i < first + 5 && i < std::size(kUsers); ++i) {
      SKV_RETURN_IF_ERROR(tx.set(kUsers[i].id, user_value(kUsers[i])));
    }
    SKV_RETURN_IF_ERROR(session.commit(tx));
    std::printf("committed %s .. %s (durability: immediate)\n", kUsers[first].id,
                kUsers[std::min(first + 4, std::size(kUsers) - 1)].id);
  }

  // 2. Point reads in a read-only transaction.
  {
    SKV_ASSIGN_OR_RETURN(Transaction tx, tree.begin_with_mode(Mode::ReadOnly));
    for (const char* id : {"user:003", "user:008", "user:999"}) {
      SKV_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.get(id));
      std::printf("get %s -> %s\n", id, value ? escape(*value).c_str() : "(not found)");
    }
  }

  // 3. An update and a delete in one transaction; a snapshot taken before still sees the old
  //    state.
  SKV_ASSIGN_OR_RETURN(Transaction before, tree.begin_with_mode(Mode::ReadOnly));
  {
    SKV_ASSIGN_OR_RETURN(Transaction tx, tree.begin());
    SKV_RETURN_IF_ERROR(tx.set("user:002", "{\"handle\":\"heron\",\"city\":\"Bergen\"}"));
    SKV_RETURN_IF_ERROR(tx.del("user:004"));
    SKV_RETURN_IF_ERROR(session.commit(tx));
    std::printf("committed: user:002 moved to Bergen, user:004 deleted\n");
  }
  SKV_ASSIGN_OR_RETURN(uint64_t old_count, before.count("user:", "user;"));
  std::printf("an older snapshot still counts %" PRIu64 " users\n", old_count);

  // 4. Scans both ways over the current state.
  {
    SKV_ASSIGN_OR_RETURN(Transaction tx, tree.begin_with_mode(Mode::ReadOnly));
    SKV_RETURN_IF_ERROR(print_scan(tx, "user:", "user;", /*reverse=*/false));
    SKV_RETURN_IF_ERROR(print_scan(tx, "user:003", "user:007", /*reverse=*/true));
    SKV_ASSIGN_OR_RETURN(uint64_t count, tx.count("user:", "user;"));
    std::printf("count [user:, user;) = %" PRIu64 "\n", count);
  }

  // 5. Two transactions write the same key: the first commit wins, the second gets Conflict.
  {
    SKV_ASSIGN_OR_RETURN(Transaction a, tree.begin());
    SKV_ASSIGN_OR_RETURN(Transaction b, tree.begin());
    SKV_RETURN_IF_ERROR(a.set("user:005", "{\"handle\":\"ibis\",\"city\":\"Hue\"}"));
    SKV_RETURN_IF_ERROR(b.set("user:005", "{\"handle\":\"ibis\",\"city\":\"Da Nang\"}"));
    SKV_RETURN_IF_ERROR(session.commit(a));
    Status second = session.commit(b);
    std::printf("two writers on user:005: first -> ok, second -> %s\n", second.to_string().c_str());
    if (!second.is_conflict()) {
      return Status::invalid_argument("expected the second commit to conflict, got " +
                                      second.to_string());
    }
  }

  // 6. A rollback discards buffered writes.
  {
    SKV_ASSIGN_OR_RETURN(Transaction tx, tree.begin());
    SKV_RETURN_IF_ERROR(tx.set("user:011", "{\"handle\":\"ghost\"}"));
    SKV_RETURN_IF_ERROR(tx.rollback());
    SKV_ASSIGN_OR_RETURN(Transaction check, tree.begin_with_mode(Mode::ReadOnly));
    SKV_ASSIGN_OR_RETURN(std::optional<std::string> value, check.get("user:011"));
    std::printf("rolled back user:011 -> %s\n", value ? "present (unexpected)" : "(not found)");
  }

  const TreeStats st = tree.stats();
  std::printf("last sequence %" PRIu64 ", memtable %" PRIu64 " bytes\n", st.last_sequence,
              st.memtable_bytes);
  return Status::OK();
}

}  // namespace

int run_demo(const Database& db) {
  std::printf("opening %s\n", escape(db.dir).c_str());
  const int rc = with_tree("demo", db, OpenMode{true, false}, demo);
  if (rc == 0) {
    const std::string key = db.keys.key_file.empty() ? "" : " --key-file " + db.keys.key_file;
    std::printf("closed %s; try: skv scan %s --prefix user:%s\n", db.dir.c_str(), db.dir.c_str(),
                key.c_str());
  }
  return rc;
}

}  // namespace skv::cli
