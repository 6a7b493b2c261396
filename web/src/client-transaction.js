// @ts-check
// The client's Transaction: every call is a request to the worker, and writes are queued and sent
// as one packed buffer ahead of the next request (or at the end of the turn).
//
// Since nobody has to await a write, a refused write fails the whole transaction: a key or value
// of the wrong type at once, a write the engine refuses (an empty key, say) once the worker has
// seen it. The transaction is then rolled back in the worker and every later request on it,
// commit() included, rejects with that error; the write's own promise rejects with it too, but
// quietly (no unhandled-rejection report for a write nobody awaited: the commit reports it).
//
// A transaction dropped without commit() or rollback() is rolled back once it is garbage
// collected, so a forgotten one does not pin its snapshot until close().

import { SkvError, invalid, quietRejection } from './errors.js';
import {
  decode, packWrites, toBound, toUint8, unpackBatch, unpackVersions, WRITE_DELETE, WRITE_SET,
  WRITE_SET_AT,
} from './codec.js';
import {
  checkOptions, checkTimestamp, COMMIT_OPTIONS, HISTORY_OPTIONS, READ_OPTIONS, RANGE_OPTIONS,
  SCAN_OPTIONS,
} from './options.js';
import { RangeIterator, dropped } from './client-range.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {{ resolve: () => void, reject: (e: unknown) => void }} Waiter */

/**
 * @type {(tx: Transaction, start: unknown, end: unknown, options: any, at?: bigint)
 *   => RangeIterator}
 */
let ownedRangeOf;

export class Transaction {
  /** @type {Rpc} */ #rpc;
  /** @type {number} */ #id;
  /** @type {Array<[number, Uint8Array, Uint8Array | undefined, bigint | undefined]>} */
  #writes = [];
  /** @type {Waiter[]} */ #waiters = [];
  #finished = false;
  /** @type {SkvError | null} the error that failed the transaction */
  #failed = null;

  static {
    ownedRangeOf = (tx, start, end, options, at) => tx.#range(start, end, options, true, at);
  }

  /**
   * Made by Database.begin(); not meant to be called directly.
   * @param {Rpc} rpc
   * @param {number} db
   * @param {'readwrite' | 'readonly'} mode  checked
   */
  constructor(rpc, db, mode) {
    this.#rpc = rpc;
    this.#id = rpc.newId();
    /** @type {'readwrite' | 'readonly'} */
    this.mode = mode;
    rpc.post('begin', [db, this.#id, mode]);
    dropped.register(this, { rpc, op: 'rollback', id: this.#id }, this);
  }

  /** @returns {SkvError | null} why no request can be made now */
  #unusable() {
    if (this.#failed) return this.#failed;
    if (this.#finished) return new SkvError('closed', 'the transaction is finished');
    return null;
  }

  /**
   * Fails the transaction with `error`: queued writes are dropped, the worker rolls it back.
   * @param {SkvError} error
   */
  #fail(error) {
    if (this.#failed || this.#finished) return;
    this.#failed = error;
    this.#writes = [];
    for (const w of this.#waiters.splice(0)) w.reject(error);
    dropped.unregister(this);
    this.#rpc.post('rollback', [this.#id]);
  }

  /**
   * @param {number} kind  WRITE_SET, WRITE_DELETE or WRITE_SET_AT (codec.js)
   * @param {unknown} key
   * @param {unknown} value
   * @param {unknown} [timestamp]  for WRITE_SET_AT
   * @returns {Promise<void>}
   */
  #queueWrite(kind, key, value, timestamp) {
    const unusable = this.#unusable();
    // After commit() or rollback() nothing will report this write, so its promise is left loud.
    if (unusable) return this.#failed ? quietRejection(unusable) : Promise.reject(unusable);
    let k;
    let v;
    let ts;
    try {
      if (this.mode === 'readonly') {
        throw new SkvError('read_only', 'the transaction is read-only');
      }
      k = toUint8(key, 'key');
      if (kind !== WRITE_DELETE) v = toUint8(value, 'value');
      if (kind === WRITE_SET_AT) ts = checkTimestamp(timestamp, 'setAt', 1);
    } catch (e) {
      this.#fail(/** @type {SkvError} */ (e));
      return quietRejection(e);
    }
    if (this.#writes.length === 0) queueMicrotask(() => this.#sendWrites());
    this.#writes.push([kind, k, v, ts]);
    /** @type {Promise<void>} */
    const p = new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
    p.catch(() => {});
    return p;
  }

  #sendWrites() {
    if (this.#writes.length === 0) return;
    const packed = packWrites(this.#writes.splice(0));
    const waiters = this.#waiters.splice(0);
    this.#rpc.call('writes', [this.#id, packed], [packed]).then(
      () => waiters.forEach((w) => w.resolve()),
      (e) => {
        waiters.forEach((w) => w.reject(e));
        // The worker has rolled the transaction back already; the rollback request only lets it
        // forget the transaction's id.
        if (!this.#failed && !this.#finished) {
          this.#failed = e;
          dropped.unregister(this);
          this.#rpc.post('rollback', [this.#id]);
        }
      });
  }

  /**
   * @param {string} op
   * @param {unknown[]} args
   * @param {Transferable[]} [transfer]
   */
  #request(op, args, transfer) {
    const unusable = this.#unusable();
    if (unusable) return Promise.reject(unusable);
    this.#sendWrites();
    return this.#rpc.call(op, [this.#id, ...args], transfer);
  }

  /**
   * Queues a write; the promise settles when the worker has buffered it (awaiting it is optional).
   * @param {import('../types/common.js').Bytes} key
   * @param {import('../types/common.js').Bytes} value
   */
  set(key, value) {
    return this.#queueWrite(WRITE_SET, key, value);
  }

  /**
   * Queues a write stamped with `timestamp` (1 to 2^63 - 1) instead of the commit's time. A bad
   * timestamp fails the transaction like a bad key; so does a database without versioning
   * (`not_supported`, once the worker has seen the write).
   * @param {import('../types/common.js').Bytes} key
   * @param {import('../types/common.js').Bytes} value
   * @param {import('../types/common.js').Timestamp} timestamp
   */
  setAt(key, value, timestamp) {
    return this.#queueWrite(WRITE_SET_AT, key, value, timestamp);
  }

  /** @param {import('../types/common.js').Bytes} key */
  delete(key) {
    return this.#queueWrite(WRITE_DELETE, key, undefined);
  }

  /**
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {O} [options]
   * @returns {Promise<import('../types/common.js').Decoded<O> | undefined>}
   */
  async get(key, options) {
    const { as } = checkOptions(options, READ_OPTIONS, 'get');
    const k = toUint8(key, 'key');
    return /** @type {any} */ (decode(await this.#request('get', [k]), as));
  }

  /**
   * As get(); the worker runs the read as a task on the engine's executor.
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {O} [options]
   * @returns {Promise<import('../types/common.js').Decoded<O> | undefined>}
   */
  async getAsync(key, options) {
    const { as } = checkOptions(options, READ_OPTIONS, 'getAsync');
    const k = toUint8(key, 'key');
    return /** @type {any} */ (decode(await this.#request('getAsync', [k]), as));
  }

  /**
   * @template {import('../types/common.js').ReadOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {O} [options]
   * @returns {Promise<import('../types/common.js').Decoded<O> | undefined>}
   */
  async getAt(key, timestamp, options) {
    const { as } = checkOptions(options, READ_OPTIONS, 'getAt');
    const k = toUint8(key, 'key');
    const ts = checkTimestamp(timestamp, 'getAt');
    return /** @type {any} */ (decode(await this.#request('getAt', [k, ts]), as));
  }

  /**
   * @template {import('../types/common.js').HistoryOptions} [O={}]
   * @param {import('../types/common.js').Bytes} key
   * @param {O} [options]
   * @returns {Promise<Array<import('../types/common.js').KeyVersion<import('../types/common.js').Decoded<O>>>>}
   */
  async history(key, options) {
    const { as, ...rest } = checkOptions(options, HISTORY_OPTIONS, 'history');
    const k = toUint8(key, 'key');
    return unpackVersions(await this.#request('history', [k, rest]), as);
  }

  /**
   * @param {import('../types/common.js').Bytes} [start]
   * @param {import('../types/common.js').Bytes} [end]
   * @returns {Promise<number>}
   */
  async count(start, end) {
    return this.#request('count', [toBound(start, 'start'), toBound(end, 'end')]);
  }

  /**
   * @param {import('../types/common.js').Bytes} [start]
   * @param {import('../types/common.js').Bytes} [end]
   * @param {import('../types/common.js').ScanOptions} [options]
   * @returns {Promise<any[]>}
   */
  async scan(start, end, options) {
    return this.#scan(start, end, options);
  }

  /**
   * As scan(), over the database as it was at `timestamp`.
   * @param {import('../types/common.js').Bytes | undefined} start
   * @param {import('../types/common.js').Bytes | undefined} end
   * @param {import('../types/common.js').Timestamp} timestamp
   * @param {import('../types/common.js').ScanOptions} [options]
   * @returns {Promise<any[]>}
   */
  async scanAt(start, end, timestamp, options) {
    return this.#scan(start, end, options, checkTimestamp(timestamp, 'scanAt'));
  }

  /**
   * @param {unknown} start
   * @param {unknown} end
   * @param {import('../types/common.js').ScanOptions | undefined} options
   * @param {bigint} [at]
   */
  async #scan(start, end, options, at) {
    const { as, ...rest } =
      checkOptions(options, SCAN_OPTIONS, at === undefined ? 'scan' : 'scanAt');
    /** @type {unknown[]} */
    const args = [toBound(start, 'start'), toBound(end, 'end'), rest];
    if (at !== undefined) args.push(at);
    const batches = await this.#request('scan', args);
    const out = [];
    for (const b of batches) out.push(...unpackBatch(b, as).entries);
    return out;
  }

  /**
   * An async iterator over [start, end) (options: reverse, keysOnly, as, batchSize). Bad
   * arguments throw here, before anything is sent.
   * @param {import('../types/common.js').Bytes} [start]
   * @param {import('../types/common.js').Bytes} [end]
   * @param {import('../types/common.js').RangeOptions} [options]
   * @returns {RangeIterator}
   */
  range(start, end, options) {
    return this.#range(start, end, options, false);
  }

  /**
   * An async iterator over [start, end) as the database was at `timestamp`: each key with its
   * version as of then. Same options as range(); bad arguments throw here.
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
   * @param {bigint} [at]  a checked timestamp, for rangeAt()
   */
  #range(start, end, options, owned, at) {
    const { as, batchSize = 256, ...rest } =
      checkOptions(options, RANGE_OPTIONS, at === undefined ? 'range' : 'rangeAt');
    const s = toBound(start, 'start');
    const e = toBound(end, 'end');
    const itId = this.#rpc.newId();
    /** @type {unknown[]} */
    const args = [itId, s, e, rest];
    if (at !== undefined) args.push(at);
    const opened = this.#request('iterOpen', args);
    opened.catch(() => {});
    return new RangeIterator(this.#rpc, this, itId, opened, { as, batchSize },
      owned ? () => this.rollback() : null);
  }

  /** @returns {Promise<void>} */
  async savepoint() {
    return this.#request('savepoint', []);
  }

  /** @returns {Promise<void>} */
  async rollbackToSavepoint() {
    return this.#request('rollbackToSavepoint', []);
  }

  /**
   * Commits; rejects with the error of a refused write, `conflict`, or anything the commit
   * meets.
   * @param {import('../types/common.js').CommitOptions} [options]
   * @returns {Promise<void>}
   */
  async commit(options) {
    const checked = checkOptions(options, COMMIT_OPTIONS, 'commit');
    const unusable = this.#unusable();
    if (unusable) {
      this.#finished = true;
      throw unusable;
    }
    const p = this.#request('commit', [checked]);
    this.#finished = true;
    dropped.unregister(this);
    return p;
  }

  /** Rolls back (nothing happens if the transaction is already finished). */
  async rollback() {
    if (this.#finished) return;
    this.#finished = true;
    this.#writes = [];
    const closed = new SkvError('closed', 'the transaction was rolled back');
    for (const w of this.#waiters.splice(0)) w.reject(closed);
    dropped.unregister(this);
    if (this.#failed) return;
    await this.#rpc.call('rollback', [this.#id]).catch(() => {});
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
 * @param {unknown} mode
 * @returns {'readwrite' | 'readonly'}
 */
export function checkMode(mode) {
  if (mode !== 'readwrite' && mode !== 'readonly') {
    throw invalid(`mode must be 'readwrite' or 'readonly', not ${JSON.stringify(mode) ?? mode}`);
  }
  return mode;
}
