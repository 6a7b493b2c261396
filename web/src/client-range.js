// @ts-check
// The client's range iterator: an async iterator that fetches `batchSize` entries per request.
// It closes its cursor in the worker when it is exhausted, fails, or is broken out of
// (return()); one that is dropped half way is closed once it is garbage collected. While it is
// in use it keeps its transaction alive, so that transaction is not collected under it.

import { unpackBatch } from './codec.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */

/**
 * Ends what the application dropped: a transaction (rollback) or an iterator (iterClose).
 * @type {FinalizationRegistry<{ rpc: Rpc, op: 'rollback' | 'iterClose', id: number }>}
 */
export const dropped = new FinalizationRegistry(({ rpc, op, id }) => {
  if (!rpc.dead) rpc.post(op, [id]);
});

/** @type {IteratorResult<any, undefined>} */
const DONE = Object.freeze({ done: true, value: undefined });

export class RangeIterator {
  /** @type {Rpc} */ #rpc;
  /** @type {object} */ #tx;
  /** @type {number} */ #id;
  /** @type {Promise<unknown>} */ #opened;
  /** @type {'bytes' | 'string' | undefined} */ #as;
  /** @type {number} */ #batchSize;
  /** @type {any[]} */ #buffer = [];
  #at = 0;
  #done = false;
  #closed = false;
  /** @type {(() => void) | null} */ #onClose;
  /** @type {Promise<unknown>} */ #chain = Promise.resolve();

  /**
   * Made by Transaction.range(); not meant to be called directly.
   * @param {Rpc} rpc
   * @param {object} tx  the transaction, kept alive by the iterator
   * @param {number} id
   * @param {Promise<unknown>} opened  the iterOpen request
   * @param {{ as?: 'bytes' | 'string', batchSize: number }} options  checked
   * @param {(() => void) | null} onClose
   */
  constructor(rpc, tx, id, opened, options, onClose) {
    this.#rpc = rpc;
    this.#tx = tx;
    this.#id = id;
    this.#opened = opened;
    this.#as = options.as;
    this.#batchSize = options.batchSize;
    this.#onClose = onClose;
    dropped.register(this, { rpc, op: 'iterClose', id }, this);
  }

  /**
   * The next entry. Calls made before the previous one settled run in order.
   * @returns {Promise<IteratorResult<any, undefined>>}
   */
  next() {
    const p = this.#chain.then(() => this.#step());
    this.#chain = p.catch(() => {});
    return p;
  }

  /** @returns {Promise<IteratorResult<any, undefined>>} */
  async #step() {
    if (this.#closed) return DONE;
    try {
      await this.#opened;
      if (this.#at === this.#buffer.length && !this.#done) {
        const packed = await this.#rpc.call('iterNext', [this.#id, this.#batchSize]);
        const batch = unpackBatch(packed, this.#as);
        this.#buffer = batch.entries;
        this.#at = 0;
        this.#done = batch.done;
      }
    } catch (e) {
      this.#close();
      throw e;
    }
    if (this.#at === this.#buffer.length) {
      this.#close();
      return DONE;
    }
    return { done: false, value: this.#buffer[this.#at++] };
  }

  /**
   * Closes the iterator (a `for await` loop's `break` calls this).
   * @returns {Promise<IteratorResult<any, undefined>>}
   */
  async return() {
    this.#close();
    return DONE;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  #close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer = [];
    dropped.unregister(this);
    this.#rpc.post('iterClose', [this.#id]);
    const onClose = this.#onClose;
    this.#onClose = null;
    if (onClose) onClose();
    void this.#tx;
  }
}
