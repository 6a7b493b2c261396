// WebImport: writes a set of database files handed over from JavaScript into a new OPFS slot
// pool; the opposite of WebDb::export_files(). The worker API's importFiles() (web/src/import.js)
// drives it.
//
// The wrapper makes the database's directory and its slot files first (all blank), then calls
// begin(), then for each file start_file(), append() any number of times and end_file(), and
// last finish(). The files go through the pool's storage as the engine itself would write them:
// a table as an object (finished), a WAL segment, value log or manifest as a log file (synced),
// and CURRENT, held back until every other file is written and its name durable, as the pointer
// record, so the pool is no database until the end. Only the names the core writes are taken
// (format/file_names.h: NNNNNN.sst, .wal, .vlog, MANIFEST-NNNNNN, CURRENT); any other name, LOCK
// and NNNNNN.tmp included, a name given twice, and a set without CURRENT are InvalidArgument
// naming the file. Whether the files make a database is not checked here: the wrapper then
// opens it once, read-only, and verifies every file (WebDb::open_read_only, WebDb::verify).
//
// A failed call leaves the pool as it stands; the wrapper removes the whole directory. Every
// call returns 0 or an error code, with the error in error_code() / error_message().
//
// Thread safety: none; the worker thread that owns the handles makes every call.

#ifndef SKV_WEB_NATIVE_WEB_IMPORT_H_
#define SKV_WEB_NATIVE_WEB_IMPORT_H_

#include <memory>
#include <set>
#include <string>

#include "platform/opfs/opfs_storage.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv::web {

class WebImport {
 public:
  WebImport() = default;
  WebImport(const WebImport&) = delete;
  WebImport& operator=(const WebImport&) = delete;
  ~WebImport() = default;

  // Recovers the pool of database `name` over handle table `table`. InvalidArgument ("already
  // exists") if any slot holds a file or a pointer record.
  int begin(const std::string& name, int table);
  // Starts file `file` (its kind follows from its name). REQUIRES: begin() succeeded, and the
  // previous file was ended.
  int start_file(const std::string& file);
  // Appends bytes to the file started last.
  int append(const std::string& bytes);
  // Makes the file durable (sync or finish).
  int end_file();
  // Makes every name durable, then writes CURRENT, and closes the pool.
  int finish();

  std::string error_code() const { return code_name(error_.code()); }
  std::string error_message() const { return error_.message(); }

 private:
  int fail(const Status& s);
  Status start(const std::string& file);
  Status end();
  Status done();

  std::string name_;
  std::unique_ptr<OpfsStorage> storage_;
  std::set<std::string> seen_;
  std::string file_;  // the file started last, until it is ended
  std::unique_ptr<LogFile> log_;
  std::unique_ptr<ObjectWriter> object_;
  bool in_current_ = false;
  bool has_current_ = false;
  std::string current_;
  Status error_;
};

}  // namespace skv::web

#endif  // SKV_WEB_NATIVE_WEB_IMPORT_H_
