// @ts-check
// The worker script the main-thread client (index.js) starts, exported as 'skv/server' for
// bundlers (the `worker` option of open()): it runs the worker API (database.js) and answers the
// client's requests.
//
// Requests arrive in batches, one postMessage per turn of the client's event loop:
// { batch: [{ id, op, args }] }. Each gets one reply { id, ok, result } or { id, ok: false,
// error: { code, message, cause? } }; replies of one turn also travel together, and every buffer
// in a result is transferred, not copied. Transactions and iterators are named by ids the client
// chooses, so a client can begin, write and commit in one message. Arguments are checked here
// again (the worker API checks its own), so a client that sends a bad number gets an error, never
// a loop.
//
// Ids: the worker gives each database it opens a new id (1, 2, 3, ...) and never gives one out
// again, so a request naming a closed database answers `closed` even after others were opened;
// transaction and iterator ids are positive integers the client picks, and one already in use is
// refused. A request whose op is not one of the requests below (`constructor`, `__proto__`, ...
// included) answers not_supported; one whose arguments are not an array answers
// invalid_argument; a message that is not a batch of requests, and a request without an id to
// answer, are ignored.

import { open, deleteDatabase } from './database.js';
import { unpackWrites, WRITE_SET, WRITE_SET_AT } from './codec.js';
import { SkvError, asSkvError } from './errors.js';
import {
  checkInteger, checkOptions, describe, HISTORY_OPTIONS, IDB_IMPORT_OPTIONS, MAX_BATCH_SIZE,
  SCAN_OPTIONS, DUMP_IMPORT_OPTIONS,
} from './options.js';
import { nextPacked } from './range.js';
import { historyPacked } from './transaction.js';
import { listDatabases } from './slots.js';
import { importFiles } from './import.js';
import { IndexedDBImport, importIndexedDBDump } from './idb-import.js';

/**
 * @typedef {import('./database.js').Database} Database
 * @typedef {import('./transaction.js').Transaction} Transaction
 * @typedef {import('./range.js').RangeIterator} RangeIterator
 * @typedef {{ db: number, tx: Transaction | null, error: SkvError | null, iters: Set<number> }} TxEntry
 */

/** @type {Map<number, Database>} client db id -> Database */
const dbs = new Map();
/** @type {Map<number, TxEntry>} client tx id -> its transaction, or the error that ended it */
const txs = new Map();
/** @type {Map<number, { tx: number, it: RangeIterator }>} client iterator id -> iterator */
const iters = new Map();
let nextDb = 1;
/**
 * @type {Map<number, { job: IndexedDBImport, owned: Database | null, busy: boolean }>}
 *   IndexedDB imports under way, by the id idbImportOpen gave
 */
const imports = new Map();
let nextImport = 1;

// What the client sends of importIndexedDB()'s options (the destination travels apart).
const SERVER_IDB_OPTIONS = Object.freeze({
  stores: IDB_IMPORT_OPTIONS.stores,
  batchSize: IDB_IMPORT_OPTIONS.batchSize,
  batchBytes: IDB_IMPORT_OPTIONS.batchBytes,
});
const SERVER_DUMP_OPTIONS = Object.freeze({
  batchSize: DUMP_IMPORT_OPTIONS.batchSize,
  batchBytes: DUMP_IMPORT_OPTIONS.batchBytes,
});

/**
 * The destination of an import as the client sends it: { db } (an id this worker gave) or
 * { name, openOptions }.
 * @param {unknown} target
 * @returns {{ db: Database } | { name: string, openOptions: any }}
 */
function importTarget(target) {
  if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
    const t = /** @type {Record<string, unknown>} */ (target);
    if (Object.hasOwn(t, 'db') && Object.keys(t).length === 1) {
      return { db: database(/** @type {number} */ (t.db)) };
    }
    if (typeof t.name === 'string' &&
      Object.keys(t).every((k) => k === 'name' || k === 'openOptions')) {
      return { name: t.name, openOptions: t.openOptions };
    }
  }
  throw new SkvError('invalid_argument', `the destination of an import must be { db } or ` +
    `{ name, openOptions }, not ${describe(target)}`);
}

/** @param {{ name: string, openOptions: any } | { db: Database }} target */
function wipeKey(target) {
  const o = 'openOptions' in target ? target.openOptions : undefined;
  const key = o && typeof o === 'object' ? o.key : undefined;
  if (key instanceof Uint8Array) key.fill(0);
}

/**
 * Checks that `id` is a positive integer (an id the client could have been given or chosen).
 * @param {unknown} id
 * @param {string} what
 * @returns {number}
 */
function checkId(id, what) {
  return checkInteger(id, what, 1, Number.MAX_SAFE_INTEGER);
}

/** @param {number} id */
function database(id) {
  const d = dbs.get(checkId(id, 'database id'));
  if (!d) throw new SkvError('closed', 'the database is closed');
  return d;
}

/** @param {number} id */
function transaction(id) {
  const t = txs.get(checkId(id, 'transaction id'));
  if (!t) throw new SkvError('closed', 'the transaction is finished');
  if (t.error) throw t.error;
  return /** @type {Transaction} */ (t.tx);
}

/** @param {number} id */
function iterator(id) {
  const i = iters.get(checkId(id, 'iterator id'));
  if (!i) throw new SkvError('closed', 'the iterator is closed');
  return i.it;
}

// Forgets a transaction and its iterators (the worker API closes those when it ends).
/** @param {number} id */
function forget(id) {
  const t = txs.get(id);
  if (!t) return;
  txs.delete(id);
  for (const it of t.iters) iters.delete(it);
}

/** @param {Uint8Array} packed */
function batchHeader(packed) {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  return { count: view.getUint32(0, true), done: view.getUint32(4, true) === 1 };
}

/** @type {Record<string, (...args: any[]) => any>} */
const ops = {
  /**
   * @param {string} name
   * @param {import('../types/common.js').OpenOptions} options
   */
  async open(name, options) {
    let db;
    try {
      db = await open(name, options);
    } finally {
      // The key arrived as this worker's own copy: wipe it once the engine has its own (a key
      // given as a string cannot be wiped).
      const key = options && typeof options === 'object' ? options.key : undefined;
      if (key instanceof Uint8Array) key.fill(0);
    }
    const id = nextDb++;
    dbs.set(id, db);
    return id;
  },
  /** @param {number} db */
  async close(db) {
    const d = dbs.get(checkId(db, 'database id'));
    if (!d) return;
    dbs.delete(db);
    for (const [id, t] of txs) if (t.db === db) forget(id);
    await d.close();
  },
  listDatabases() {
    return listDatabases();
  },
  /** @param {string} name */
  deleteDatabase(name) {
    return deleteDatabase(name);
  },
  /**
   * @param {string} name
   * @param {Array<[string, Uint8Array]>} files
   * @param {import('../types/common.js').ImportOptions} options
   */
  async importFiles(name, files, options) {
    try {
      await importFiles(name, files, options);
    } finally {
      // As for open(): the key arrived as this worker's own copy.
      const key = options && typeof options === 'object' ? options.key : undefined;
      if (key instanceof Uint8Array) key.fill(0);
    }
  },
  // importIndexedDB(), one batch per request: the client calls idbImportStep until the progress
  // says done (calling its progress callback in between), then idbImportClose.
  /**
   * @param {string} source
   * @param {unknown} target
   * @param {{ stores?: string[], batchSize?: number, batchBytes?: number }} options
   */
  async idbImportOpen(source, target, options) {
    const dest = importTarget(target);
    /** @type {Database | null} */
    let owned = null;
    /** @type {IndexedDBImport | null} */
    let job = null;
    try {
      const o = checkOptions(options, SERVER_IDB_OPTIONS, 'importIndexedDB');
      job = await IndexedDBImport.open(source, o);
      const db = 'db' in dest ? dest.db : (owned = await open(dest.name, dest.openOptions));
      job.attach(db);
    } catch (e) {
      if (job) job.close();
      if (owned) await owned.close();
      throw e;
    } finally {
      wipeKey(dest);
    }
    const id = nextImport++;
    imports.set(id, { job, owned, busy: false });
    return { id, progress: job.progress };
  },
  /** @param {number} id */
  async idbImportStep(id) {
    const entry = imports.get(checkId(id, 'import id'));
    if (!entry) throw new SkvError('closed', 'importIndexedDB: the import is closed');
    if (entry.busy) throw new SkvError('invalid_argument', `import ${id} is already taking a step`);
    entry.busy = true;
    try {
      return await entry.job.step();
    } finally {
      entry.busy = false;
    }
  },
  /** @param {number} id */
  async idbImportClose(id) {
    const entry = imports.get(checkId(id, 'import id'));
    if (!entry) return;
    imports.delete(id);
    entry.job.close();
    if (entry.owned) await entry.owned.close();
  },
  /**
   * @param {unknown} dump
   * @param {unknown} target
   * @param {{ batchSize?: number, batchBytes?: number }} options
   */
  async importIndexedDBDump(dump, target, options) {
    const dest = importTarget(target);
    try {
      const o = checkOptions(options, SERVER_DUMP_OPTIONS, 'importIndexedDBDump');
      if ('db' in dest) return await importIndexedDBDump(dump, dest.db, o);
      return await importIndexedDBDump(dump, dest.name, { ...o, openOptions: dest.openOptions });
    } finally {
      wipeKey(dest);
    }
  },
  /**
   * @param {number} db
   * @param {number} tx
   * @param {'readwrite' | 'readonly'} mode
   */
  begin(db, tx, mode) {
    checkId(tx, 'transaction id');
    if (txs.has(tx)) throw new SkvError('invalid_argument', `transaction id ${tx} is in use`);
    /** @type {TxEntry} */
    const entry = { db, tx: null, error: null, iters: new Set() };
    txs.set(tx, entry);
    try {
      entry.tx = database(db).begin(mode);
    } catch (e) {
      entry.error = asSkvError(e);
      throw e;
    }
  },
  // The client does not wait for its writes before it commits, so a refused write fails the
  // whole transaction: it is rolled back and every later request on it gets the same error.
  /**
   * @param {number} tx
   * @param {ArrayBuffer} packed
   */
  writes(tx, packed) {
    const t = transaction(tx);
    try {
      for (const [kind, key, value, ts] of unpackWrites(packed)) {
        if (kind === WRITE_SET) t.set(key, value);
        else if (kind === WRITE_SET_AT) t.setAt(key, value, /** @type {bigint} */ (ts));
        else t.delete(key);
      }
    } catch (e) {
      t.rollback();
      const entry = /** @type {TxEntry} */ (txs.get(tx));
      for (const it of entry.iters) iters.delete(it);
      entry.iters.clear();
      entry.tx = null;
      entry.error = asSkvError(e);
      throw e;
    }
  },
  /**
   * @param {number} tx
   * @param {Uint8Array} key
   */
  get(tx, key) {
    return transaction(tx).get(key);
  },
  /**
   * @param {number} tx
   * @param {Uint8Array} key
   */
  getAsync(tx, key) {
    return transaction(tx).getAsync(key);
  },
  /**
   * @param {number} tx
   * @param {Uint8Array} key
   * @param {bigint | number} ts
   */
  getAt(tx, key, ts) {
    return transaction(tx).getAt(key, ts);
  },
  // The packed versions (codec.js, unpackVersions).
  /**
   * @param {number} tx
   * @param {Uint8Array} key
   * @param {import('../types/common.js').HistoryOptions} options
   */
  history(tx, key, options) {
    const { as, ...rest } = checkOptions(options, HISTORY_OPTIONS, 'history');
    return historyPacked(transaction(tx), key, rest);
  },
  /**
   * @param {number} tx
   * @param {Uint8Array | string} start
   * @param {Uint8Array | string} end
   */
  count(tx, start, end) {
    return transaction(tx).count(start, end);
  },
  // Up to `limit` entries after skipping `offset`: a list of packed batches. With `at`, of the
  // database as of that timestamp (scanAt).
  /**
   * @param {number} tx
   * @param {Uint8Array | string} start
   * @param {Uint8Array | string} end
   * @param {import('../types/common.js').ScanOptions} options
   * @param {bigint | number} [at]
   */
  scan(tx, start, end, options, at) {
    const { offset, limit, as, batchSize, ...rangeOptions } =
      checkOptions(options, SCAN_OPTIONS, at === undefined ? 'scan' : 'scanAt');
    const t = transaction(tx);
    const iter = at === undefined ? t.range(start, end, rangeOptions)
      : t.rangeAt(start, end, at, rangeOptions);
    try {
      if (offset) iter.skip(offset);
      const out = [];
      let left = limit === undefined ? Infinity : limit;
      while (left > 0) {
        const packed = nextPacked(iter, Math.min(left, MAX_BATCH_SIZE), 4 << 20);
        const { count, done } = batchHeader(packed);
        out.push(packed);
        if (done) break;
        // The glue never returns an empty batch before the end; if it did, stop rather than spin.
        if (count === 0) throw new SkvError('io', 'scan: an empty batch before the end of the range');
        left -= count;
      }
      return out;
    } finally {
      iter.close();
    }
  },
  /**
   * @param {number} tx
   * @param {number} it
   * @param {Uint8Array | string} start
   * @param {Uint8Array | string} end
   * @param {import('../types/common.js').RangeOptions} options
   * @param {bigint | number} [at]  iterate the database as of this timestamp (rangeAt)
   */
  iterOpen(tx, it, start, end, options, at) {
    checkId(it, 'iterator id');
    if (iters.has(it)) throw new SkvError('invalid_argument', `iterator id ${it} is in use`);
    const t = transaction(tx);
    const iter = at === undefined ? t.range(start, end, options)
      : t.rangeAt(start, end, at, options);
    iters.set(it, { tx, it: iter });
    /** @type {TxEntry} */ (txs.get(tx)).iters.add(it);
  },
  /**
   * @param {number} it
   * @param {number} max
   */
  iterNext(it, max) {
    checkInteger(max, 'iterator batch size', 1, MAX_BATCH_SIZE);
    return nextPacked(iterator(it), max);
  },
  /**
   * @param {number} it
   * @param {number} n
   */
  iterSkip(it, n) {
    return iterator(it).skip(n);
  },
  /** @param {number} it */
  iterClose(it) {
    const i = iters.get(checkId(it, 'iterator id'));
    if (!i) return;
    iters.delete(it);
    txs.get(i.tx)?.iters.delete(it);
    i.it.close();
  },
  /** @param {number} tx */
  savepoint(tx) {
    transaction(tx).savepoint();
  },
  /** @param {number} tx */
  rollbackToSavepoint(tx) {
    transaction(tx).rollbackToSavepoint();
  },
  /** @param {number} tx */
  rollback(tx) {
    const t = txs.get(checkId(tx, 'transaction id'));
    forget(tx);
    if (t && t.tx) t.tx.rollback();
  },
  /**
   * @param {number} tx
   * @param {import('../types/common.js').CommitOptions} options
   */
  commit(tx, options) {
    const entry = txs.get(checkId(tx, 'transaction id'));
    forget(tx);
    if (!entry) throw new SkvError('closed', 'the transaction is finished');
    if (entry.error) throw entry.error;
    return /** @type {Transaction} */ (entry.tx).commit(options);
  },
  /** @param {number} db */
  flush(db) {
    return database(db).flush();
  },
  /** @param {number} db */
  compact(db) {
    return database(db).compact();
  },
  /** @param {number} db */
  collectVlogGarbage(db) {
    return database(db).collectVlogGarbage();
  },
  /** @param {number} db */
  stats(db) {
    return database(db).stats();
  },
  /** @param {number} db */
  versioning(db) {
    return database(db).versioning();
  },
  /** @param {number} db */
  exportFiles(db) {
    return database(db).exportFiles();
  },
  /**
   * @param {number} db
   * @param {string} target
   */
  checkpoint(db, target) {
    return database(db).checkpoint(target);
  },
};

/**
 * Buffers in a result, to transfer.
 * @param {unknown} x
 * @param {ArrayBuffer[]} out
 */
function transferables(x, out = []) {
  if (x instanceof Uint8Array) out.push(/** @type {ArrayBuffer} */ (x.buffer));
  else if (Array.isArray(x)) for (const y of x) transferables(y, out);
  return out;
}

/** @type {any[]} */
const pending = [];
let flushScheduled = false;

/** @param {{ id: number, ok: boolean, result?: unknown, error?: unknown }} message */
function reply(message) {
  pending.push(message);
  if (flushScheduled) return;
  flushScheduled = true;
  queueMicrotask(() => {
    flushScheduled = false;
    const batch = pending.splice(0);
    const transfer = [...new Set(batch.flatMap((m) => (m.ok ? transferables(m.result) : [])))];
    self.postMessage({ batch }, { transfer });
  });
}

/** @param {unknown} request */
function run(request) {
  if (request === null || typeof request !== 'object') return;
  const { id, op, args } = /** @type {{ id: unknown, op: unknown, args: unknown }} */ (request);
  if (typeof id !== 'number') return;
  let result;
  try {
    // An own property only: `constructor`, `__proto__`, `toString`, ... are no requests.
    const fn = typeof op === 'string' && Object.hasOwn(ops, op) ? ops[op] : undefined;
    if (!fn) throw new SkvError('not_supported', `unknown request ${describe(op)}`);
    if (!Array.isArray(args)) {
      throw new SkvError('invalid_argument', `request ${op}: the arguments must be an array, ` +
        `not ${describe(args)}`);
    }
    result = fn(...args);
  } catch (e) {
    reply({ id, ok: false, error: asSkvError(e).toJSON() });
    return;
  }
  if (result && typeof result.then === 'function') {
    result.then((/** @type {unknown} */ r) => reply({ id, ok: true, result: r }),
      (/** @type {unknown} */ e) => reply({ id, ok: false, error: asSkvError(e).toJSON() }));
  } else {
    reply({ id, ok: true, result });
  }
}

self.onmessage = (event) => {
  const batch = event.data && typeof event.data === 'object' ? event.data.batch : undefined;
  if (!Array.isArray(batch)) return;
  for (const request of batch) run(request);
};
