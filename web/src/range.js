// @ts-check
// RangeIterator: the worker API's iterator over [start, end) of a transaction's view, both a
// synchronous and an asynchronous iterator. It fetches entries in packed batches (codec.js) of
// `batchSize` and closes its wasm cursor when it is exhausted, when a loop breaks out of it
// (return()), when close() is called, or when its transaction ends. Once closed by its own end
// or by the application, next() reports done; once closed because its transaction or database
// ended, next() throws `closed`, so a loop never ends early without saying so.

import { SkvError } from './errors.js';
import { unpackBatch } from './codec.js';
import { checkInteger } from './options.js';

/** @typedef {import('./engine.js').Engine} Engine */

/** @type {(it: RangeIterator, max: number, maxBytes: number) => Uint8Array} */
let packedOf;
/** @type {(it: RangeIterator, error: SkvError) => void} */
let abortOf;

export class RangeIterator {
  /** @type {Engine} */ #engine;
  /** @type {number} */ #id;
  /** @type {'bytes' | 'string' | undefined} */ #as;
  /** @type {number} */ #batchSize;
  /** @type {any[]} */ #buffer = [];
  #at = 0;
  #done = false;
  #closed = false;
  /** @type {SkvError | null} why the iterator was ended for the application */
  #ended = null;
  /** @type {(() => void) | null} */ #onClose;

  static {
    packedOf = (it, max, maxBytes) => it.#nextPacked(max, maxBytes);
    abortOf = (it, error) => it.#abort(error);
  }

  /**
   * Made by Transaction.range(); not meant to be called directly.
   * @param {Engine} engine
   * @param {number} id  the wasm cursor
   * @param {{ as?: 'bytes' | 'string', batchSize?: number }} options  checked
   * @param {() => void} onClose  called once, when the iterator closes
   */
  constructor(engine, id, options, onClose) {
    this.#engine = engine;
    this.#id = id;
    this.#as = options.as;
    this.#batchSize = options.batchSize ?? 256;
    this.#onClose = onClose;
    engine.dropped.register(this, { kind: 'iter', id }, this);
  }

  /**
   * The next up to `max` entries (about `maxBytes` at most), packed as codec.js describes.
   * @param {number} max
   * @param {number} maxBytes
   */
  #nextPacked(max, maxBytes = 1 << 20) {
    this.#checkOpen();
    this.#engine.check();
    const packed = this.#engine.native.iterNext(this.#id, max, maxBytes);
    if (packed === null) throw this.#engine.error();
    return packed;
  }

  #checkOpen() {
    if (this.#ended) throw this.#ended;
    if (this.#closed) throw new SkvError('closed', 'the iterator is closed');
  }

  /** @param {number} max */
  #fill(max) {
    const { entries, done } = unpackBatch(this.#nextPacked(max), this.#as);
    this.#buffer = entries;
    this.#at = 0;
    this.#done = done;
  }

  /**
   * Skips up to `n` entries; returns how many.
   * @param {number} n  a non-negative integer
   */
  skip(n) {
    checkInteger(n, 'skip: the count', 0, Number.MAX_SAFE_INTEGER);
    this.#checkOpen();
    let skipped = Math.min(n, this.#buffer.length - this.#at);
    this.#at += skipped;
    if (skipped < n && !this.#done) {
      this.#engine.check();
      const more = this.#engine.native.iterSkip(this.#id, n - skipped);
      if (more < 0) throw this.#engine.error();
      skipped += more;
    }
    return skipped;
  }

  /**
   * The next up to `n` entries as an array (`n`: a non-negative integer or Infinity).
   * @param {number} n
   */
  take(n) {
    if (n !== Infinity) checkInteger(n, 'take: the count', 0, Number.MAX_SAFE_INTEGER);
    const out = [];
    while (out.length < n) {
      if (this.#at === this.#buffer.length) {
        if (this.#done) break;
        const want = n - out.length;
        this.#fill(Number.isFinite(want) ? Math.max(1, Math.min(want, 4096)) : 1024);
        continue;
      }
      out.push(this.#buffer[this.#at++]);
    }
    return out;
  }

  /** @returns {IteratorResult<any, undefined>} */
  next() {
    if (this.#ended) throw this.#ended;
    if (this.#closed) return { done: true, value: undefined };
    try {
      if (this.#at === this.#buffer.length && !this.#done) this.#fill(this.#batchSize);
    } catch (e) {
      this.close();
      throw e;
    }
    if (this.#at === this.#buffer.length) {
      this.close();
      return { done: true, value: undefined };
    }
    return { done: false, value: this.#buffer[this.#at++] };
  }

  /** Closes the iterator (a loop's `break` calls this). */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer = [];
    this.#engine.dropped.unregister(this);
    if (!this.#engine.closed) this.#engine.native.iterClose(this.#id);
    const onClose = this.#onClose;
    this.#onClose = null;
    if (onClose) onClose();
  }

  /** @param {SkvError} error */
  #abort(error) {
    if (this.#closed) return;
    this.#ended = error;
    this.close();
  }

  /** @returns {IteratorResult<any, undefined>} */
  return() {
    this.close();
    return { done: true, value: undefined };
  }

  [Symbol.iterator]() {
    return this;
  }

  /** @returns {AsyncIterableIterator<any>} */
  [Symbol.asyncIterator]() {
    const self = this;
    return {
      next: () => Promise.resolve().then(() => self.next()),
      return: () => Promise.resolve(self.return()),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}

/**
 * For the worker script (server.js): the next packed batch, to transfer as it is.
 * @param {RangeIterator} it
 * @param {number} max
 * @param {number} [maxBytes]
 */
export function nextPacked(it, max, maxBytes = 1 << 20) {
  return packedOf(it, max, maxBytes);
}

/**
 * For Transaction: ends an iterator because its transaction ended; its next() then throws
 * `error`.
 * @param {RangeIterator} it
 * @param {SkvError} error
 */
export function abortRange(it, error) {
  abortOf(it, error);
}
