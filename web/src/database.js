// @ts-check
// The worker API: open(), deleteDatabase() and Database, over the wasm core. Everything here runs
// in a dedicated worker, the only place OPFS sync access handles exist (web/src/index.js is the
// main-thread client that forwards to this code through server.js).
//
// Reads and buffered writes are synchronous. Every call typed as returning a promise (open,
// deleteDatabase, set, delete, transaction, flush, compact, close, and Transaction.commit)
// reports every failure, bad arguments included, by rejecting; it never throws.

import { toBytes } from './codec.js';
import { SkvError, asSkvError, invalid } from './errors.js';
import {
  checkOptions, checkTimestamp, COMMIT_OPTIONS, HISTORY_OPTIONS, READ_OPTIONS, OPEN_OPTIONS,
} from './options.js';
import { runTransaction } from './retry.js';
import {
  SlotTable, checkName, checkOpfs, databaseDir, discardDatabase, removeDatabase,
} from './slots.js';
import { Engine } from './engine.js';
import { loadCore, openNames, takeLock } from './core.js';
import { NewDatabase } from './fresh.js';
import { Transaction, ownedRange } from './transaction.js';

/** @typedef {import('../types/common.js').Bytes} Bytes */
/** @typedef {import('../types/common.js').OpenOptions} OpenOptions */

/**
 * Opens (creating by default) database `name`. Every option is checked before anything is
 * touched; an open that fails takes back the directory it created, so a refused open leaves no
 * database behind.
 * @param {string} name
 * @param {OpenOptions} [options]
 * @returns {Promise<Database>}
 */
export async function open(name, options) {
  checkName(name);
  const o = checkOptions(options, OPEN_OPTIONS, 'open');
  checkOpfs();
  const createIfMissing = o.createIfMissing !== false;
  const reserve = o.reserveSlots ?? 24;
  if (openNames.has(name)) {
    throw new SkvError('busy', `opfs:${name}: the database is already open in this worker`);
  }
  openNames.add(name);
  /** @type {(() => void) | null} */
  let release = null;
  /** @type {SlotTable | null} */
  let table = null;
  /** @type {{ created: boolean, rootCreated: boolean } | null} */
  let made = null;
  try {
    release = await takeLock(name, o.waitForLock === true);
    const core = await loadCore();
    const found = await databaseDir(name, createIfMissing);
    if (!found) throw new SkvError('not_found', `opfs:${name}: no such database`);
    made = found;
    table = await SlotTable.open(name, found.dir, o.maxSlots ?? 0);
    if (table.handles.length === 0 && createIfMissing) await table.grow(reserve + 4);
    const { maxSlots, waitForLock, ...nativeOptions } = o;
    const engine = await Engine.open(core, name, table, release, nativeOptions, reserve);
    return new Database(engine, () => openNames.delete(name));
  } catch (e) {
    if (table) table.close();
    if (made && made.created) await discardDatabase(name, made.rootCreated);
    if (release) release();
    openNames.delete(name);
    throw asSkvError(e);
  }
}

/**
 * Removes database `name` and its files. Fails with `busy` while it is open anywhere.
 * @param {string} name
 * @returns {Promise<void>}
 */
export async function deleteDatabase(name) {
  checkName(name);
  checkOpfs();
  if (openNames.has(name)) {
    throw new SkvError('busy', `opfs:${name}: the database is open in this worker`);
  }
  const release = await takeLock(name, false);
  try {
    await removeDatabase(name);
  } finally {
    release();
  }
}

/** @param {unknown} mode */
function checkMode(mode) {
  if (mode !== 'readwrite' && mode !== 'readonly') {
    throw invalid(`mode must be 'readwrite' or 'readonly', not ${JSON.stringify(mode) ?? mode}`);
  }
  return mode;
}

export class Database {
  /** @type {Engine} */ #engine;
  /** @type {() => void} */ #onClose;

  /**
   * Made by open(); not meant to be called directly.
   * @param {Engine} engine
   * @param {() => void} onClose
   */
  constructor(engine, onClose) {
    this.#engine = engine;
    this.#onClose = onClose;
    /** @type {string} */
    this.name = engine.name;
  }

  /**
   * Starts a transaction: 'readwrite' (default) or 'readonly'.
   * @param {'readwrite' | 'readonly'} [mode]
   */
  begin(mode = 'readwrite') {
    checkMode(mode);
    this.#engine.check();
    const id = this.#engine.native.begin(mode === 'readonly');
    if (id === 0) throw this.#engine.error();
    return new Transaction(this.#engine, id, mode);
  }

  // Single-operation shortcuts, each its own transaction.

  /**
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {Bytes} key
   * @param {O} [options]
   * @returns {import('../types/common.js').Decoded<O> | undefined}
   */
  get(key, options) {
    const checked = /** @type {O} */ (checkOptions(options, READ_OPTIONS, 'get'));
    toBytes(key, 'key');
    const tx = this.begin('readonly');
    try {
      return tx.get(key, checked);
    } finally {
      tx.rollback();
    }
  }

  /**
   * @param {Bytes} key
   * @param {Bytes} value
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  async set(key, value, options) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const checked = checkOptions(options, COMMIT_OPTIONS, 'set');
    const tx = this.begin();
    try {
      tx.set(k, v);
    } catch (e) {
      tx.rollback();
      throw e;
    }
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
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const ts = checkTimestamp(timestamp, 'setAt', 1);
    const checked = checkOptions(options, COMMIT_OPTIONS, 'setAt');
    const tx = this.begin();
    try {
      tx.setAt(k, v, ts);
    } catch (e) {
      tx.rollback();
      throw e;
    }
    return tx.commit(checked);
  }

  /**
   * The value of `key` as of `timestamp`, or undefined.
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {Bytes} key
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {O} [options]
   * @returns {import('../types/common.js').Decoded<O> | undefined}
   */
  getAt(key, timestamp, options) {
    const checked = /** @type {O} */ (checkOptions(options, READ_OPTIONS, 'getAt'));
    toBytes(key, 'key');
    const ts = checkTimestamp(timestamp, 'getAt');
    const tx = this.begin('readonly');
    try {
      return tx.getAt(key, ts, checked);
    } finally {
      tx.rollback();
    }
  }

  /**
   * Every version of `key`, newest first.
   * @template {import('../types/common.js').HistoryOptions} [O={}]
   * @param {Bytes} key
   * @param {O} [options]
   * @returns {Array<import('../types/common.js').KeyVersion<import('../types/common.js').Decoded<O>>>}
   */
  history(key, options) {
    const checked = /** @type {O} */ (checkOptions(options, HISTORY_OPTIONS, 'history'));
    toBytes(key, 'key');
    const tx = this.begin('readonly');
    try {
      return tx.history(key, checked);
    } finally {
      tx.rollback();
    }
  }

  /**
   * Whether the database is versioned and its retention, as stored in it.
   * @returns {import('../types/common.js').Versioning}
   */
  versioning() {
    this.#engine.check();
    const v = this.#engine.native.versioning();
    if (v === null) throw this.#engine.error();
    return v;
  }

  /**
   * @param {Bytes} key
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  async delete(key, options) {
    const k = toBytes(key, 'key');
    const checked = checkOptions(options, COMMIT_OPTIONS, 'delete');
    const tx = this.begin();
    try {
      tx.delete(k);
    } catch (e) {
      tx.rollback();
      throw e;
    }
    return tx.commit(checked);
  }

  /**
   * @param {Bytes} [start]
   * @param {Bytes} [end]
   * @param {import('../types/common.js').ScanOptions} [options]
   */
  scan(start, end, options) {
    const tx = this.begin('readonly');
    try {
      return tx.scan(start, end, options);
    } finally {
      tx.rollback();
    }
  }

  /**
   * An iterator over [start, end) in a read-only transaction of its own, which ends when the
   * iterator does: exhausted, broken out of, closed, or failed.
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
   */
  scanAt(start, end, timestamp, options) {
    const ts = checkTimestamp(timestamp, 'scanAt');
    const tx = this.begin('readonly');
    try {
      return tx.scanAt(start, end, ts, options);
    } finally {
      tx.rollback();
    }
  }

  /**
   * As range(), over the database as it was at `timestamp`.
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
   * @returns {number}
   */
  count(start, end) {
    const tx = this.begin('readonly');
    try {
      return tx.count(start, end);
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

  /**
   * Writes the memtable to a table; settles when that table is durable.
   * @returns {Promise<void>}
   */
  async flush() {
    this.#engine.check();
    const id = this.#engine.native.flush();
    if (id === 0) throw this.#engine.error();
    return this.#engine.await(id);
  }

  /**
   * Compacts every level down. Runs to completion in this call (a maintenance operation).
   * @returns {Promise<void>}
   */
  async compact() {
    this.#engine.check();
    if (this.#engine.native.compactAll() !== 0) throw this.#engine.error();
  }

  /**
   * Rewrites the value log files whose garbage share reaches the `gcRatio` of the `valueLog`
   * option and removes the files nothing points into any more. Runs to completion in this call
   * (a maintenance operation, like compact()); does nothing on a database that never used the
   * value log.
   * @returns {Promise<void>}
   */
  async collectVlogGarbage() {
    this.#engine.check();
    if (this.#engine.native.collectVlogGarbage() !== 0) throw this.#engine.error();
  }

  /**
   * The core's counters, the pool's, and the pump's: executor tasks run between calls (WAL
   * writes, flushes, compaction steps) and the longest one, which is how long the worker was
   * kept from answering.
   * @returns {import('../types/common.js').Stats}
   */
  stats() {
    return this.#engine.stats();
  }

  /**
   * Every logical file of the database, as the native build keeps them in its directory:
   * [name, Uint8Array] pairs. Writing them into a directory gives a database `skv` opens.
   * @returns {import('../types/common.js').ExportedFile[]}
   */
  exportFiles() {
    this.#engine.check();
    const files = this.#engine.native.exportFiles();
    if (files === null) throw this.#engine.error();
    return files;
  }

  /**
   * Writes a consistent copy of this database into the new database `target` (Tree::checkpoint)
   * while this one stays open: every commit acknowledged before the call and a prefix of the
   * ones after, the same options, sealed like this one when it is encrypted. `target` must not
   * exist (invalid_argument "already exists"), be open, or be locked by another tab or worker
   * (busy); a refusal creates nothing. The target's lock is taken and its directory and slot
   * files made before the synchronous copy; on any failure they are removed again.
   * @param {string} target
   * @returns {Promise<void>}
   */
  async checkpoint(target) {
    checkName(target);
    this.#engine.check();
    checkOpfs();
    if (target === this.name) {
      throw new SkvError('invalid_argument', `opfs:${target}: already exists (it is the ` +
        'database checkpointed)');
    }
    const fresh = await NewDatabase.prepare(target, 'checkpoint');
    try {
      // The copy starts with a flush of the memtable into a new table of this database.
      await this.#engine.reserve();
      await fresh.grow(this.#engine.checkpointSlots(), 'the checkpoint');
      this.#engine.check();
      const id = fresh.register(this.#engine.core);
      const rc = this.#engine.native.checkpoint(target, id);
      const err = rc !== 0 ? this.#engine.error() : null;
      this.#engine.ranInline();
      if (err) throw err;
      fresh.finish();
    } catch (e) {
      await fresh.discard();
      throw asSkvError(e);
    }
  }

  /**
   * Waits for queued commits, closes the tree, the slot handles and the lock.
   * @returns {Promise<void>}
   */
  async close() {
    if (this.#engine.closed) return;
    try {
      await this.#engine.close();
    } finally {
      this.#onClose();
    }
  }
}
