// @ts-check
// Transaction: the worker API's transaction. Reads and writes are synchronous calls into the wasm
// core; commit() queues the commit and returns a promise (engine.js groups the commits of one
// turn). Ending a transaction (commit or rollback) closes its iterators; a transaction dropped
// without being ended is rolled back once it is garbage collected.
//
// Versioned calls (setAt, getAt, history, rangeAt, scanAt) take timestamps in nanoseconds since
// the Unix epoch, as a BigInt (or a Number that is a safe integer), and return them as BigInts;
// on a database opened without versioning they throw `not_supported`.

import { SkvError } from './errors.js';
import { toBytes, toBound, decode, unpackVersions } from './codec.js';
import {
  checkOptions, checkTimestamp, COMMIT_OPTIONS, HISTORY_OPTIONS, READ_OPTIONS, RANGE_OPTIONS,
  SCAN_OPTIONS,
} from './options.js';
import { RangeIterator, abortRange } from './range.js';

/** @typedef {import('./engine.js').Engine} Engine */

const DURABILITY = { eventual: 0, immediate: 1 };

/**
 * @type {(tx: Transaction, start: unknown, end: unknown, options: any, at?: bigint)
 *   => RangeIterator}
 */
let ownedRangeOf;
/** @type {(tx: Transaction, key: unknown, options: any) => Uint8Array} */
let historyPackedOf;

export class Transaction {
  /** @type {Engine} */ #engine;
  /** @type {number} */ #id;
  #finished = false;
  /** @type {Set<RangeIterator>} */ #iters = new Set();

  static {
    ownedRangeOf = (tx, start, end, options, at) => tx.#range(start, end, options, true, at);
    historyPackedOf = (tx, key, options) => tx.#historyPacked(key, options);
  }

  /**
   * Made by Database.begin(); not meant to be called directly.
   * @param {Engine} engine
   * @param {number} id  the wasm transaction
   * @param {'readwrite' | 'readonly'} mode
   */
  constructor(engine, id, mode) {
    this.#engine = engine;
    this.#id = id;
    /** @type {'readwrite' | 'readonly'} */
    this.mode = mode;
    engine.dropped.register(this, { kind: 'txn', id }, this);
  }

  #native() {
    if (this.#finished) throw new SkvError('closed', 'the transaction is finished');
    this.#engine.check();
    return this.#engine.native;
  }

  /** @param {number} rc */
  #status(rc) {
    if (rc !== 0) throw this.#engine.error();
  }

  /**
   * @param {import('../types/common.js').Bytes} key
   * @param {import('../types/common.js').Bytes} value
   */
  set(key, value) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    this.#status(this.#native().set(this.#id, k, v));
  }

  /** @param {import('../types/common.js').Bytes} key */
  delete(key) {
    const k = toBytes(key, 'key');
    this.#status(this.#native().del(this.#id, k));
  }

  /**
   * The value of `key`, or undefined. { as: 'string' } decodes it as UTF-8.
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {O} [options]
   * @returns {import('../types/common.js').Decoded<O> | undefined}
   */
  get(key, options) {
    const { as } = checkOptions(options, READ_OPTIONS, 'get');
    const k = toBytes(key, 'key');
    const v = this.#native().get(this.#id, k);
    if (v === null) throw this.#engine.error();
    return /** @type {any} */ (decode(v, as));
  }

  /**
   * As get(), with the read done as a task on the engine's executor (Transaction::get_async):
   * the promise settles on a later turn, with the same value get() gives (of this transaction's
   * snapshot and its own writes made before the call). Never throws.
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {O} [options]
   * @returns {Promise<import('../types/common.js').Decoded<O> | undefined>}
   */
  getAsync(key, options) {
    let id;
    let as;
    try {
      ({ as } = checkOptions(options, READ_OPTIONS, 'getAsync'));
      const k = toBytes(key, 'key');
      const native = this.#native();
      id = native.getAsync(this.#id, k);
      if (id === 0) throw this.#engine.error();
    } catch (e) {
      return Promise.reject(e);
    }
    const engine = this.#engine;
    return engine.await(id).then(() => {
      const v = engine.closed ? null : engine.native.takeValue(id);
      if (v === null) throw new SkvError('closed', 'the database was closed before the read finished');
      return /** @type {any} */ (decode(v, as));
    });
  }

  /**
   * Writes `value` under `key` stamped with `timestamp` (1 to 2^63 - 1) instead of the commit's
   * time; a time in the past is allowed. A later write of the same key in this transaction
   * replaces this one, timestamp included.
   * @param {import('../types/common.js').Bytes} key
   * @param {import('../types/common.js').Bytes} value
   * @param {import('../types/common.js').Timestamp} timestamp
   */
  setAt(key, value, timestamp) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const ts = checkTimestamp(timestamp, 'setAt', 1);
    this.#status(this.#native().setAt(this.#id, k, v, ts));
  }

  /**
   * The value of `key` as of `timestamp` (its version with the newest timestamp at or before
   * it), or undefined if it had none then. Sees the committed versions of this transaction's
   * snapshot, not its own writes.
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {O} [options]
   * @returns {import('../types/common.js').Decoded<O> | undefined}
   */
  getAt(key, timestamp, options) {
    const { as } = checkOptions(options, READ_OPTIONS, 'getAt');
    const k = toBytes(key, 'key');
    const ts = checkTimestamp(timestamp, 'getAt');
    const v = this.#native().getAt(this.#id, k, ts);
    if (v === null) throw this.#engine.error();
    return /** @type {any} */ (decode(v, as));
  }

  /**
   * Every version of `key`, newest first: { timestamp, value, tombstone }. Options:
   * includeTombstones (deletes too, with value undefined), limit, as.
   * @template {import('../types/common.js').HistoryOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {O} [options]
   * @returns {Array<import('../types/common.js').KeyVersion<import('../types/common.js').Decoded<O>>>}
   */
  history(key, options) {
    // Checked once here: what #historyPacked checks again is the plain copy.
    const o = checkOptions(options, HISTORY_OPTIONS, 'history');
    return unpackVersions(this.#historyPacked(key, o), o.as);
  }

  /**
   * @param {unknown} key
   * @param {import('../types/common.js').HistoryOptions | undefined} options
   */
  #historyPacked(key, options) {
    const { includeTombstones, limit } = checkOptions(options, HISTORY_OPTIONS, 'history');
    const k = toBytes(key, 'key');
    const packed = this.#native().history(this.#id, k, includeTombstones === true,
      limit === undefined ? Infinity : limit);
    if (packed === null) throw this.#engine.error();
    return packed;
  }

  /**
   * The number of keys in [start, end) (either bound may be omitted).
   * @param {import('../types/common.js').Bytes} [start]
   * @param {import('../types/common.js').Bytes} [end]
   * @returns {number}
   */
  count(start, end) {
    const s = toBound(start, 'start');
    const e = toBound(end, 'end');
    const n = this.#native().count(this.#id, s, e);
    if (n < 0) throw this.#engine.error();
    return n;
  }

  /**
   * An iterator over [start, end): for (const [k, v] of tx.range(...)) or for await. Options:
   * reverse, keysOnly (yields keys, never reads values), as: 'string', batchSize.
   * @param {import('../types/common.js').Bytes} [start]
   * @param {import('../types/common.js').Bytes} [end]
   * @param {import('../types/common.js').RangeOptions} [options]
   * @returns {RangeIterator}
   */
  range(start, end, options) {
    return this.#range(start, end, options, false);
  }

  /**
   * An iterator over [start, end) as the database was at `timestamp`: each key with its version
   * as of then, skipping keys absent then. Same options as range().
   * @param {import('../types/common.js').Bytes | undefined} start
   * @param {import('../types/common.js').Bytes | undefined} end
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {import('../types/common.js').RangeOptions} [options]
   * @returns {RangeIterator}
   */
  rangeAt(start, end, timestamp, options) {
    return this.#range(start, end, options, false, checkTimestamp(timestamp, 'rangeAt'));
  }

  /**
   * @param {unknown} start
   * @param {unknown} end
   * @param {import('../types/common.js').RangeOptions | undefined} options
   * @param {boolean} owned  the iterator ends this transaction when it closes
   * @param {bigint} [at]  iterate the database as of this timestamp (checked)
   */
  #range(start, end, options, owned, at) {
    const what = at === undefined ? 'range' : 'rangeAt';
    const o = checkOptions(options, RANGE_OPTIONS, what);
    const s = toBound(start, 'start');
    const e = toBound(end, 'end');
    const native = this.#native();
    const reverse = o.reverse === true;
    const keysOnly = o.keysOnly === true;
    const id = at === undefined ? native.iterOpen(this.#id, s, e, reverse, keysOnly)
      : native.iterOpenAt(this.#id, s, e, at, reverse, keysOnly);
    if (id === 0) throw this.#engine.error();
    const it = new RangeIterator(this.#engine, id, o, () => {
      this.#iters.delete(it);
      if (owned) this.rollback();
    });
    this.#iters.add(it);
    return it;
  }

  /**
   * Up to `limit` entries of [start, end) after skipping `offset`, as an array: [key, value]
   * pairs, or keys with keysOnly.
   * @param {import('../types/common.js').Bytes} [start]
   * @param {import('../types/common.js').Bytes} [end]
   * @param {import('../types/common.js').ScanOptions} [options]
   * @returns {any[]}
   */
  scan(start, end, options) {
    return this.#scan(start, end, options);
  }

  /**
   * As scan(), over the database as it was at `timestamp` (see rangeAt()).
   * @param {import('../types/common.js').Bytes | undefined} start
   * @param {import('../types/common.js').Bytes | undefined} end
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {import('../types/common.js').ScanOptions} [options]
   * @returns {any[]}
   */
  scanAt(start, end, timestamp, options) {
    return this.#scan(start, end, options, checkTimestamp(timestamp, 'scanAt'));
  }

  /**
   * @param {unknown} start
   * @param {unknown} end
   * @param {import('../types/common.js').ScanOptions | undefined} options
   * @param {bigint} [at]
   */
  #scan(start, end, options, at) {
    const { offset, limit, ...rangeOptions } =
      checkOptions(options, SCAN_OPTIONS, at === undefined ? 'scan' : 'scanAt');
    const iter = this.#range(start, end, rangeOptions, false, at);
    try {
      if (offset) iter.skip(offset);
      return iter.take(limit === undefined ? Infinity : limit);
    } finally {
      iter.close();
    }
  }

  savepoint() {
    this.#status(this.#native().savepoint(this.#id));
  }

  rollbackToSavepoint() {
    this.#status(this.#native().rollbackToSavepoint(this.#id));
  }

  /**
   * Settles once the writes are visible (and durable, for durability 'immediate'); rejects with
   * SkvError('conflict') if another transaction wrote one of the same keys first. Never throws.
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  commit(options) {
    let id;
    try {
      const { durability } = checkOptions(options, COMMIT_OPTIONS, 'commit');
      const native = this.#native();
      this.#end('committed');
      id = native.commit(this.#id, durability === undefined ? -1 : DURABILITY[durability]);
      if (id === 0) throw this.#engine.error();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#engine.await(id);
  }

  rollback() {
    if (this.#finished) return;
    this.#end('rolled back');
    if (!this.#engine.closed) this.#engine.native.rollback(this.#id);
  }

  /** @param {string} how */
  #end(how) {
    this.#finished = true;
    this.#engine.dropped.unregister(this);
    // Most transactions end with no iterator open; an Error (and its stack) is made only for
    // the iterators it ends.
    if (this.#iters.size === 0) return;
    const error = new SkvError('closed', `the iterator's transaction was ${how}`);
    for (const it of [...this.#iters]) abortRange(it, error);
    this.#iters.clear();
  }
}

/**
 * For Database.range() and rangeAt(): an iterator that rolls `tx` back when it closes.
 * @param {Transaction} tx
 * @param {unknown} start
 * @param {unknown} end
 * @param {any} options
 * @param {bigint} [at]  a checked timestamp, for rangeAt()
 */
export function ownedRange(tx, start, end, options, at) {
  return ownedRangeOf(tx, start, end, options, at);
}

/**
 * For the worker script (server.js): history() as the packed buffer, to transfer as it is.
 * @param {Transaction} tx
 * @param {unknown} key
 * @param {any} options
 */
export function historyPacked(tx, key, options) {
  return historyPackedOf(tx, key, options);
}
