// @ts-check
// The key encoding of the IndexedDB importer, and where records go (docs/indexeddb.md gives the
// grammar in full; idb-value.js encodes values):
//
// An IndexedDB key becomes bytes whose bytewise order is indexedDB.cmp's order. A key is a type
// tag and its body; the tags grow in IndexedDB's type order (number < date < string < binary <
// array):
//
//   key    = 0x10 f64 | 0x20 f64 | 0x30 units 0x00 | 0x40 bytes 0x00 | 0x50 key* 0x00
//   f64    = the IEEE 754 bits, big-endian, with the sign bit set for a positive number and every
//            bit inverted for a negative one (-0 is written as 0: IndexedDB holds them equal)
//   units  = each UTF-16 code unit u: u + 1 (u < 0x7f); 0x80 | v >> 8, v & 0xff with
//            v = u - 0x7f (u < 0x407f); 0xc0, v >> 8, v & 0xff with v = u - 0x407f (the rest)
//   bytes  = each byte: 0x00 as 0x01 0x01, 0x01 as 0x01 0x02, any other as itself
//
// The terminator 0x00 is below every unit, byte and tag, so a prefix sorts first.
//
// Where the importer puts a record: `<store name, UTF-8> 0x00 <encoded key>`, one contiguous
// range per store, [name 0x00, name 0x01). Store names with U+0000 or a lone surrogate are
// refused. This file also holds what both encodings share: the byte writer and reader, and the
// importer's errors. Every function here is pure and runs anywhere (the page, a worker, Node.js).

import { SkvError } from './errors.js';
import { describe } from './options.js';

/** @typedef {import('../types/common.js').ImportReason} ImportReason */

/** The largest key skv stores (kMaxKeySize) and the largest value (kMaxValueSize). */
export const MAX_KEY_BYTES = 65535;
export const MAX_VALUE_BYTES = 64 << 20;

/**
 * The reserved key of an unfinished import's progress marker: 0x00 0xff "skv:indexeddb-import".
 * No record's key can equal it: a store name holds no U+0000, and after the 0x00 that ends a
 * name comes a key tag, never 0xff.
 */
export const MARKER_KEY = Uint8Array.from([0x00, 0xff,
  ...new TextEncoder().encode('skv:indexeddb-import')]);

const KEY_NUMBER = 0x10;
const KEY_DATE = 0x20;
const KEY_STRING = 0x30;
const KEY_BINARY = 0x40;
const KEY_ARRAY = 0x50;
const END = 0x00;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An import error: invalid_argument with `reason`.
 * @param {ImportReason} reason
 * @param {string} message
 * @returns {SkvError}
 */
export function importError(reason, message) {
  return new SkvError('invalid_argument', message, { reason });
}

/** @param {string} message */
export const badEncoding = (message) => importError('bad_encoding', message);

/** @param {string} s */
export function isWellFormed(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}

// A growable byte buffer.
export class Writer {
  /** @param {number} [size] */
  constructor(size = 64) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
    this.length = 0;
  }

  /** @param {number} n */
  room(n) {
    if (this.length + n <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  /** @param {number} b */
  byte(b) {
    this.room(1);
    this.bytes[this.length++] = b;
  }

  /** @param {Uint8Array} b */
  raw(b) {
    this.room(b.length);
    this.bytes.set(b, this.length);
    this.length += b.length;
  }

  /** @param {number} n  a non-negative safe integer, as LEB128 */
  varint(n) {
    this.room(8);
    while (n >= 0x80) {
      this.bytes[this.length++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.bytes[this.length++] = n;
  }

  /** @param {number} x */
  f64(x) {
    this.room(8);
    this.view.setFloat64(this.length, x);
    this.length += 8;
  }

  done() {
    return this.bytes.slice(0, this.length);
  }
}

// A cursor over bytes being decoded; every read checks the length first.
export class Reader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }

  /** @param {number} n */
  need(n) {
    if (n > this.bytes.length - this.at) {
      throw badEncoding(`the encoding ends early (${n} more bytes needed at offset ${this.at})`);
    }
  }

  byte() {
    this.need(1);
    return this.bytes[this.at++];
  }

  /** @param {number} n */
  take(n) {
    this.need(n);
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  varint() {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) break;
      scale *= 0x80;
      if (scale > 2 ** 49) throw badEncoding(`a length at offset ${this.at} is too large`);
    }
    return n;
  }

  f64() {
    this.need(8);
    const x = this.view.getFloat64(this.at);
    this.at += 8;
    return x;
  }

  end() {
    if (this.at !== this.bytes.length) {
      throw badEncoding(`${this.bytes.length - this.at} bytes after the end of the encoding`);
    }
  }
}

/**
 * Bytes of an ArrayBuffer or a view, or null for anything else.
 * @param {unknown} x
 * @returns {Uint8Array | null}
 */
export function bytesOf(x) {
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  return null;
}

/**
 * @param {Writer} w
 * @param {number} x
 */
function sortableF64(w, x) {
  const at = w.length;
  w.f64(x === 0 ? 0 : x);
  const b = w.bytes;
  if (b[at] & 0x80) {
    for (let i = at; i < at + 8; i++) b[i] ^= 0xff;
  } else {
    b[at] |= 0x80;
  }
}

/** @param {Reader} r */
function readSortableF64(r) {
  const b = Uint8Array.from(r.take(8));
  if (b[0] & 0x80) b[0] &= 0x7f;
  else for (let i = 0; i < 8; i++) b[i] ^= 0xff;
  return new DataView(b.buffer).getFloat64(0);
}

/**
 * @param {Writer} w
 * @param {unknown} key
 * @param {Set<unknown>} path  the arrays being encoded (a cycle is no key)
 * @param {string} where
 */
function writeKey(w, key, path, where) {
  if (typeof key === 'number') {
    if (Number.isNaN(key)) throw importError('invalid_key', `${where}: NaN is not a key`);
    w.byte(KEY_NUMBER);
    sortableF64(w, key);
    return;
  }
  if (typeof key === 'string') {
    w.byte(KEY_STRING);
    w.room(key.length * 3 + 1);
    const b = w.bytes;
    let n = w.length;
    for (let i = 0; i < key.length; i++) {
      const u = key.charCodeAt(i);
      if (u < 0x7f) {
        b[n++] = u + 1;
      } else if (u < 0x407f) {
        const v = u - 0x7f;
        b[n++] = 0x80 | (v >> 8);
        b[n++] = v & 0xff;
      } else {
        const v = u - 0x407f;
        b[n++] = 0xc0;
        b[n++] = v >> 8;
        b[n++] = v & 0xff;
      }
    }
    b[n++] = END;
    w.length = n;
    return;
  }
  if (key instanceof Date) {
    const t = key.getTime();
    if (Number.isNaN(t)) throw importError('invalid_key', `${where}: an invalid Date is not a key`);
    w.byte(KEY_DATE);
    sortableF64(w, t);
    return;
  }
  if (Array.isArray(key)) {
    if (path.has(key)) {
      throw importError('invalid_key', `${where}: an array that holds itself is not a key`);
    }
    path.add(key);
    w.byte(KEY_ARRAY);
    for (let i = 0; i < key.length; i++) {
      if (!(i in key)) {
        throw importError('invalid_key', `${where}: an array with a hole is not a key`);
      }
      writeKey(w, key[i], path, `${where}[${i}]`);
    }
    w.byte(END);
    path.delete(key);
    return;
  }
  const bytes = bytesOf(key);
  if (bytes) {
    w.byte(KEY_BINARY);
    w.room(bytes.length * 2 + 1);
    const b = w.bytes;
    let n = w.length;
    for (let i = 0; i < bytes.length; i++) {
      const x = bytes[i];
      if (x > 1) {
        b[n++] = x;
      } else {
        b[n++] = 0x01;
        b[n++] = x + 1;
      }
    }
    b[n++] = END;
    w.length = n;
    return;
  }
  throw importError('invalid_key', `${where}: ${describe(key)} is not an IndexedDB key (a ` +
    'number, a Date, a string, an ArrayBuffer or view, or an array of keys)');
}

/**
 * The order-preserving bytes of IndexedDB key `key`: for keys a and b, the bytewise order of
 * their encodings is indexedDB.cmp(a, b). Anything that is not a valid key (NaN, an invalid
 * Date, an object, an array with a hole or a cycle) is invalid_argument, reason invalid_key.
 * @param {unknown} key
 * @returns {Uint8Array}
 */
export function encodeIndexedDBKey(key) {
  const w = new Writer(32);
  writeKey(w, key, new Set(), 'encodeIndexedDBKey');
  return w.done();
}

/**
 * @param {Reader} r
 * @param {number} [depth]
 * @returns {IDBValidKey}
 */
function readKey(r, depth = 0) {
  const tag = r.byte();
  switch (tag) {
    case KEY_NUMBER:
    case KEY_DATE: {
      const x = readSortableF64(r);
      if (Number.isNaN(x)) throw badEncoding('a key number is NaN');
      if (Object.is(x, -0)) throw badEncoding('a key number is -0 (written as 0)');
      return tag === KEY_NUMBER ? x : new Date(x);
    }
    case KEY_STRING: {
      const units = [];
      for (;;) {
        const b = r.byte();
        if (b === END) break;
        if (b < 0x80) {
          units.push(b - 1);
        } else if (b < 0xc0) {
          units.push((((b & 0x3f) << 8) | r.byte()) + 0x7f);
        } else if (b === 0xc0) {
          const v = (r.byte() << 8) | r.byte();
          if (v > 0xffff - 0x407f) throw badEncoding('a string key holds a unit past 0xffff');
          units.push(v + 0x407f);
        } else {
          throw badEncoding(`a string key holds the byte 0x${b.toString(16)}`);
        }
      }
      let s = '';
      for (let i = 0; i < units.length; i += 8192) {
        s += String.fromCharCode(...units.slice(i, i + 8192));
      }
      return s;
    }
    case KEY_BINARY: {
      const out = [];
      for (;;) {
        const b = r.byte();
        if (b === END) break;
        if (b === 0x01) {
          const e = r.byte();
          if (e !== 0x01 && e !== 0x02) throw badEncoding('a binary key holds a bad escape');
          out.push(e - 1);
        } else {
          out.push(b);
        }
      }
      return Uint8Array.from(out).buffer;
    }
    case KEY_ARRAY: {
      if (depth > 10000) throw badEncoding('arrays nested too deep');
      const out = [];
      while (r.bytes[r.at] !== END) {
        r.need(1);
        out.push(readKey(r, depth + 1));
      }
      r.at++;
      return out;
    }
    default:
      throw badEncoding(`0x${tag.toString(16)} is not the tag of a key`);
  }
}

/**
 * The key encodeIndexedDBKey() encoded: a number, a Date, a string, an ArrayBuffer (binary
 * keys come back as IndexedDB returns them) or an array. Bytes that are not exactly one encoded
 * key are invalid_argument, reason bad_encoding.
 * @param {Uint8Array | ArrayBuffer | ArrayBufferView} bytes
 * @returns {IDBValidKey}
 */
export function decodeIndexedDBKey(bytes) {
  const b = bytesOf(bytes);
  if (!b) throw importError('bad_encoding', `decodeIndexedDBKey: ${describe(bytes)} is not bytes`);
  const r = new Reader(b);
  const key = readKey(r);
  r.end();
  return key;
}

/**
 * The UTF-8 bytes of store name `name`, checked: a string, no U+0000 (the separator) and no
 * lone surrogate (UTF-8 could not keep it). Refused: invalid_argument, reason bad_store_name.
 * @param {unknown} name
 * @returns {Uint8Array}
 */
export function storeNameBytes(name) {
  if (typeof name !== 'string' || name.includes('\0') || !isWellFormed(name)) {
    throw importError('bad_store_name', `the store name ${describe(name)} cannot be imported ` +
      '(it must be a string without U+0000 and without a lone surrogate)');
  }
  return utf8.encode(name);
}

/**
 * The skv key of record `key` of store `store`: `<store, UTF-8> 0x00 <encoded key>`.
 * @param {string} store
 * @param {unknown} key
 * @returns {Uint8Array}
 */
export function indexedDBRecordKey(store, key) {
  const name = storeNameBytes(store);
  const w = new Writer(name.length + 32);
  w.raw(name);
  w.byte(0);
  writeKey(w, key, new Set(), 'indexedDBRecordKey');
  return w.done();
}

/**
 * The range [start, end) that holds every record of store `store`, for range() and scan().
 * @param {string} store
 * @returns {[Uint8Array, Uint8Array]}
 */
export function indexedDBStoreRange(store) {
  const name = storeNameBytes(store);
  const start = new Uint8Array(name.length + 1);
  start.set(name);
  const end = start.slice();
  end[name.length] = 1;
  return [start, end];
}

/**
 * The store and the key of an imported record's skv key; invalid_argument (bad_encoding) for
 * bytes that are no such key.
 * @param {Uint8Array | ArrayBuffer | ArrayBufferView} bytes
 * @returns {{ store: string, key: IDBValidKey }}
 */
export function splitIndexedDBKey(bytes) {
  const b = bytesOf(bytes);
  if (!b) throw importError('bad_encoding', `splitIndexedDBKey: ${describe(bytes)} is not bytes`);
  const zero = b.indexOf(0);
  if (zero < 0) throw badEncoding('no 0x00 after the store name');
  let store;
  try {
    store = strictUtf8.decode(b.subarray(0, zero));
  } catch {
    throw badEncoding('the store name is not UTF-8');
  }
  return { store, key: decodeIndexedDBKey(b.subarray(zero + 1)) };
}

