// @ts-check
// The value encoding of the IndexedDB importer (docs/indexeddb.md gives the grammar in full):
// a one-byte tag, then
//
//   0x01 the bytes of an ArrayBuffer; 0x02..0x0e the bytes of a typed array or DataView
//   (VIEW_KINDS gives the tag of each kind); 0x10 a string as UTF-8; 0x11 a string with a lone
//   surrogate, as UTF-16LE code units; 0x20 any other structured-clone-able value as one `item`,
//   a tagged tree in which every object is numbered in the order it is written and an object met
//   again is a reference to its number (so shared objects and cycles survive).
//
// Every function here is pure and runs anywhere (the page, a worker, Node.js).

import { SkvError } from './errors.js';
import { describe } from './options.js';
import {
  badEncoding, bytesOf, importError, isWellFormed, Reader, Writer,
} from './idb-key.js';

const VALUE_BUFFER = 0x01;
const VALUE_UTF8 = 0x10;
const VALUE_UTF16 = 0x11;
const VALUE_ITEM = 0x20;

/** The typed array kinds and their tags: value tag 0x02 + index, item view kind = index. */
export const VIEW_KINDS = Object.freeze([
  'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
  'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'DataView',
  'Float16Array',
]);

// Tags of a structured item (value tag 0x20).
const I_UNDEFINED = 0x00;
const I_NULL = 0x01;
const I_FALSE = 0x02;
const I_TRUE = 0x03;
const I_NUMBER = 0x04;
const I_BIGINT = 0x05;
const I_STRING = 0x06;
const I_STRING16 = 0x07;
const I_HOLE = 0x0f;
const I_OBJECT = 0x10;
const I_ARRAY = 0x11;
const I_MAP = 0x12;
const I_SET = 0x13;
const I_DATE = 0x14;
const I_REGEXP = 0x15;
const I_BUFFER = 0x16;
const I_VIEW = 0x17;
const I_BOOLEAN_OBJECT = 0x18;
const I_NUMBER_OBJECT = 0x19;
const I_STRING_OBJECT = 0x1a;
const I_BIGINT_OBJECT = 0x1b;
const I_ERROR = 0x1c;
const I_BLOB = 0x1d;
const I_FILE = 0x1e;
const I_REF = 0x1f;

const ERROR_NAMES = ['Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError',
  'TypeError', 'URIError'];

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** @param {unknown} x */
const tagOf = (x) => Object.prototype.toString.call(x).slice(8, -1);

/**
 * What the encoder of one value produced: the bytes before each Blob, and the Blobs (read later:
 * their bytes are only available asynchronously).
 * @typedef {{ parts: Uint8Array[], blobs: Blob[], size: number }} EncodedValue
 */

class ValueWriter extends Writer {
  constructor() {
    super(64);
    /** @type {Map<object, number>} */
    this.ids = new Map();
    /** @type {Uint8Array[]} */
    this.parts = [];
    /** @type {Blob[]} */
    this.blobs = [];
    this.blobBytes = 0;
  }

  /** @param {string} s */
  string(s) {
    if (isWellFormed(s)) {
      const b = utf8.encode(s);
      this.byte(I_STRING);
      this.varint(b.length);
      this.raw(b);
    } else {
      this.byte(I_STRING16);
      this.varint(s.length);
      this.room(s.length * 2);
      for (let i = 0; i < s.length; i++) {
        this.view.setUint16(this.length, s.charCodeAt(i), true);
        this.length += 2;
      }
    }
  }

  /** @param {bigint} x */
  bigint(x) {
    this.byte(x < 0n ? 1 : 0);
    let hex = (x < 0n ? -x : x).toString(16);
    if (hex.length % 2) hex = `0${hex}`;
    this.varint(hex.length / 2);
    for (let i = 0; i < hex.length; i += 2) this.byte(parseInt(hex.slice(i, i + 2), 16));
  }

  /** @param {Blob} blob */
  blob(blob) {
    this.varint(blob.size);
    this.parts.push(this.bytes.slice(0, this.length));
    this.length = 0;
    this.blobs.push(blob);
    this.blobBytes += blob.size;
  }

  /**
   * @param {unknown} x
   * @param {string} where
   */
  item(x, where) {
    switch (typeof x) {
      case 'undefined': this.byte(I_UNDEFINED); return;
      case 'boolean': this.byte(x ? I_TRUE : I_FALSE); return;
      case 'number': this.byte(I_NUMBER); this.f64(x); return;
      case 'bigint': this.byte(I_BIGINT); this.bigint(x); return;
      case 'string': this.string(x); return;
      case 'object': break;
      default:
        throw importError('unsupported_value', `${where}: ${describe(x)} cannot be cloned`);
    }
    if (x === null) {
      this.byte(I_NULL);
      return;
    }
    const seen = this.ids.get(x);
    if (seen !== undefined) {
      this.byte(I_REF);
      this.varint(seen);
      return;
    }
    this.ids.set(x, this.ids.size);
    const tag = tagOf(x);
    if (Array.isArray(x)) {
      this.byte(I_ARRAY);
      this.varint(x.length);
      for (let i = 0; i < x.length; i++) {
        if (i in x) this.item(x[i], `${where}[${i}]`);
        else this.byte(I_HOLE);
      }
      const extra = Object.keys(x).filter((k) => !(/^(?:0|[1-9][0-9]*)$/.test(k) &&
        Number(k) < 2 ** 32 - 1));
      this.varint(extra.length);
      for (const k of extra) {
        this.string(k);
        this.item(/** @type {any} */ (x)[k], `${where}.${k}`);
      }
      return;
    }
    if (ArrayBuffer.isView(x)) {
      const kind = VIEW_KINDS.indexOf(tag);
      if (kind < 0) throw importError('unsupported_value', `${where}: a ${tag} cannot be cloned`);
      this.byte(I_VIEW);
      this.byte(kind);
      this.item(x.buffer, `${where}.buffer`);
      this.varint(x.byteOffset);
      this.varint(tag === 'DataView' ? x.byteLength : /** @type {any} */ (x).length);
      return;
    }
    switch (tag) {
      case 'ArrayBuffer': {
        const b = new Uint8Array(/** @type {ArrayBuffer} */ (x));
        this.byte(I_BUFFER);
        this.varint(b.length);
        this.raw(b);
        return;
      }
      case 'Date': this.byte(I_DATE); this.f64(/** @type {Date} */ (x).getTime()); return;
      case 'RegExp': {
        const re = /** @type {RegExp} */ (x);
        this.byte(I_REGEXP);
        this.string(re.source);
        this.string(re.flags);
        return;
      }
      case 'Map':
        this.byte(I_MAP);
        this.varint(/** @type {Map<unknown, unknown>} */ (x).size);
        for (const [k, v] of /** @type {Map<unknown, unknown>} */ (x)) {
          this.item(k, `${where} (a Map key)`);
          this.item(v, `${where} (a Map value)`);
        }
        return;
      case 'Set':
        this.byte(I_SET);
        this.varint(/** @type {Set<unknown>} */ (x).size);
        for (const v of /** @type {Set<unknown>} */ (x)) this.item(v, `${where} (a Set member)`);
        return;
      case 'Boolean': this.byte(I_BOOLEAN_OBJECT); this.byte(x.valueOf() ? 1 : 0); return;
      case 'Number': this.byte(I_NUMBER_OBJECT); this.f64(/** @type {number} */ (x.valueOf())); return;
      case 'String': this.byte(I_STRING_OBJECT); this.string(String(x.valueOf())); return;
      case 'BigInt': this.byte(I_BIGINT_OBJECT); this.bigint(/** @type {bigint} */ (x.valueOf())); return;
      case 'Error': {
        const e = /** @type {Error} */ (x);
        this.byte(I_ERROR);
        this.string(ERROR_NAMES.includes(e.name) ? e.name : 'Error');
        this.string(typeof e.message === 'string' ? e.message : '');
        return;
      }
      case 'Blob':
        this.byte(I_BLOB);
        this.string(/** @type {Blob} */ (x).type);
        this.blob(/** @type {Blob} */ (x));
        return;
      case 'File': {
        const f = /** @type {File} */ (x);
        this.byte(I_FILE);
        this.string(f.name);
        this.string(f.type);
        this.f64(f.lastModified);
        this.blob(f);
        return;
      }
      case 'Object': {
        const keys = Object.keys(x);
        this.byte(I_OBJECT);
        this.varint(keys.length);
        for (const k of keys) {
          this.string(k);
          this.item(/** @type {any} */ (x)[k], `${where}.${k}`);
        }
        return;
      }
      default:
        throw importError('unsupported_value', `${where}: a ${tag} cannot be encoded (docs/` +
          'indexeddb.md lists the types that can)');
    }
  }
}

/**
 * Encodes a value, except the contents of its Blobs (see encodeIndexedDBValue).
 * @param {unknown} value
 * @returns {EncodedValue}
 */
export function encodeValueParts(value) {
  if (typeof value === 'string') {
    if (isWellFormed(value)) return single(VALUE_UTF8, utf8.encode(value));
    const b = new Uint8Array(value.length * 2);
    const v = new DataView(b.buffer);
    for (let i = 0; i < value.length; i++) v.setUint16(i * 2, value.charCodeAt(i), true);
    return single(VALUE_UTF16, b);
  }
  if (value instanceof ArrayBuffer) return single(VALUE_BUFFER, new Uint8Array(value));
  if (ArrayBuffer.isView(value)) {
    const kind = VIEW_KINDS.indexOf(tagOf(value));
    if (kind >= 0) {
      return single(0x02 + kind, new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    }
  }
  const w = new ValueWriter();
  w.byte(VALUE_ITEM);
  w.item(value, 'value');
  w.parts.push(w.done());
  const size = w.parts.reduce((n, p) => n + p.length, 0) + w.blobBytes;
  return { parts: w.parts, blobs: w.blobs, size };
}

/**
 * @param {number} tag
 * @param {Uint8Array} body
 * @returns {EncodedValue}
 */
function single(tag, body) {
  const out = new Uint8Array(body.length + 1);
  out[0] = tag;
  out.set(body, 1);
  return { parts: [out], blobs: [], size: out.length };
}

/**
 * The bytes of an encoded value, once its Blobs are read.
 * @param {EncodedValue} e
 * @returns {Promise<Uint8Array> | Uint8Array}
 */
export function joinValue(e) {
  if (e.blobs.length === 0) return e.parts[0];
  return Promise.all(e.blobs.map((b) => b.arrayBuffer())).then((contents) => {
    const out = new Uint8Array(e.size);
    let at = 0;
    for (let i = 0; i < e.parts.length; i++) {
      out.set(e.parts[i], at);
      at += e.parts[i].length;
      if (i < contents.length) {
        if (contents[i].byteLength !== e.blobs[i].size) {
          throw new SkvError('io', `a Blob of ${e.blobs[i].size} bytes read as ` +
            `${contents[i].byteLength}`);
        }
        out.set(new Uint8Array(contents[i]), at);
        at += contents[i].byteLength;
      }
    }
    return out;
  });
}

/**
 * The tagged bytes of a structured-clone-able value (docs/indexeddb.md): strings and binary
 * data as themselves behind one tag byte, everything else as a tagged tree that keeps shared
 * references and cycles. Blobs and Files are read, so this is asynchronous. A value that cannot
 * be encoded (a function, a symbol, a platform object such as ImageData) is invalid_argument,
 * reason unsupported_value.
 * @param {unknown} value
 * @returns {Promise<Uint8Array>}
 */
export async function encodeIndexedDBValue(value) {
  return joinValue(encodeValueParts(value));
}

const VIEW_SIZES = [1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 1, 2];

/**
 * @param {number} kind
 * @param {ArrayBuffer} buffer
 * @param {number} offset
 * @param {number} length  elements (bytes for a DataView)
 */
function makeView(kind, buffer, offset, length) {
  const name = VIEW_KINDS[kind];
  const Ctor = /** @type {any} */ (globalThis)[name];
  if (name === undefined || typeof Ctor !== 'function') {
    throw badEncoding(`view kind ${kind} is not known here`);
  }
  const size = VIEW_SIZES[kind];
  if (offset % size !== 0 || offset + length * size > buffer.byteLength) {
    throw badEncoding(`a ${name} of ${length} at ${offset} does not fit its buffer`);
  }
  return new Ctor(buffer, offset, length);
}

class ValueReader extends Reader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    super(bytes);
    /** @type {unknown[]} */
    this.objects = [];
    this.depth = 0;
  }

  string() {
    const tag = this.byte();
    return this.stringBody(tag);
  }

  /** @param {number} tag */
  stringBody(tag) {
    if (tag === I_STRING) {
      const b = this.take(this.varint());
      try {
        return strictUtf8.decode(b);
      } catch {
        throw badEncoding('a string is not UTF-8');
      }
    }
    if (tag === I_STRING16) {
      const n = this.varint();
      this.need(n * 2);
      let s = '';
      for (let i = 0; i < n; i++) s += String.fromCharCode(this.view.getUint16(this.at + i * 2, true));
      this.at += n * 2;
      return s;
    }
    throw badEncoding(`0x${tag.toString(16)} is not the tag of a string`);
  }

  bigint() {
    const sign = this.byte();
    if (sign > 1) throw badEncoding('a BigInt sign is not 0 or 1');
    const b = this.take(this.varint());
    let x = 0n;
    for (const byte of b) x = (x << 8n) | BigInt(byte);
    return sign ? -x : x;
  }

  /** @param {unknown} x */
  keep(x) {
    this.objects.push(x);
    return x;
  }

  reserve() {
    this.objects.push(undefined);
    return this.objects.length - 1;
  }

  /** @returns {unknown} */
  item() {
    if (++this.depth > 10000) throw badEncoding('values nested too deep');
    try {
      return this.itemBody(this.byte());
    } finally {
      this.depth--;
    }
  }

  /**
   * @param {number} tag
   * @returns {unknown}
   */
  itemBody(tag) {
    switch (tag) {
      case I_UNDEFINED: return undefined;
      case I_NULL: return null;
      case I_FALSE: return false;
      case I_TRUE: return true;
      case I_NUMBER: return this.f64();
      case I_BIGINT: return this.bigint();
      case I_STRING:
      case I_STRING16: return this.stringBody(tag);
      case I_REF: {
        const id = this.varint();
        if (id >= this.objects.length || this.objects[id] === undefined) {
          throw badEncoding(`reference ${id} names no object before it`);
        }
        return this.objects[id];
      }
      case I_ARRAY: {
        const n = this.varint();
        if (n > this.bytes.length - this.at) {
          throw badEncoding(`an array of ${n} is longer than its bytes`);
        }
        /** @type {unknown[]} */
        const a = /** @type {unknown[]} */ (this.keep(new Array(n)));
        for (let i = 0; i < n; i++) {
          if (this.bytes[this.at] === I_HOLE) {
            this.at++;
            continue;
          }
          a[i] = this.item();
        }
        const extra = this.varint();
        for (let i = 0; i < extra; i++) {
          const k = this.string();
          Object.defineProperty(a, k, { value: this.item(), writable: true, enumerable: true,
            configurable: true });
        }
        return a;
      }
      case I_OBJECT: {
        /** @type {Record<string, unknown>} */
        const o = /** @type {any} */ (this.keep({}));
        const n = this.varint();
        for (let i = 0; i < n; i++) {
          const k = this.string();
          Object.defineProperty(o, k, { value: this.item(), writable: true, enumerable: true,
            configurable: true });
        }
        return o;
      }
      case I_MAP: {
        const m = /** @type {Map<unknown, unknown>} */ (this.keep(new Map()));
        const n = this.varint();
        for (let i = 0; i < n; i++) {
          const k = this.item();
          m.set(k, this.item());
        }
        return m;
      }
      case I_SET: {
        const s = /** @type {Set<unknown>} */ (this.keep(new Set()));
        const n = this.varint();
        for (let i = 0; i < n; i++) s.add(this.item());
        return s;
      }
      case I_DATE: return this.keep(new Date(this.f64()));
      case I_REGEXP: {
        const id = this.reserve();
        const source = this.string();
        const flags = this.string();
        let re;
        try {
          re = new RegExp(source, flags);
        } catch {
          throw badEncoding('a RegExp does not compile');
        }
        this.objects[id] = re;
        return re;
      }
      case I_BUFFER: {
        const b = this.take(this.varint());
        return this.keep(b.slice().buffer);
      }
      case I_VIEW: {
        const id = this.reserve();
        const kind = this.byte();
        const buffer = this.item();
        if (!(buffer instanceof ArrayBuffer)) throw badEncoding('a view without an ArrayBuffer');
        const view = makeView(kind, buffer, this.varint(), this.varint());
        this.objects[id] = view;
        return view;
      }
      case I_BOOLEAN_OBJECT: return this.keep(Object(this.byte() === 1));
      case I_NUMBER_OBJECT: return this.keep(Object(this.f64()));
      case I_STRING_OBJECT: {
        const id = this.reserve();
        this.objects[id] = Object(this.string());
        return this.objects[id];
      }
      case I_BIGINT_OBJECT: return this.keep(Object(this.bigint()));
      case I_ERROR: {
        const id = this.reserve();
        const name = this.string();
        const message = this.string();
        const Ctor = ERROR_NAMES.includes(name) ? /** @type {any} */ (globalThis)[name] : Error;
        this.objects[id] = new Ctor(message);
        return this.objects[id];
      }
      case I_BLOB: {
        const id = this.reserve();
        const type = this.string();
        const b = this.take(this.varint());
        this.objects[id] = new Blob([b.slice()], { type });
        return this.objects[id];
      }
      case I_FILE: {
        const id = this.reserve();
        const name = this.string();
        const type = this.string();
        const lastModified = this.f64();
        const b = this.take(this.varint());
        this.objects[id] = new File([b.slice()], name, { type, lastModified });
        return this.objects[id];
      }
      default:
        throw badEncoding(`0x${tag.toString(16)} is not the tag of a value item`);
    }
  }
}

/**
 * The value encodeIndexedDBValue() (or the importer) encoded. Binary values come back as a
 * fresh ArrayBuffer or view of their own bytes; Blobs and Files as new Blobs and Files holding
 * the stored bytes. Bytes that are not exactly one encoded value are invalid_argument, reason
 * bad_encoding.
 * @param {Uint8Array | ArrayBuffer | ArrayBufferView} bytes
 * @returns {unknown}
 */
export function decodeIndexedDBValue(bytes) {
  const b = bytesOf(bytes);
  if (!b || b.length === 0) {
    throw importError('bad_encoding', `decodeIndexedDBValue: ${describe(bytes)} is not an ` +
      'encoded value');
  }
  const tag = b[0];
  const body = b.subarray(1);
  if (tag === VALUE_BUFFER) return body.slice().buffer;
  if (tag >= 0x02 && tag < 0x02 + VIEW_KINDS.length) {
    const kind = tag - 0x02;
    const size = VIEW_SIZES[kind];
    if (body.length % size !== 0) throw badEncoding(`${body.length} bytes are no ${VIEW_KINDS[kind]}`);
    return makeView(kind, body.slice().buffer, 0, kind === 11 ? body.length : body.length / size);
  }
  if (tag === VALUE_UTF8) {
    try {
      return strictUtf8.decode(body);
    } catch {
      throw badEncoding('a string value is not UTF-8');
    }
  }
  if (tag === VALUE_UTF16) {
    if (body.length % 2) throw badEncoding('a UTF-16 string value has an odd length');
    const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
    let s = '';
    for (let i = 0; i < body.length; i += 2) s += String.fromCharCode(v.getUint16(i, true));
    return s;
  }
  if (tag === VALUE_ITEM) {
    const r = new ValueReader(body);
    const value = r.item();
    r.end();
    return value;
  }
  throw badEncoding(`0x${tag.toString(16)} is not the tag of a value`);
}
