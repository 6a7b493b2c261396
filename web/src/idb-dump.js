// @ts-check
// The INDXDB01 dump file (docs/indexeddb.md, "Dump files"): records copied out of IndexedDB as
// raw bytes, big-endian:
//
//   dump   = "INDXDB01" count:u32 record{count}       nothing after the last record
//   record = keyLength:u32 key:byte{keyLength} valueLength:u32 value:byte{valueLength}
//
// DumpReader reads one from bytes or a Blob in windows (never the whole Blob at once). check()
// walks the whole file and throws the first thing wrong with it, by name (reason bad_magic,
// count_mismatch, truncated, trailing_bytes, key_too_large, invalid_key, value_too_large), so the
// importer can refuse a bad file before it writes anything; records() then yields the records.

import { importError, MAX_KEY_BYTES, MAX_VALUE_BYTES } from './idb-key.js';

export const DUMP_MAGIC = 'INDXDB01';
const MAGIC = new TextEncoder().encode(DUMP_MAGIC);
const HEADER = 12;
const WINDOW = 1 << 20;

/** @typedef {{ size: number, read: (at: number, n: number) => Promise<Uint8Array> | Uint8Array }} Source */

/**
 * A source over bytes or a Blob; null for anything else.
 * @param {unknown} x
 * @returns {Source | null}
 */
export function dumpSource(x) {
  if (typeof Blob !== 'undefined' && x instanceof Blob) {
    return {
      size: x.size,
      read: async (at, n) => new Uint8Array(await x.slice(at, at + n).arrayBuffer()),
    };
  }
  /** @type {Uint8Array | null} */
  let b = null;
  if (x instanceof Uint8Array) b = x;
  else if (x instanceof ArrayBuffer) b = new Uint8Array(x);
  else if (ArrayBuffer.isView(x)) b = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (!b) return null;
  const bytes = b;
  return { size: bytes.length, read: (at, n) => bytes.subarray(at, at + n) };
}

export class DumpReader {
  /** @param {Source} source */
  constructor(source) {
    this.source = source;
    this.pos = 0;
    /** @type {Uint8Array} */
    this.window = new Uint8Array(0);
    this.windowAt = 0;
    this.count = 0;
  }

  /** @param {number} n */
  async take(n) {
    if (n > this.source.size - this.pos) {
      throw importError('truncated', `the dump ends at byte ${this.source.size}, inside a ` +
        `record (${n} bytes needed at ${this.pos})`);
    }
    const off = this.pos - this.windowAt;
    if (off < 0 || off + n > this.window.length) {
      const want = Math.min(Math.max(n, WINDOW), this.source.size - this.pos);
      this.window = await this.source.read(this.pos, want);
      this.windowAt = this.pos;
      if (this.window.length !== want) {
        throw importError('truncated', `the dump could not be read at ${this.pos}`);
      }
    }
    const at = this.pos - this.windowAt;
    this.pos += n;
    return this.window.subarray(at, at + n);
  }

  /** @param {number} n */
  skip(n) {
    if (n > this.source.size - this.pos) {
      throw importError('truncated', `the dump ends at byte ${this.source.size}, inside a ` +
        `record (${n} bytes needed at ${this.pos})`);
    }
    this.pos += n;
  }

  async u32() {
    const b = await this.take(4);
    return ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3];
  }

  /** Reads the header; returns the record count. */
  async header() {
    this.pos = 0;
    const magic = this.source.size >= 8 ? await this.take(8) : null;
    if (!magic || !magic.every((b, i) => b === MAGIC[i])) {
      throw importError('bad_magic', `the data does not start with "${DUMP_MAGIC}" (it is no ` +
        'IndexedDB dump file)');
    }
    this.count = await this.u32();
    return this.count;
  }

  /**
   * The next record's lengths, checked against skv's limits.
   * @param {number} index
   */
  async lengths(index) {
    const keyLength = await this.u32();
    if (keyLength === 0) throw importError('invalid_key', `record ${index} has an empty key`);
    if (keyLength > MAX_KEY_BYTES) {
      throw importError('key_too_large', `record ${index}: a key of ${keyLength} bytes (skv ` +
        `keys are at most ${MAX_KEY_BYTES})`);
    }
    return keyLength;
  }

  /** @param {number} index */
  async valueLength(index) {
    const n = await this.u32();
    if (n > MAX_VALUE_BYTES) {
      throw importError('value_too_large', `record ${index}: a value of ${n} bytes (skv values ` +
        `are at most ${MAX_VALUE_BYTES})`);
    }
    return n;
  }

  /**
   * Walks the whole dump; throws what is wrong with it. Returns { count, bytes }: the records
   * and their keys' and values' bytes.
   */
  async check() {
    const count = await this.header();
    let bytes = 0;
    for (let i = 0; i < count; i++) {
      if (this.pos === this.source.size) {
        throw importError('count_mismatch', `the header counts ${count} records and the dump ` +
          `holds ${i}`);
      }
      const k = await this.lengths(i);
      this.skip(k);
      const v = await this.valueLength(i);
      this.skip(v);
      bytes += k + v;
    }
    if (this.pos !== this.source.size) {
      const more = await this.wholeRecordsAfter();
      if (more > 0) {
        throw importError('count_mismatch', `the header counts ${count} records and the dump ` +
          `holds ${count + more}`);
      }
      throw importError('trailing_bytes', `${this.source.size - this.pos} bytes follow the ` +
        `last of the ${count} records`);
    }
    return { count, bytes };
  }

  // How many whole records fill the rest of the dump exactly (0 if they do not).
  async wholeRecordsAfter() {
    let n = 0;
    try {
      while (this.pos < this.source.size) {
        const k = await this.u32();
        this.skip(k);
        const v = await this.u32();
        this.skip(v);
        n++;
      }
    } catch {
      return 0;
    }
    return n;
  }

  /**
   * The records of a dump check() accepted, in order, as copies (the window is reused).
   * @returns {AsyncGenerator<[Uint8Array, Uint8Array]>}
   */
  async* records() {
    const count = await this.header();
    for (let i = 0; i < count; i++) {
      const key = (await this.take(await this.lengths(i))).slice();
      const value = (await this.take(await this.valueLength(i))).slice();
      yield [key, value];
    }
  }
}
