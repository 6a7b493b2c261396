#include "web/native/web_db.h"

#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

#include "platform/opfs/slot_pool.h"
#include "skv/encryption.h"
#include "web/native/js_calls.h"
#include "web/native/js_slot_handles.h"

namespace skv::web {

namespace {

using emscripten::val;

// Values of at least this many bytes go to the value log unless the options say otherwise.
constexpr size_t kBrowserVlogThreshold = 512;

// Options the browser build starts from: smaller memtables and files than natively, so a flush
// or a compaction step stays short enough not to hold the worker for long.
Options browser_defaults() {
  Options o;
  o.memtable_size = 4 << 20;
  o.target_file_size = 4 << 20;
  o.level_base_bytes = 16 << 20;
  o.block_size = 16 << 10;
  o.block_cache_capacity = 16 << 20;
  o.compaction_step_bytes = 1 << 20;
  // Key-value separation is on (docs/web.md, "The value log"): counts, key scans and point reads
  // then read tables of keys and pointers, a small share of the data, instead of decompressing
  // every value they pass over.
  o.enable_vlog = true;
  o.vlog_value_threshold = kBrowserVlogThreshold;
  o.vlog_max_file_size = 16 << 20;
  o.default_durability = Durability::Immediate;
  o.commit_pipeline = CommitPipeline::Deferred;
  return o;
}

// A number as JavaScript would print it, for messages: integers in full, no exponent.
std::string number_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  if (std::trunc(d) == d && std::fabs(d) < 1e21) {
    std::snprintf(buf, sizeof buf, "%.0f", d);
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", d);
  }
  return buf;
}

std::string type_name(const JsField& f) {
  switch (f.type) {
    case JsField::Type::Number:
      return "a number";
    case JsField::Type::Boolean:
      return "a boolean";
    case JsField::Type::String:
      return "a string";
    default:
      return "a value of type " + f.text;
  }
}

// The options reach the glue checked by the wrapper already (web/src/options.js); these are the
// checks at the wasm boundary, so that a value of the wrong type, a fraction, NaN or a number the
// field cannot hold (size_t is 32 bits in wasm32) is refused instead of being truncated, wrapped
// or thrown about. Every read goes through read_js_field, which never lets an exception out.

// Reads an integer option into `out`.
template <typename T>
Status read_integer(const val& obj, const char* field, T* out) {
  JsField f;
  if (Status s = read_js_field(obj, field, &f); !s.ok()) return s;
  if (f.type == JsField::Type::Absent) return Status();
  constexpr double kMax = static_cast<double>(std::numeric_limits<T>::max());
  constexpr double kMin = static_cast<double>(std::numeric_limits<T>::min());
  // 2^53 - 1: the largest range in which every double is an integer the field holds exactly.
  constexpr double kLimit = kMax < 9007199254740991.0 ? kMax : 9007199254740991.0;
  const std::string range = "an integer from " + number_text(kMin) + " to " + number_text(kLimit);
  if (f.type != JsField::Type::Number) {
    return Status::invalid_argument(std::string("option ") + field + " must be " + range +
                                    ", not " + type_name(f));
  }
  const double d = f.number;
  if (!std::isfinite(d) || std::trunc(d) != d || d < kMin || d > kLimit) {
    return Status::invalid_argument(std::string("option ") + field + " must be " + range +
                                    ", not " + number_text(d));
  }
  *out = static_cast<T>(d);
  return Status();
}

Status read_bool(const val& obj, const char* field, bool* out) {
  JsField f;
  if (Status s = read_js_field(obj, field, &f); !s.ok()) return s;
  if (f.type == JsField::Type::Absent) return Status();
  if (f.type != JsField::Type::Boolean) {
    return Status::invalid_argument(std::string("option ") + field + " must be a boolean, not " +
                                    type_name(f));
  }
  *out = f.number != 0;
  return Status();
}

Status read_string(const val& obj, const char* field, std::optional<std::string>* out) {
  JsField f;
  if (Status s = read_js_field(obj, field, &f); !s.ok()) return s;
  if (f.type == JsField::Type::Absent) return Status();
  if (f.type != JsField::Type::String) {
    return Status::invalid_argument(std::string("option ") + field + " must be a string, not " +
                                    type_name(f));
  }
  *out = std::move(f.text);
  return Status();
}

// The versioning option, { enabled, retentionNs }: an object turns Options::versioning on (so an
// existing database must agree on `enabled`); absent, the database opens as it was created.
Status read_versioning(const val& js, Options* o) {
  JsField f;
  if (Status s = read_js_field(js, "versioning", &f); !s.ok()) return s;
  if (f.type == JsField::Type::Absent) return Status();
  if (f.type != JsField::Type::Other || f.text != "object") {
    return Status::invalid_argument("option versioning must be an object, not " +
                                    (f.text == "array" ? std::string("an array") : type_name(f)));
  }
  val v = val::undefined();
  if (Status s = read_js_property(js, "versioning", &v); !s.ok()) return s;
  Versioning versioning;
  versioning.enabled = true;
  if (Status s = read_bool(v, "enabled", &versioning.enabled); !s.ok()) {
    return Status::invalid_argument("versioning: " + s.message());
  }
  val retention = val::undefined();
  if (Status s = read_js_property(v, "retentionNs", &retention); !s.ok()) {
    return Status::invalid_argument("versioning: " + s.message());
  }
  bool present = false;
  if (Status s = read_js_u63(retention, "option versioning.retentionNs", 0,
                             &versioning.retention_ns, &present);
      !s.ok()) {
    return s;
  }
  o->versioning = versioning;
  return Status();
}

// The valueLog option (docs/vlog.md): absent or true, the browser's defaults (on, values of at
// least 512 bytes separated); false, off (values stay in the tables; those already separated stay
// readable); an object { threshold, maxFileSize, gcRatio, cacheSize }, on with those settings.
// The tree checks the ranges once more at open.
Status read_value_log(const val& js, Options* o) {
  JsField f;
  if (Status s = read_js_field(js, "valueLog", &f); !s.ok()) return s;
  if (f.type == JsField::Type::Absent) return Status();
  if (f.type == JsField::Type::Boolean) {
    o->enable_vlog = f.number != 0;
    return Status();
  }
  if (f.type != JsField::Type::Other || f.text != "object") {
    return Status::invalid_argument("option valueLog must be true, false or an object, not " +
                                    (f.text == "array" ? std::string("an array") : type_name(f)));
  }
  val v = val::undefined();
  if (Status s = read_js_property(js, "valueLog", &v); !s.ok()) return s;
  for (const Status& s : {
           read_integer(v, "threshold", &o->vlog_value_threshold),
           read_integer(v, "maxFileSize", &o->vlog_max_file_size),
           read_integer(v, "cacheSize", &o->vlog_cache_capacity),
       }) {
    if (!s.ok()) return Status::invalid_argument("valueLog: " + s.message());
  }
  if (o->vlog_value_threshold < 1 || o->vlog_value_threshold > kMaxValueSize) {
    return Status::invalid_argument("option valueLog.threshold must be from 1 to " +
                                    std::to_string(kMaxValueSize) + ", not " +
                                    std::to_string(o->vlog_value_threshold));
  }
  if (o->vlog_max_file_size < 4096) {
    return Status::invalid_argument("option valueLog.maxFileSize must be at least 4096, not " +
                                    std::to_string(o->vlog_max_file_size));
  }
  JsField ratio;
  if (Status s = read_js_field(v, "gcRatio", &ratio); !s.ok()) {
    return Status::invalid_argument("valueLog: " + s.message());
  }
  if (ratio.type != JsField::Type::Absent) {
    if (ratio.type != JsField::Type::Number || !(ratio.number > 0 && ratio.number <= 1)) {
      return Status::invalid_argument(
          "option valueLog.gcRatio must be a number in (0, 1], not " +
          (ratio.type == JsField::Type::Number ? number_text(ratio.number) : type_name(ratio)));
    }
    o->vlog_gc_ratio = ratio.number;
  }
  o->enable_vlog = true;
  return Status();
}

// Overwrites `n` bytes at `p` with zeros in a way the optimizer keeps.
void wipe(uint8_t* p, size_t n) {
  volatile uint8_t* v = p;
  for (size_t i = 0; i < n; ++i) v[i] = 0;
}

// The key and keyId options (docs/web.md, "Encryption"): with a key, a SoftwareKeyManager holding
// it under keyId (default 1) as the active key; without one, *keys stays null and keyId is
// refused. The key's bytes go from JavaScript straight into a buffer that is wiped before this
// returns; only the manager (which wipes its own copy when released) keeps them.
Status read_encryption(const val& js, std::shared_ptr<KeyManager>* keys) {
  uint8_t key[kRootKeySize];
  bool present = false;
  Status s = read_js_key(js, "key", key, &present);
  uint32_t key_id = 1;
  JsField id;
  if (s.ok()) s = read_js_field(js, "keyId", &id);
  if (s.ok() && id.type != JsField::Type::Absent) {
    constexpr double kMaxId = 4294967295.0;
    if (id.type != JsField::Type::Number) {
      s = Status::invalid_argument("option keyId must be an integer from 1 to 4294967295, not " +
                                   type_name(id));
    } else if (!std::isfinite(id.number) || std::trunc(id.number) != id.number || id.number < 1 ||
               id.number > kMaxId) {
      s = Status::invalid_argument("option keyId must be an integer from 1 to 4294967295, not " +
                                   number_text(id.number));
    } else if (!present) {
      s = Status::invalid_argument("option keyId needs option key");
    } else {
      key_id = static_cast<uint32_t>(id.number);
    }
  }
  if (s.ok() && present) {
    Result<std::shared_ptr<SoftwareKeyManager>> m = SoftwareKeyManager::from_bytes(
        std::string_view(reinterpret_cast<const char*>(key), sizeof key), key_id);
    if (m.ok()) {
      *keys = std::move(m).value();
    } else {
      s = m.status();
    }
  }
  wipe(key, sizeof key);
  return s;
}

Status read_options(const val& js, Options* o, OpfsOptions* pool,
                    std::shared_ptr<KeyManager>* keys) {
  std::optional<std::string> durability, compression;
  for (const Status& s : {
           read_integer(js, "memtableSize", &o->memtable_size),
           read_integer(js, "maxImmutableMemtables", &o->max_immutable_memtables),
           read_integer(js, "blockSize", &o->block_size),
           read_integer(js, "blockCacheSize", &o->block_cache_capacity),
           read_integer(js, "bloomBitsPerKey", &o->bloom_bits_per_key),
           read_integer(js, "levelBaseBytes", &o->level_base_bytes),
           read_integer(js, "targetFileSize", &o->target_file_size),
           read_integer(js, "compactionStepBytes", &o->compaction_step_bytes),
           read_integer(js, "l0CompactionTrigger", &o->l0_compaction_trigger),
           read_integer(js, "compressionStartLevel", &o->compression_start_level),
           read_integer(js, "reserveSlots", &pool->reserve_slots),
           read_integer(js, "writeBufferBytes", &pool->write_buffer_bytes),
           read_bool(js, "createIfMissing", &o->create_if_missing),
           read_bool(js, "openWithDamagedSlots", &pool->open_with_damaged_slots),
           read_string(js, "durability", &durability),
           read_string(js, "compression", &compression),
           read_versioning(js, o),
           read_value_log(js, o),
           read_encryption(js, keys),
       }) {
    if (!s.ok()) return s;
  }
  if (durability) {
    if (*durability == "immediate") {
      o->default_durability = Durability::Immediate;
    } else if (*durability == "eventual") {
      o->default_durability = Durability::Eventual;
    } else {
      return Status::invalid_argument("durability must be 'immediate' or 'eventual', not '" +
                                      *durability + "'");
    }
  }
  if (compression) {
    if (*compression == "zstd") {
      o->compression = Compression::Zstd;
    } else if (*compression == "none") {
      o->compression = Compression::None;
    } else {
      return Status::invalid_argument("compression must be 'zstd' or 'none', not '" + *compression +
                                      "'");
    }
  }
  return Status();
}

void put_u32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 4);
}

void set_u32(std::string* out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*out)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

constexpr uint32_t kNoValue = 0xFFFFFFFFu;

}  // namespace

const char* encryption_reason(const Status& s) {
  if (s.code() != Code::Encryption || s.encryption_error() == EncryptionError::None) return "";
  return encryption_error_name(s.encryption_error());
}

namespace {

// A timestamp argument of `call` (read_js_u63), at least `min`.
Status read_timestamp(const val& ts, const char* call, uint64_t min, uint64_t* out) {
  bool present = false;
  const std::string what = std::string(call) + ": the timestamp";
  if (Status s = read_js_u63(ts, what, min, out, &present); !s.ok()) return s;
  if (!present) {
    return Status::invalid_argument(what + " must be a BigInt or a safe integer from " +
                                    std::to_string(min) + " to 9223372036854775807, not " +
                                    (ts.isNull() ? "null" : "undefined"));
  }
  return Status();
}

}  // namespace

WebDb::~WebDb() { (void)close(); }

int WebDb::fail(const Status& s) {
  error_ = s;
  return static_cast<int>(s.code());
}

val WebDb::bytes_to_js(std::string_view bytes) {
  Result<val> v = js_bytes(bytes);
  if (!v.ok()) return fail(v.status()), val::null();
  return std::move(v).value();
}

int WebDb::open(const std::string& name, int table, val options) {
  return open_tree(name, table, options, false);
}

int WebDb::open_read_only(const std::string& name, int table, val options) {
  return open_tree(name, table, options, true);
}

int WebDb::open_tree(const std::string& name, int table, const val& options, bool read_only) {
  if (tree_) return fail(Status::invalid_argument("opfs:" + name + ": this handle is open"));
  Options o = browser_defaults();
  OpfsOptions pool;
  pool.reserve_slots = 24;
  std::shared_ptr<KeyManager> keys;
  if (Status s = read_options(options, &o, &pool, &keys); !s.ok()) return fail(s);
  if (read_only) {
    o.read_only = true;
    o.create_if_missing = false;
  }
  name_ = name;
  auto handles = std::make_shared<JsSlotHandles>(table);
  std::shared_ptr<std::map<std::string, std::shared_ptr<SlotHandles>>> targets = targets_;
  platform_ = std::make_shared<OpfsPlatform>(
      [name, handles, targets](const std::string& db,
                               bool create) -> Result<std::shared_ptr<SlotHandles>> {
        if (db == name) {
          // The wrapper creates a new database's first slots only when asked to create it, so
          // an empty table means the database does not exist.
          if (!create && handles->slot_count() == 0) {
            return Status::not_found("opfs:" + db + ": no such database");
          }
          return std::shared_ptr<SlotHandles>(handles);
        }
        // Another database: only one the wrapper prepared for this call (checkpoint()). Its
        // table is the slots of a directory the wrapper has just made, so it is no database yet.
        auto it = targets->find(db);
        if (it == targets->end()) {
          return Status::not_found("opfs:" + db + ": no slot table was prepared for it");
        }
        if (!create) return Status::not_found("opfs:" + db + ": no such database");
        return it->second;
      },
      pool);
  o.path = name;
  o.platform = platform_;
  TreeBuilder builder;
  builder.with_options(o);
  if (keys) builder.with_encryption(std::move(keys));
  Result<Tree> tree = builder.build();
  if (!tree.ok()) {
    platform_.reset();
    return fail(tree.status());
  }
  tree_.emplace(std::move(tree).value());
  return 0;
}

int WebDb::close() {
  cursors_.clear();
  txns_.clear();
  if (!tree_) return 0;
  Status s = tree_->close();
  tree_.reset();
  // Commits the close completed (or failed) are still reported by take_done().
  if (!s.ok()) return fail(s);
  return 0;
}

Transaction* WebDb::txn(int id) {
  auto it = txns_.find(id);
  if (it == txns_.end()) {
    fail(Status::closed("transaction " + std::to_string(id) + " is finished"));
    return nullptr;
  }
  return &it->second;
}

WebDb::Cursor* WebDb::cursor(int id) {
  auto it = cursors_.find(id);
  if (it == cursors_.end()) {
    fail(Status::closed("iterator " + std::to_string(id) + " is closed"));
    return nullptr;
  }
  return &it->second;
}

int WebDb::begin(bool read_only) {
  if (!tree_) return fail(Status::closed("opfs:" + name_ + ": the database is closed")), 0;
  Result<Transaction> t = tree_->begin_with_mode(read_only ? Mode::ReadOnly : Mode::ReadWrite);
  if (!t.ok()) return fail(t.status()), 0;
  const int id = next_id_++;
  txns_.emplace(id, std::move(t).value());
  return id;
}

int WebDb::set(int id, const std::string& key, const std::string& value) {
  Transaction* t = txn(id);
  if (t == nullptr) return static_cast<int>(error_.code());
  return fail(t->set(key, value));
}

int WebDb::del(int id, const std::string& key) {
  Transaction* t = txn(id);
  if (t == nullptr) return static_cast<int>(error_.code());
  return fail(t->del(key));
}

val WebDb::get(int id, const std::string& key) {
  Transaction* t = txn(id);
  if (t == nullptr) return val::null();
  Result<std::optional<std::string>> v = t->get(key);
  if (!v.ok()) return fail(v.status()), val::null();
  if (!v->has_value()) return val::undefined();
  return bytes_to_js(**v);
}

int WebDb::get_async(int id, const std::string& key) {
  Transaction* t = txn(id);
  if (t == nullptr) return 0;
  const int op = next_id_++;
  reads_in_flight_.emplace_back(op, t->get_async(key));
  return op;
}

val WebDb::take_value(int id) {
  auto it = read_values_.find(id);
  if (it == read_values_.end()) return val::null();
  val out = it->second ? bytes_to_js(*it->second) : val::undefined();
  read_values_.erase(it);
  return out;
}

int WebDb::set_at(int id, const std::string& key, const std::string& value, val ts) {
  Transaction* t = txn(id);
  if (t == nullptr) return static_cast<int>(error_.code());
  uint64_t at = 0;
  if (Status s = read_timestamp(ts, "setAt", 1, &at); !s.ok()) return fail(s);
  return fail(t->set_at(key, value, at));
}

val WebDb::get_at(int id, const std::string& key, val ts) {
  Transaction* t = txn(id);
  if (t == nullptr) return val::null();
  uint64_t at = 0;
  if (Status s = read_timestamp(ts, "getAt", 0, &at); !s.ok()) return fail(s), val::null();
  Result<std::optional<std::string>> v = t->get_at(key, at);
  if (!v.ok()) return fail(v.status()), val::null();
  if (!v->has_value()) return val::undefined();
  return bytes_to_js(**v);
}

val WebDb::history(int id, const std::string& key, bool include_tombstones, double limit) {
  Transaction* t = txn(id);
  if (t == nullptr) return val::null();
  if (std::isnan(limit) || limit < 0 || (std::isfinite(limit) && std::trunc(limit) != limit)) {
    return fail(Status::invalid_argument("history: limit must be a non-negative integer or "
                                         "Infinity, not " +
                                         number_text(limit))),
           val::null();
  }
  HistoryOptions o;
  o.include_tombstones = include_tombstones;
  // HistoryOptions::limit 0 means all; a limit of 0 still checks the call, then returns none.
  o.limit = limit == 0 ? 1
            : limit >= static_cast<double>(std::numeric_limits<size_t>::max())
                ? 0
                : static_cast<size_t>(limit);
  Result<std::vector<KeyVersion>> h = t->history(key, o);
  if (!h.ok()) return fail(h.status()), val::null();
  if (limit == 0) h->clear();
  std::string out;
  put_u32(&out, static_cast<uint32_t>(h->size()));
  for (const KeyVersion& v : *h) {
    put_u32(&out, static_cast<uint32_t>(v.timestamp & 0xffffffffu));
    put_u32(&out, static_cast<uint32_t>(v.timestamp >> 32));
    put_u32(&out, v.tombstone ? kNoValue : static_cast<uint32_t>(v.value.size()));
    if (!v.tombstone) out.append(v.value);
  }
  return bytes_to_js(out);
}

val WebDb::versioning() {
  if (!tree_)
    return fail(Status::closed("opfs:" + name_ + ": the database is closed")), val::null();
  const Versioning v = tree_->versioning();
  val out = val::object();
  out.set("enabled", v.enabled);
  out.set("retentionNs", val::global("BigInt")(std::to_string(v.retention_ns)));
  return out;
}

double WebDb::count(int id, const std::string& start, const std::string& end) {
  Transaction* t = txn(id);
  if (t == nullptr) return -1;
  Result<uint64_t> n = t->count(start, end);
  if (!n.ok()) return fail(n.status()), -1;
  return static_cast<double>(*n);
}

int WebDb::savepoint(int id) {
  Transaction* t = txn(id);
  if (t == nullptr) return static_cast<int>(error_.code());
  return fail(t->set_savepoint());
}

int WebDb::rollback_to_savepoint(int id) {
  Transaction* t = txn(id);
  if (t == nullptr) return static_cast<int>(error_.code());
  return fail(t->rollback_to_savepoint());
}

int WebDb::rollback(int id) {
  Transaction* t = txn(id);
  if (t == nullptr) return static_cast<int>(error_.code());
  Status s = t->rollback();
  txns_.erase(id);
  return fail(s);
}

int WebDb::commit(int id, int durability) {
  Transaction* t = txn(id);
  if (t == nullptr) return 0;
  if (durability >= 0) {
    t->set_durability(durability == 1 ? Durability::Immediate : Durability::Eventual);
  }
  CommitFuture f = t->commit();
  txns_.erase(id);
  const int op = next_id_++;
  in_flight_.emplace_back(op, std::move(f));
  return op;
}

int WebDb::flush() {
  if (!tree_) return fail(Status::closed("opfs:" + name_ + ": the database is closed")), 0;
  const int op = next_id_++;
  in_flight_.emplace_back(op, tree_->flush());
  return op;
}

int WebDb::compact_all() {
  if (!tree_) return fail(Status::closed("opfs:" + name_ + ": the database is closed"));
  return fail(tree_->compact_all());
}

int WebDb::collect_vlog_garbage() {
  if (!tree_) return fail(Status::closed("opfs:" + name_ + ": the database is closed"));
  return fail(tree_->collect_vlog_garbage());
}

val WebDb::take_done() {
  val done = val::array();
  int n = 0;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (!it->second.ready()) {
      ++it;
      continue;
    }
    const Status& s = it->second.wait();
    val entry = val::array();
    entry.call<void>("push", it->first, std::string(code_name(s.code())), s.message(),
                     std::string(encryption_reason(s)));
    done.set(n++, entry);
    it = in_flight_.erase(it);
  }
  for (auto it = reads_in_flight_.begin(); it != reads_in_flight_.end();) {
    if (!it->second.ready()) {
      ++it;
      continue;
    }
    const Result<std::optional<std::string>>& r = it->second.wait();
    const Status s = r.ok() ? Status::OK() : r.status();
    if (r.ok()) read_values_[it->first] = *r;
    val entry = val::array();
    entry.call<void>("push", it->first, std::string(code_name(s.code())), s.message(),
                     std::string(encryption_reason(s)));
    done.set(n++, entry);
    it = reads_in_flight_.erase(it);
  }
  return done;
}

int WebDb::add_cursor(Result<Iterator> it, bool reverse, bool keys_only) {
  if (!it.ok()) return fail(it.status()), 0;
  const int cid = next_id_++;
  cursors_.emplace(cid, Cursor{std::move(it).value(), reverse, keys_only, false});
  return cid;
}

int WebDb::iter_open(int id, const std::string& start, const std::string& end, bool reverse,
                     bool keys_only) {
  Transaction* t = txn(id);
  if (t == nullptr) return 0;
  return add_cursor(keys_only ? t->keys(start, end) : t->range(start, end), reverse, keys_only);
}

int WebDb::iter_open_at(int id, const std::string& start, const std::string& end, val ts,
                        bool reverse, bool keys_only) {
  Transaction* t = txn(id);
  if (t == nullptr) return 0;
  uint64_t at = 0;
  if (Status s = read_timestamp(ts, "rangeAt", 0, &at); !s.ok()) return fail(s), 0;
  return add_cursor(keys_only ? t->keys_at(start, end, at) : t->range_at(start, end, at), reverse,
                    keys_only);
}

Status WebDb::start(Cursor* c) {
  if (c->started) return Status();
  c->started = true;
  c->reverse ? c->it.seek_last() : c->it.seek_first();
  return c->it.status();
}

Status WebDb::step(Cursor* c) {
  // An iterator that meets an error stops (is no longer valid), so only then is there a status
  // to read: reading it walks every input of the merge, a fifth of a skip's time if done per
  // step.
  const bool valid = c->reverse ? c->it.prev() : c->it.next();
  return valid ? Status() : c->it.status();
}

val WebDb::iter_next(int id, int max_entries, int max_bytes) {
  Cursor* c = cursor(id);
  if (c == nullptr) return val::null();
  if (max_entries < 1 || max_bytes < 1) {
    return fail(Status::invalid_argument("iterator batch: max_entries and max_bytes must be at "
                                         "least 1")),
           val::null();
  }
  if (Status s = start(c); !s.ok()) return fail(s), val::null();
  std::string out;
  put_u32(&out, 0);
  put_u32(&out, 0);
  uint32_t count = 0;
  while (c->it.valid() && static_cast<int>(count) < max_entries &&
         static_cast<int>(out.size()) < max_bytes) {
    const std::string_view key = c->it.key();
    put_u32(&out, static_cast<uint32_t>(key.size()));
    if (c->keys_only) {
      put_u32(&out, kNoValue);
      out.append(key);
    } else {
      Result<std::string_view> v = c->it.value();
      if (!v.ok()) return fail(v.status()), val::null();
      put_u32(&out, static_cast<uint32_t>(v->size()));
      out.append(key);
      out.append(*v);
    }
    ++count;
    if (Status s = step(c); !s.ok()) return fail(s), val::null();
  }
  if (!c->it.status().ok()) return fail(c->it.status()), val::null();
  set_u32(&out, 0, count);
  set_u32(&out, 4, c->it.valid() ? 0 : 1);
  return bytes_to_js(out);
}

double WebDb::iter_skip(int id, double n) {
  Cursor* c = cursor(id);
  if (c == nullptr) return -1;
  if (!std::isfinite(n) || std::trunc(n) != n || n < 0) {
    return fail(Status::invalid_argument("iterator skip: the count must be a non-negative "
                                         "integer")),
           -1;
  }
  if (Status s = start(c); !s.ok()) return fail(s), -1;
  double skipped = 0;
  while (skipped < n && c->it.valid()) {
    if (Status s = step(c); !s.ok()) return fail(s), -1;
    ++skipped;
  }
  return skipped;
}

void WebDb::iter_close(int id) { cursors_.erase(id); }

int WebDb::run_pending(int max_tasks) {
  if (!platform_) return 0;
  return static_cast<int>(platform_->executor().run_pending(static_cast<size_t>(max_tasks)));
}

int WebDb::pending() const {
  if (!platform_ || platform_->queue_executor() == nullptr) return 0;
  return static_cast<int>(platform_->queue_executor()->pending());
}

bool WebDb::background_behind() {
  if (!tree_) return false;
  const TreeStats t = tree_->stats();
  return t.immutable_memtables > 0 ||
         t.files_per_level[0] > 2 * tree_->options().l0_compaction_trigger;
}

bool WebDb::needs_more_slots() {
  OpfsStorage* s = platform_ ? platform_->storage(name_) : nullptr;
  return s != nullptr && s->needs_more_slots();
}

int WebDb::slots_wanted() {
  OpfsStorage* s = platform_ ? platform_->storage(name_) : nullptr;
  return s == nullptr ? 0 : static_cast<int>(s->slots_wanted());
}

int WebDb::add_slots(int n) {
  OpfsStorage* s = platform_ ? platform_->storage(name_) : nullptr;
  if (s == nullptr) return fail(Status::closed("opfs:" + name_ + ": the database is closed"));
  return fail(s->add_slots(static_cast<size_t>(n)));
}

val WebDb::stats() {
  val out = val::object();
  if (tree_) {
    const TreeStats t = tree_->stats();
    out.set("lastSequence", static_cast<double>(t.last_sequence));
    out.set("memtableBytes", static_cast<double>(t.memtable_bytes));
    out.set("immutableMemtables", t.immutable_memtables);
    out.set("backgroundJobs", t.background_jobs);
    val files = val::array();
    val bytes = val::array();
    for (int i = 0; i < t.level_count; ++i) {
      files.set(i, t.files_per_level[i]);
      bytes.set(i, static_cast<double>(t.bytes_per_level[i]));
    }
    out.set("filesPerLevel", files);
    out.set("bytesPerLevel", bytes);
    out.set("flushes", static_cast<double>(t.flushes));
    out.set("compactions", static_cast<double>(t.compactions));
    out.set("compactionSteps", static_cast<double>(t.compaction_steps));
    out.set("stalls", static_cast<double>(t.stalls));
    out.set("blockCacheBytes", static_cast<double>(t.block_cache_usage));
    out.set("blockCacheScanBytes", static_cast<double>(t.block_cache_scan_usage));
    out.set("commits", static_cast<double>(t.commits));
    out.set("commitGroups", static_cast<double>(t.commit_groups));
    out.set("walSyncs", static_cast<double>(t.wal_syncs));
    out.set("vlogFiles", static_cast<double>(t.vlog_files));
    out.set("vlogBytes", static_cast<double>(t.vlog_bytes));
    out.set("vlogGarbageBytes", static_cast<double>(t.vlog_garbage_bytes));
    out.set("vlogGcRuns", static_cast<double>(t.vlog_gc_runs));
    out.set("vlogGcBytesMoved", static_cast<double>(t.vlog_gc_bytes_moved));
    out.set("vlogCacheBytes", static_cast<double>(t.vlog_cache_usage));
  }
  // Each open transaction and iterator holds a snapshot, which keeps the versions it sees.
  out.set("openTransactions", static_cast<double>(txns_.size()));
  out.set("openIterators", static_cast<double>(cursors_.size()));
  OpfsStorage* s = platform_ ? platform_->storage(name_) : nullptr;
  if (s != nullptr) {
    const SlotPoolStats p = s->stats();
    val pool = val::object();
    pool.set("slots", static_cast<double>(p.slots));
    pool.set("used", static_cast<double>(p.used));
    pool.set("free", static_cast<double>(p.free));
    pool.set("releasing", static_cast<double>(p.releasing));
    pool.set("damaged", static_cast<double>(p.damaged));
    pool.set("handleReads", static_cast<double>(p.handle_reads));
    pool.set("handleWrites", static_cast<double>(p.handle_writes));
    pool.set("handleFlushes", static_cast<double>(p.handle_flushes));
    out.set("pool", pool);
  }
  return out;
}

int WebDb::checkpoint(const std::string& target, int table) {
  if (!tree_) return fail(Status::closed("opfs:" + name_ + ": the database is closed"));
  const std::string location = "opfs:" + target;
  if (target == name_) {
    return fail(
        Status::invalid_argument(location + ": already exists (it is the database checkpointed)"));
  }
  if (targets_->count(target) != 0) {
    return fail(Status::busy(location + ": a checkpoint into it is under way"));
  }
  auto handles = std::make_shared<JsSlotHandles>(table);
  // The table must be blank slots only: one that holds a pointer record or a file is a database
  // (or what is left of one), which a checkpoint must not touch.
  {
    Result<std::unique_ptr<OpfsStorage>> probe = OpfsStorage::open(target, handles);
    if (!probe.ok()) return fail(probe.status());
    SlotPool& pool = (*probe)->pool();
    const SlotPoolStats p = pool.stats();
    if (p.used != 0 || p.damaged != 0) {
      return fail(Status::invalid_argument(location + ": already exists (its slot table holds " +
                                           std::to_string(p.used) +
                                           " files; a checkpoint needs a new database)"));
    }
  }
  targets_->emplace(target, handles);
  Status s = tree_->checkpoint(target);
  targets_->erase(target);
  return fail(s);
}

int WebDb::verify() {
  if (!tree_) return fail(Status::closed("opfs:" + name_ + ": the database is closed"));
  Result<VerifyReport> report = tree_->verify();
  if (!report.ok()) return fail(report.status());
  if (report->ok()) return fail(Status());
  // The first damaged file's own status (its code, and an encryption error's sub-kind), with
  // the names of all of them in front.
  const Status* first = nullptr;
  std::string names;
  for (const VerifiedFile& f : report->files) {
    if (f.status.ok()) continue;
    if (first == nullptr) first = &f.status;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  return fail(first->with_context("opfs:" + name_ + ": " + std::to_string(report->damaged()) +
                                  " of " + std::to_string(report->files.size()) +
                                  " files do not check (" + names + ")"));
}

val WebDb::export_files() {
  OpfsStorage* storage = platform_ ? platform_->storage(name_) : nullptr;
  if (storage == nullptr) {
    return fail(Status::closed("opfs:" + name_ + ": the database is closed")), val::null();
  }
  SlotPool& pool = storage->pool();
  val out = val::array();
  int n = 0;
  for (SlotKind kind : {SlotKind::Log, SlotKind::Object}) {
    for (const std::string& file : pool.list_files(kind)) {
      Result<size_t> slot = pool.open_file(file, kind);
      if (!slot.ok()) return fail(slot.status()), val::null();
      const uint64_t size = pool.file_size(*slot);
      std::string data(size, '\0');
      std::string_view got;
      Status s = pool.read(*slot, 0, size, data.data(), &got);
      Status u = pool.unpin(*slot);
      if (s.ok()) s = u;
      if (!s.ok()) return fail(s), val::null();
      val bytes = bytes_to_js(got);
      if (bytes.isNull()) return val::null();
      val entry = val::array();
      entry.call<void>("push", file, bytes);
      out.set(n++, entry);
    }
  }
  Result<std::string> current = pool.read_pointer("CURRENT");
  if (current.ok()) {
    val bytes = bytes_to_js(*current);
    if (bytes.isNull()) return val::null();
    val entry = val::array();
    entry.call<void>("push", std::string("CURRENT"), bytes);
    out.set(n++, entry);
  } else if (current.status().code() != Code::NotFound) {
    return fail(current.status()), val::null();
  }
  return out;
}

}  // namespace skv::web

namespace skv {

// Every tree of the browser build is opened with its own OpfsPlatform (WebDb::open), so the
// builder never asks for a default one; a program that did would get InvalidArgument.
std::shared_ptr<Platform> default_platform() { return nullptr; }

}  // namespace skv

EMSCRIPTEN_BINDINGS(skv_web) {
  using skv::web::WebDb;
  emscripten::class_<WebDb>("WebDb")
      .constructor<>()
      .function("open", &WebDb::open)
      .function("openReadOnly", &WebDb::open_read_only)
      .function("checkpoint", &WebDb::checkpoint)
      .function("verify", &WebDb::verify)
      .function("close", &WebDb::close)
      .function("begin", &WebDb::begin)
      .function("set", &WebDb::set)
      .function("del", &WebDb::del)
      .function("get", &WebDb::get)
      .function("count", &WebDb::count)
      .function("savepoint", &WebDb::savepoint)
      .function("rollbackToSavepoint", &WebDb::rollback_to_savepoint)
      .function("rollback", &WebDb::rollback)
      .function("commit", &WebDb::commit)
      .function("getAsync", &WebDb::get_async)
      .function("takeValue", &WebDb::take_value)
      .function("setAt", &WebDb::set_at)
      .function("getAt", &WebDb::get_at)
      .function("history", &WebDb::history)
      .function("versioning", &WebDb::versioning)
      .function("iterOpen", &WebDb::iter_open)
      .function("iterOpenAt", &WebDb::iter_open_at)
      .function("iterNext", &WebDb::iter_next)
      .function("iterSkip", &WebDb::iter_skip)
      .function("iterClose", &WebDb::iter_close)
      .function("flush", &WebDb::flush)
      .function("compactAll", &WebDb::compact_all)
      .function("collectVlogGarbage", &WebDb::collect_vlog_garbage)
      .function("takeDone", &WebDb::take_done)
      .function("runPending", &WebDb::run_pending)
      .function("pending", &WebDb::pending)
      .function("backgroundBehind", &WebDb::background_behind)
      .function("needsMoreSlots", &WebDb::needs_more_slots)
      .function("slotsWanted", &WebDb::slots_wanted)
      .function("addSlots", &WebDb::add_slots)
      .function("stats", &WebDb::stats)
      .function("exportFiles", &WebDb::export_files)
      .function("errorCode", &WebDb::error_code)
      .function("errorMessage", &WebDb::error_message)
      .function("errorReason", &WebDb::error_reason);
}
