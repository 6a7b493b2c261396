// @ts-check
// Keys and values cross the API as Uint8Array (or any ArrayBuffer view, or an ArrayBuffer) or
// string; strings are stored as their UTF-8 bytes. Results are Uint8Array unless a call asks for
// strings with { as: 'string' }.
//
// A batch of entries travels as one packed buffer (little-endian): u32 count, u32 done, then per
// entry u32 key length, u32 value length (0xFFFFFFFF: no value), the key, the value. The worker
// builds it in wasm and the client receives it by transfer; entries are views into it.

import { invalid } from './errors.js';
import { describe } from './options.js';

/** @typedef {import('../types/common.js').Bytes} Bytes */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const NO_VALUE = 0xffffffff;

/**
 * Returns what the core accepts: a string (encoded by the glue as UTF-8) or a Uint8Array.
 * Anything else (numbers, objects, null, undefined, ...) is invalid_argument: nothing is ever
 * converted with String().
 * @param {unknown} x
 * @param {string} what  'key', 'value', 'start', ...
 * @returns {string | Uint8Array}
 */
export function toBytes(x, what) {
  if (typeof x === 'string' || x instanceof Uint8Array) return x;
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  throw invalid(`${what} must be a string, a Uint8Array, an ArrayBuffer view or an ArrayBuffer, ` +
    `not ${describe(x)}`);
}

/**
 * Always a Uint8Array (for packing on the main thread).
 * @param {unknown} x
 * @param {string} what
 * @returns {Uint8Array}
 */
export function toUint8(x, what) {
  const b = toBytes(x, what);
  return typeof b === 'string' ? encoder.encode(b) : b;
}

/**
 * A range bound: undefined or null is the open end (''), anything else as toBytes.
 * @param {unknown} x
 * @param {string} what
 */
export function toBound(x, what) {
  return x === undefined || x === null ? '' : toBytes(x, what);
}

/**
 * @param {Uint8Array | undefined} bytes
 * @param {'bytes' | 'string' | undefined} as  checked by the caller (options.js)
 * @returns {Uint8Array | string | undefined}
 */
export function decode(bytes, as) {
  if (bytes === undefined || as !== 'string') return bytes;
  return decoder.decode(bytes);
}

/**
 * Unpacks a batch into { entries: [[key, value]] (or keys, for keys only), done }.
 * @param {Uint8Array | ArrayBuffer} buf
 * @param {'bytes' | 'string' | undefined} as
 * @returns {{ entries: any[], done: boolean }}
 */
export function unpackBatch(buf, as) {
  const bytes = buf instanceof Uint8Array ? buf : new Uint8Array(buf);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0, true);
  const done = view.getUint32(4, true) === 1;
  const entries = new Array(count);
  let at = 8;
  for (let i = 0; i < count; i++) {
    const klen = view.getUint32(at, true);
    const vlen = view.getUint32(at + 4, true);
    at += 8;
    const key = decode(bytes.subarray(at, at + klen), as);
    at += klen;
    if (vlen === NO_VALUE) {
      entries[i] = key;
    } else {
      entries[i] = [key, decode(bytes.subarray(at, at + vlen), as)];
      at += vlen;
    }
  }
  return { entries, done };
}

/**
 * Unpacks the versions history() returns (web_db.h): u32 count, then per version u64
 * timestamp, u32 value length (0xFFFFFFFF: a tombstone), the value. Values are views into `buf`
 * (or strings, with as: 'string'); a tombstone's value is undefined.
 * @param {Uint8Array | ArrayBuffer} buf
 * @param {'bytes' | 'string' | undefined} as
 * @returns {Array<{ timestamp: bigint, value: any, tombstone: boolean }>}
 */
export function unpackVersions(buf, as) {
  const bytes = buf instanceof Uint8Array ? buf : new Uint8Array(buf);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0, true);
  const out = new Array(count);
  let at = 4;
  for (let i = 0; i < count; i++) {
    const timestamp = view.getBigUint64(at, true);
    const vlen = view.getUint32(at + 8, true);
    at += 12;
    if (vlen === NO_VALUE) {
      out[i] = { timestamp, value: undefined, tombstone: true };
    } else {
      out[i] = { timestamp, value: decode(bytes.subarray(at, at + vlen), as), tombstone: false };
      at += vlen;
    }
  }
  return out;
}

/** Kinds of packed writes. */
export const WRITE_SET = 1;
export const WRITE_DELETE = 2;
export const WRITE_SET_AT = 3;

/**
 * Packs write operations for one transfer: per op u8 kind (1 set, 2 delete, 3 set at a
 * timestamp), u32 key length, u32 value length, for kind 3 the u64 timestamp, key, value.
 * @param {Array<[number, Uint8Array, Uint8Array | undefined, bigint | undefined]>} ops
 * @returns {ArrayBuffer}
 */
export function packWrites(ops) {
  let size = 0;
  /** @type {Array<[number, Uint8Array, Uint8Array, bigint]>} */
  const parts = ops.map(([kind, k, value, ts]) => {
    const v = value || new Uint8Array(0);
    size += 9 + (kind === WRITE_SET_AT ? 8 : 0) + k.length + v.length;
    return [kind, k, v, ts ?? 0n];
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [kind, k, v, ts] of parts) {
    view.setUint8(at, kind);
    view.setUint32(at + 1, k.length, true);
    view.setUint32(at + 5, v.length, true);
    at += 9;
    if (kind === WRITE_SET_AT) {
      view.setBigUint64(at, ts, true);
      at += 8;
    }
    out.set(k, at);
    at += k.length;
    out.set(v, at);
    at += v.length;
  }
  return out.buffer;
}

/**
 * The writes packWrites packed, in order, as [kind, key, value, timestamp] (the timestamp of a
 * set_at, else undefined). The buffer comes from another thread, so nothing in it is trusted:
 * anything but an ArrayBuffer, an unknown kind, a delete with a value, or a length that runs past
 * the end is invalid_argument (thrown when the iteration reaches it); the timestamp is checked by
 * the call it goes to.
 * @param {unknown} buf
 * @returns {Generator<[number, Uint8Array, Uint8Array, bigint | undefined]>}
 */
export function* unpackWrites(buf) {
  if (!(buf instanceof ArrayBuffer)) {
    throw invalid(`writes: the packed writes must be an ArrayBuffer, not ${describe(buf)}`);
  }
  const bytes = new Uint8Array(buf);
  const view = new DataView(buf);
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 9) throw invalid(`writes: a write header is cut short at byte ${at}`);
    const kind = view.getUint8(at);
    const klen = view.getUint32(at + 1, true);
    const vlen = view.getUint32(at + 5, true);
    if (kind !== WRITE_SET && kind !== WRITE_DELETE && kind !== WRITE_SET_AT) {
      throw invalid(`writes: unknown write kind ${kind} at byte ${at}`);
    }
    if (kind === WRITE_DELETE && vlen !== 0) {
      throw invalid(`writes: a delete with a value at byte ${at}`);
    }
    const extra = kind === WRITE_SET_AT ? 8 : 0;
    if (klen + vlen + extra > bytes.length - at - 9) {
      throw invalid(`writes: the write at byte ${at} runs past the end of the buffer ` +
        `(${klen} + ${vlen} bytes, ${bytes.length - at - 9 - extra} left)`);
    }
    at += 9;
    let ts;
    if (kind === WRITE_SET_AT) {
      ts = view.getBigUint64(at, true);
      at += 8;
    }
    const key = bytes.subarray(at, at + klen);
    at += klen;
    const value = bytes.subarray(at, at + vlen);
    at += vlen;
    yield [kind, key, value, ts];
  }
}
