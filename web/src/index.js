// @ts-check
// skv on the main thread: the client. OPFS sync access handles exist only in dedicated workers,
// so open() starts a module worker running server.js and every call becomes a request to it.
// The API mirrors the worker API (worker.js) with promises:
//
//   import { open } from 'skv';
//   const db = await open('notes');
//   const tx = db.begin();
//   tx.set('note:1', 'hello');
//   await tx.commit();
//   await db.get('note:1', { as: 'string' });   // 'hello'
//   for await (const [key, value] of db.range('note:', 'note;')) { ... }
//
// Requests made in one turn of the event loop travel in one message (so commits issued together
// share one WAL write in the worker). Writes are packed into one buffer per message and
// transferred; results come back by transfer too. Every call that returns a promise reports
// every failure, bad arguments included, by rejecting with an SkvError; none throws.

import { SkvError } from './errors.js';
import { toUint8 } from './codec.js';
import {
  checkOptions, checkTimestamp, COMMIT_OPTIONS, describe, DUMP_IMPORT_OPTIONS, HISTORY_OPTIONS,
  IDB_IMPORT_OPTIONS, IMPORT_OPTIONS, OPEN_OPTIONS, READ_OPTIONS,
} from './options.js';
import { checkFiles } from './files.js';
import { runTransaction } from './retry.js';
import { checkName } from './slots.js';
import { Rpc } from './rpc.js';
import { Transaction, checkMode, ownedRange } from './client-transaction.js';

export { SkvError, ERROR_CODES, ENCRYPTION_REASONS } from './errors.js';
export { Transaction } from './client-transaction.js';
export { RangeIterator } from './client-range.js';
export {
  MARKER_KEY as INDEXEDDB_IMPORT_MARKER, encodeIndexedDBKey, decodeIndexedDBKey,
  indexedDBRecordKey, indexedDBStoreRange, splitIndexedDBKey,
} from './idb-key.js';
export { encodeIndexedDBValue, decodeIndexedDBValue } from './idb-value.js';

/** @typedef {import('../types/common.js').Bytes} Bytes */

const CLIENT_OPEN_OPTIONS = Object.freeze({
  ...OPEN_OPTIONS,
  worker: /** @type {import('./options.js').Rule} */ ({
    kind: 'custom',
    check: (w) => (typeof Worker !== 'undefined' && w instanceof Worker ? null : 'a Worker'),
  }),
});

const WORKER_RULE = CLIENT_OPEN_OPTIONS.worker;
const CLIENT_IDB_IMPORT_OPTIONS = Object.freeze({ ...IDB_IMPORT_OPTIONS, worker: WORKER_RULE });
const CLIENT_DUMP_IMPORT_OPTIONS = Object.freeze({ ...DUMP_IMPORT_OPTIONS, worker: WORKER_RULE });

/** @returns {Worker} */
function startWorker() {
  if (typeof Worker === 'undefined') {
    throw new SkvError('not_supported', 'this context has no Web Workers (skv runs in a browser)');
  }
  return new Worker(new URL('./server.js', import.meta.url), { type: 'module' });
}

// One channel per worker the application gives, so databases opened on it share the ids.
/** @type {WeakMap<Worker, Rpc>} */
const given = new WeakMap();

/**
 * Opens (creating by default) database `name` in a worker: a new one, or `options.worker`, one
 * already running server.js ('skv/server'). Every option is checked before a worker starts.
 * @param {string} name
 * @param {import('../types/index.js').ClientOpenOptions} [options]
 * @returns {Promise<Database>}
 */
export async function open(name, options) {
  checkName(name);
  const { worker, ...rest } = checkOptions(options, CLIENT_OPEN_OPTIONS, 'open');
  let rpc;
  if (worker) {
    rpc = given.get(worker);
    if (!rpc) given.set(worker, (rpc = new Rpc(worker)));
  } else {
    rpc = new Rpc(startWorker());
  }
  // A key given as bytes travels in a copy whose buffer is transferred: the worker wipes it once
  // the engine holds the key, and no copy stays here (the caller's array is the caller's).
  /** @type {Transferable[]} */
  const transfer = [];
  if (rest.key instanceof Uint8Array) {
    rest.key = new Uint8Array(rest.key);
    transfer.push(rest.key.buffer);
  }
  try {
    const id = await rpc.call('open', [name, rest], transfer);
    return new Database(rpc, id, name, !worker);
  } catch (e) {
    if (!worker) rpc.terminate();
    throw e;
  }
}

/**
 * The databases of this origin (starts a short-lived worker).
 * @returns {Promise<string[]>}
 */
export async function listDatabases() {
  return withWorker((rpc) => rpc.call('listDatabases', []));
}

/**
 * Removes a database and its files; `busy` while it is open anywhere.
 * @param {string} name
 * @returns {Promise<void>}
 */
export async function deleteDatabase(name) {
  checkName(name);
  return withWorker((rpc) => rpc.call('deleteDatabase', [name]));
}

/**
 * Makes database `name` from a set of files, the opposite of exportFiles() (starts a
 * short-lived worker). The files are checked here, then sent by structured clone (one copy, in
 * the worker, for the length of the call); the caller's arrays are left as they are. Resolves
 * when the database is durable; any failure leaves no database.
 * @param {string} name
 * @param {ReadonlyArray<readonly [string, Uint8Array | ArrayBuffer | ArrayBufferView]>} files
 * @param {import('../types/common.js').ImportOptions} [options]
 * @returns {Promise<void>}
 */
export async function importFiles(name, files, options) {
  checkName(name);
  const list = checkFiles(files, 'importFiles');
  const rest = checkOptions(options, IMPORT_OPTIONS, 'importFiles');
  /** @type {Transferable[]} */
  const transfer = [];
  if (rest.key instanceof Uint8Array) {
    rest.key = new Uint8Array(rest.key);
    transfer.push(rest.key.buffer);
  }
  return withWorker((rpc) => rpc.call('importFiles', [name, list, rest], transfer));
}

/**
 * Where an import runs: the worker of an open Database (target { db }), or, for a name, the
 * given worker or a new one (target { name, openOptions }). `owns` says whether the call
 * started the worker (and so ends it).
 * @param {unknown} into
 * @param {Worker | undefined} worker
 * @param {import('../types/common.js').OpenOptions | undefined} openOptions
 * @param {string} what
 */
function importChannel(into, worker, openOptions, what) {
  /** @type {Transferable[]} */
  const transfer = [];
  if (into instanceof Database) {
    if (worker || openOptions) {
      throw new SkvError('invalid_argument', `${what}: worker and openOptions go with a ` +
        'database name, not an open Database');
    }
    const { rpc, id } = /** @type {() => { rpc: Rpc, id: number }} */ (channels.get(into))();
    return { rpc, owns: false, target: { db: id }, transfer };
  }
  if (typeof into !== 'string') {
    throw new SkvError('invalid_argument', `${what}: the destination must be a database name ` +
      `or an open Database, not ${describe(into)}`);
  }
  checkName(into);
  const o = openOptions ? { ...openOptions } : undefined;
  if (o && o.key instanceof Uint8Array) {
    o.key = new Uint8Array(o.key);
    transfer.push(o.key.buffer);
  }
  let rpc;
  if (worker) {
    rpc = given.get(worker);
    if (!rpc) given.set(worker, (rpc = new Rpc(worker)));
  } else {
    rpc = new Rpc(startWorker());
  }
  return { rpc, owns: !worker, target: { name: into, openOptions: o }, transfer };
}

/**
 * Imports IndexedDB database `source` into an skv database (docs/indexeddb.md). The reading
 * runs in the worker that holds the destination (IndexedDB is available there), one batch per
 * request; `progress` runs here after each committed batch.
 * @param {string} source
 * @param {import('../types/index.js').IndexedDBImportOptions} options
 * @returns {Promise<import('../types/common.js').IndexedDBImportProgress>}
 */
export async function importIndexedDB(source, options) {
  const o = checkOptions(options, CLIENT_IDB_IMPORT_OPTIONS, 'importIndexedDB');
  if (typeof source !== 'string') {
    throw new SkvError('invalid_argument', 'importIndexedDB: the source must be the name of ' +
      `an IndexedDB database, not ${describe(source)}`);
  }
  if (o.into === undefined) {
    throw new SkvError('invalid_argument', 'importIndexedDB: option into (the destination) ' +
      'is required');
  }
  const { into, worker, openOptions, progress, ...rest } = o;
  const { rpc, owns, target, transfer } = importChannel(into, worker, openOptions,
    'importIndexedDB');
  try {
    const opened = await rpc.call('idbImportOpen', [source, target, rest], transfer);
    try {
      let p = opened.progress;
      while (!p.done) {
        p = await rpc.call('idbImportStep', [opened.id]);
        if (progress) await progress(p);
      }
      return p;
    } finally {
      if (!rpc.dead) await rpc.call('idbImportClose', [opened.id]).catch(() => {});
    }
  } finally {
    if (owns) rpc.terminate();
  }
}

/**
 * Imports an INDXDB01 dump (bytes or a Blob) into `into`, a database name or an open Database
 * (docs/indexeddb.md). Bytes travel to the worker as a copy; a Blob as a handle (the worker
 * reads it in windows). The worker checks the whole dump before it opens or writes anything.
 * @param {unknown} dump
 * @param {unknown} into  a database name or a Database (checked here)
 * @param {import('../types/index.js').ClientDumpImportOptions} [options]
 * @returns {Promise<import('../types/common.js').DumpImportResult>}
 */
export async function importIndexedDBDump(dump, into, options) {
  const { worker, openOptions, ...rest } =
    checkOptions(options, CLIENT_DUMP_IMPORT_OPTIONS, 'importIndexedDBDump');
  /** @type {unknown} */
  let sent;
  if (typeof Blob !== 'undefined' && dump instanceof Blob) sent = dump;
  else if (dump instanceof ArrayBuffer || ArrayBuffer.isView(dump)) sent = toUint8(dump, 'dump');
  else {
    throw new SkvError('invalid_argument', 'importIndexedDBDump: the dump must be a ' +
      `Uint8Array, an ArrayBuffer (or view) or a Blob, not ${describe(dump)}`);
  }
  const { rpc, owns, target, transfer } = importChannel(into, worker, openOptions,
    'importIndexedDBDump');
  try {
    return await rpc.call('importIndexedDBDump', [sent, target, rest], transfer);
  } finally {
    if (owns) rpc.terminate();
  }
}

/**
 * @template T
 * @param {(rpc: Rpc) => Promise<T>} fn
 */
async function withWorker(fn) {
  const rpc = new Rpc(startWorker());
  try {
    return await fn(rpc);
  } finally {
    rpc.terminate();
  }
}

// The channel of each client Database, for the imports that run in its worker (a function, so
// that it can check the handle is still open).
/** @type {WeakMap<Database, () => { rpc: Rpc, id: number }>} */
const channels = new WeakMap();

// A Database answers `closed` to every call once close() has been called: synchronous calls
// (begin, range) throw it, the others reject with it. The worker never hands the id of a closed
// database out again, so a closed handle cannot reach a database opened after it on a shared
// worker either.
export class Database {
  /** @type {Rpc} */ #rpc;
  /** @type {number} */ #id;
  /** @type {boolean} */ #ownsWorker;
  #closed = false;

  /**
   * Made by open(); not meant to be called directly.
   * @param {Rpc} rpc
   * @param {number} id
   * @param {string} name
   * @param {boolean} ownsWorker
   */
  constructor(rpc, id, name, ownsWorker) {
    this.#rpc = rpc;
    this.#id = id;
    this.#ownsWorker = ownsWorker;
    /** @type {string} */
    this.name = name;
    channels.set(this, () => {
      this.#check();
      return { rpc: this.#rpc, id: this.#id };
    });
  }

  /**
   * Starts a transaction: 'readwrite' (default) or 'readonly'. Returns at once; the worker
   * begins it with the first request. A bad mode throws invalid_argument.
   * @param {'readwrite' | 'readonly'} [mode]
   * @returns {Transaction}
   */
  begin(mode = 'readwrite') {
    checkMode(mode);
    this.#check();
    return new Transaction(this.#rpc, this.#id, mode);
  }

  // Throws `closed` once close() has been called.
  #check() {
    if (this.#closed) throw new SkvError('closed', `opfs:${this.name}: the database is closed`);
  }

  /**
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {Bytes} key
   * @param {O} [options]
   * @returns {Promise<import('../types/common.js').Decoded<O> | undefined>}
   */
  async get(key, options) {
    const checked = /** @type {O} */ (checkOptions(options, READ_OPTIONS, 'get'));
    const k = toUint8(key, 'key');
    const tx = this.begin('readonly');
    try {
      return await tx.get(k, checked);
    } finally {
      tx.rollback();
    }
  }

  /**
   * One write in a transaction of its own. A bad key, value or option rejects before anything
   * is sent.
   * @param {Bytes} key
   * @param {Bytes} value
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  async set(key, value, options) {
    const k = toUint8(key, 'key');
    const v = toUint8(value, 'value');
    const checked = checkOptions(options, COMMIT_OPTIONS, 'set');
    const tx = this.begin();
    tx.set(k, v);
    return tx.commit(checked);
  }

  /**
   * One write stamped with `timestamp` (1 to 2^63 - 1), in a transaction of its own.
   * @param {Bytes} key
   * @param {Bytes} value
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  async setAt(key, value, timestamp, options) {
    const k = toUint8(key, 'key');
    const v = toUint8(value, 'value');
    const ts = checkTimestamp(timestamp, 'setAt', 1);
    const checked = checkOptions(options, COMMIT_OPTIONS, 'setAt');
    const tx = this.begin();
    tx.setAt(k, v, ts);
    return tx.commit(checked);
  }

  /**
   * The value of `key` as of `timestamp`, or undefined.
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {Bytes} key
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {O} [options]
   * @returns {Promise<import('../types/common.js').Decoded<O> | undefined>}
   */
  async getAt(key, timestamp, options) {
    const checked = /** @type {O} */ (checkOptions(options, READ_OPTIONS, 'getAt'));
    const k = toUint8(key, 'key');
    const ts = checkTimestamp(timestamp, 'getAt');
    const tx = this.begin('readonly');
    try {
      return await tx.getAt(k, ts, checked);
    } finally {
      tx.rollback();
    }
  }

  /**
   * Every version of `key`, newest first.
   * @template {import('../types/common.js').HistoryOptions} [O={}]
   * @param {Bytes} key
   * @param {O} [options]
   * @returns {Promise<Array<import('../types/common.js').KeyVersion<import('../types/common.js').Decoded<O>>>>}
   */
  async history(key, options) {
    const checked = /** @type {O} */ (checkOptions(options, HISTORY_OPTIONS, 'history'));
    const k = toUint8(key, 'key');
    const tx = this.begin('readonly');
    try {
      return await tx.history(k, checked);
    } finally {
      tx.rollback();
    }
  }

  /**
   * Whether the database is versioned and its retention, as stored in it.
   * @returns {Promise<import('../types/common.js').Versioning>}
   */
  async versioning() {
    this.#check();
    return this.#rpc.call('versioning', [this.#id]);
  }

  /**
   * @param {Bytes} key
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  async delete(key, options) {
    const k = toUint8(key, 'key');
    const checked = checkOptions(options, COMMIT_OPTIONS, 'delete');
    const tx = this.begin();
    tx.delete(k);
    return tx.commit(checked);
  }

  /**
   * @param {Bytes} [start]
   * @param {Bytes} [end]
   * @param {import('../types/common.js').ScanOptions} [options]
   * @returns {Promise<any[]>}
   */
  async scan(start, end, options) {
    const tx = this.begin('readonly');
    try {
      return await tx.scan(start, end, options);
    } finally {
      tx.rollback();
    }
  }

  /**
   * An async iterator over [start, end) in a read-only transaction of its own, which ends when
   * the iteration does: exhausted, broken out of, or failed. Bad arguments throw here.
   * @param {Bytes} [start]
   * @param {Bytes} [end]
   * @param {import('../types/common.js').RangeOptions} [options]
   */
  range(start, end, options) {
    const tx = this.begin('readonly');
    try {
      return ownedRange(tx, start, end, options);
    } catch (e) {
      tx.rollback();
      throw e;
    }
  }

  /**
   * As scan(), over the database as it was at `timestamp`.
   * @param {Bytes | undefined} start
   * @param {Bytes | undefined} end
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {import('../types/common.js').ScanOptions} [options]
   * @returns {Promise<any[]>}
   */
  async scanAt(start, end, timestamp, options) {
    const ts = checkTimestamp(timestamp, 'scanAt');
    const tx = this.begin('readonly');
    try {
      return await tx.scanAt(start, end, ts, options);
    } finally {
      tx.rollback();
    }
  }

  /**
   * As range(), over the database as it was at `timestamp`. Bad arguments throw here.
   * @param {Bytes | undefined} start
   * @param {Bytes | undefined} end
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {import('../types/common.js').RangeOptions} [options]
   */
  rangeAt(start, end, timestamp, options) {
    const ts = checkTimestamp(timestamp, 'rangeAt');
    const tx = this.begin('readonly');
    try {
      return ownedRange(tx, start, end, options, ts);
    } catch (e) {
      tx.rollback();
      throw e;
    }
  }

  /**
   * @param {Bytes} [start]
   * @param {Bytes} [end]
   * @returns {Promise<number>}
   */
  async count(start, end) {
    const tx = this.begin('readonly');
    try {
      return await tx.count(start, end);
    } finally {
      tx.rollback();
    }
  }

  /**
   * Runs `fn` in a read-write transaction and commits it, again on conflict (retry.js).
   * @template T
   * @param {(tx: Transaction) => T | PromiseLike<T>} fn
   * @param {import('../types/common.js').TransactionOptions} [options]
   * @returns {Promise<Awaited<T>>}
   */
  async transaction(fn, options) {
    return runTransaction(() => this.begin(), fn, options);
  }

  /** @returns {Promise<void>} */
  async flush() {
    this.#check();
    return this.#rpc.call('flush', [this.#id]);
  }

  /** @returns {Promise<void>} */
  async compact() {
    this.#check();
    return this.#rpc.call('compact', [this.#id]);
  }

  /** @returns {Promise<void>} */
  async collectVlogGarbage() {
    this.#check();
    return this.#rpc.call('collectVlogGarbage', [this.#id]);
  }

  /** @returns {Promise<import('../types/common.js').Stats>} */
  async stats() {
    this.#check();
    return this.#rpc.call('stats', [this.#id]);
  }

  /** @returns {Promise<import('../types/common.js').ExportedFile[]>} */
  async exportFiles() {
    this.#check();
    return this.#rpc.call('exportFiles', [this.#id]);
  }

  /**
   * Writes a consistent copy of this database into the new database `target` (see the worker
   * API's checkpoint()).
   * @param {string} target
   * @returns {Promise<void>}
   */
  async checkpoint(target) {
    checkName(target);
    this.#check();
    return this.#rpc.call('checkpoint', [this.#id, target]);
  }

  /**
   * Closes the database and stops the worker the client started. From the call on, every other
   * call answers `closed`; closing again does nothing.
   * @returns {Promise<void>}
   */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#rpc.dead) return;
    try {
      await this.#rpc.call('close', [this.#id]);
    } finally {
      if (this.#ownsWorker) this.#rpc.terminate();
    }
  }
}
