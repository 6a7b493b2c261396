// @ts-check
// Transaction: the worker API's transaction. Reads and writes are synchronous calls into the wasm
// core; commit() queues the commit and returns a promise (engine.js groups the commits of one
// turn). Ending a transaction (commit or rollback) closes its iterators; a transaction dropped
// without being ended is rolled back once it is garbage collected.

import { SkvError } from './errors.js';
import { toBytes, toBound, decode } from './codec.js';
import {
  checkOptions, COMMIT_OPTIONS, READ_OPTIONS, RANGE_OPTIONS, SCAN_OPTIONS,
} from './options.js';
import { RangeIterator, abortRange } from './range.js';

/** @typedef {import('./engine.js').Engine} Engine */

const DURABILITY = { eventual: 0, immediate: 1 };

/** @type {(tx: Transaction, start: unknown, end: unknown, options: any) => RangeIterator} */
let ownedRangeOf;

export class Transaction {
  /** @type {Engine} */ #engine;
  /** @type {number} */ #id;
  #finished = false;
  /** @type {Set<RangeIterator>} */ #iters = new Set();

  static {
    ownedRangeOf = (tx, start, end, options) => tx.#range(start, end, options, true);
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
   * @param {unknown} start
   * @param {unknown} end
   * @param {import('../types/common.js').RangeOptions | undefined} options
   * @param {boolean} owned  the iterator ends this transaction when it closes
   */
  #range(start, end, options, owned) {
    const o = checkOptions(options, RANGE_OPTIONS, 'range');
    const s = toBound(start, 'start');
    const e = toBound(end, 'end');
    const native = this.#native();
    const id = native.iterOpen(this.#id, s, e, o.reverse === true, o.keysOnly === true);
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
    const { offset, limit, ...rangeOptions } = checkOptions(options, SCAN_OPTIONS, 'scan');
    const iter = this.range(start, end, rangeOptions);
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
    const error = new SkvError('closed', `the iterator's transaction was ${how}`);
    for (const it of [...this.#iters]) abortRange(it, error);
    this.#iters.clear();
  }
}

/**
 * For Database.range(): an iterator that rolls `tx` back when it closes.
 * @param {Transaction} tx
 * @param {unknown} start
 * @param {unknown} end
 * @param {any} options
 */
export function ownedRange(tx, start, end, options) {
  return ownedRangeOf(tx, start, end, options);
}
