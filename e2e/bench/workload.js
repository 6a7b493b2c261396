// The crud-bench style workload of the native harness (tools/bench/workload.cpp, main.cpp),
// in JS for the browser: the same keys, the same kind of values, the same phases in the same
// order. It runs inside a module worker against an engine adapter (engine-*.js), which
// implements these operations:
//
//   create(k, v) read(k) -> found  update(k, v) remove(k)
//   createBatch(rows) readBatch(keys) -> found  updateBatch(rows) removeBatch(keys)
//   countAll() -> n   scan(skip, limit, withValues) -> n
//
// Each may return a value or a promise of one. A single-row operation is one transaction,
// reads included; a batch is one transaction. Clients are async loops that pull operation
// indices from a shared counter: an engine whose operations are synchronous (sqlite-wasm, skv's
// reads) never yields, so the first client does all the work; one whose operations are
// promises (skv's commits, IndexedDB) has up to `clients` of them in flight.

import { xxh64Hex } from './xxh64.js';

// "string26": the hex of XXH64 (seed 0) of the index as 4 big-endian bytes, then the index in
// decimal, zero-padded to 10 digits.
export function makeKey(index) {
  const be = new Uint8Array([index >>> 24, (index >>> 16) & 0xff, (index >>> 8) & 0xff,
    index & 0xff]);
  return xxh64Hex(be) + String(index).padStart(10, '0');
}

// A small, fast 32-bit generator (sfc32): values only need to look random and be fresh.
export class Rng {
  constructor(seed) {
    this.a = 0x9e3779b9;
    this.b = seed >>> 0;
    this.c = (seed * 0x85ebca6b) >>> 0;
    this.d = 1;
    for (let i = 0; i < 16; i++) this.next();
  }

  next() {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  // Uniform in [lo, hi].
  between(lo, hi) {
    return lo + (this.next() % (hi - lo + 1));
  }
}

export const MIN_VALUE_SIZE = 674;
export const MAX_VALUE_SIZE = 1011;
const ALPHABET = new TextEncoder().encode(
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .');

// Values are views into shared 1 MiB slabs: a Uint8Array of its own costs about 4 µs to
// allocate here (its memory lives outside the JS heap), more than some engines take to store
// it, and it would count in every write phase's time. Each value still has bytes of its own.
const SLAB_BYTES = 1 << 20;
let slab = new Uint8Array(0);
let slabUsed = 0;
function freshBytes(size) {
  if (slabUsed + size > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + size);
  slabUsed += size;
  return out;
}

// Writes ASCII `s` at `at`; returns the end.
function putAscii(out, at, s) {
  for (let i = 0; i < s.length; i++) out[at++] = s.charCodeAt(i);
  return at;
}

// Writes `v` (a non-negative integer) in decimal at `at`; returns the end.
function putDecimal(out, at, v) {
  if (v >= 10) at = putDecimal(out, at, Math.floor(v / 10));
  out[at] = 48 + (v % 10);
  return at + 1;
}

// Random alphanumerics from `rng` into out[at, stop), five characters (6 bits each) per draw.
// The generator's steps are Rng.next()'s, on local copies of its state: a uint32 result above
// 2^30 would otherwise be a heap number, one allocation per draw.
function putText(rng, out, at, stop) {
  let { a, b, c, d } = rng;
  const whole = at + Math.floor((stop - at) / 5) * 5;
  while (at < stop) {
    let bits = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + bits) | 0;
    if (at < whole) {
      out[at] = ALPHABET[bits & 63];
      out[at + 1] = ALPHABET[(bits >>> 6) & 63];
      out[at + 2] = ALPHABET[(bits >>> 12) & 63];
      out[at + 3] = ALPHABET[(bits >>> 18) & 63];
      out[at + 4] = ALPHABET[(bits >>> 24) & 63];
      at += 5;
    } else {
      for (; at < stop; bits >>>= 6) out[at++] = ALPHABET[bits & 63];
    }
  }
  rng.a = a;
  rng.b = b;
  rng.c = c;
  rng.d = d;
}

// A fresh random record of 674..1011 bytes (about 840 on average), shaped like the native
// harness's: a JSON-like document whose text field is random alphanumerics.
export function makeValue(rng, index) {
  const size = rng.between(MIN_VALUE_SIZE, MAX_VALUE_SIZE);
  const out = freshBytes(size);
  const a = rng.next();
  const b = rng.next();
  let at = putAscii(out, 0, '{"id":');
  at = putDecimal(out, at, index);
  at = putAscii(out, at, `,"active":${a & 1 ? 'true' : 'false'},"score":`);
  at = putDecimal(out, at, b >>> 8);
  at = putAscii(out, at, ',"tags":[');
  at = putDecimal(out, at, (a >>> 8) & 0xff);
  at = putAscii(out, at, ',');
  at = putDecimal(out, at, (a >>> 16) & 0xff);
  at = putAscii(out, at, ',');
  at = putDecimal(out, at, a >>> 24);
  at = putAscii(out, at, '],"text":"');
  putText(rng, out, at, size - 2);
  out[size - 2] = 0x22;  // "
  out[size - 1] = 0x7d;  // }
  return out;
}

const isPromise = (x) => x !== null && typeof x === 'object' && typeof x.then === 'function';

// Runs operations 0 .. ops-1 from `clients` async loops. `op(worker, index, rng, acc)` returns
// its latency in ms (or a promise of it) and adds to acc.rows / acc.misses.
export async function runPhase(id, ops, clients, seed, op) {
  const latencies = new Float64Array(ops);
  const acc = { rows: 0, misses: 0 };
  let next = 0;
  let done = 0;
  const client = async (w) => {
    const rng = new Rng(seed * 1000003 + w + 1);
    for (;;) {
      const i = next++;
      if (i >= ops) return;
      let t = op(w, i, rng, acc);
      if (isPromise(t)) t = await t;
      latencies[done++] = t;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, w) => client(w)));
  const seconds = (performance.now() - t0) / 1000;
  const all = latencies.subarray(0, done).sort();
  const at = (q) => (all.length ? all[Math.min(all.length - 1, Math.round(q * (all.length - 1)))] : 0);
  return {
    id, ops: done, rows: acc.rows, misses: acc.misses, seconds,
    ops_per_second: seconds > 0 ? done / seconds : 0,
    rows_per_second: seconds > 0 ? acc.rows / seconds : 0,
    p50_ms: at(0.5), p99_ms: at(0.99), max_ms: all.length ? all[all.length - 1] : 0,
  };
}

// Awaits `r` if it is a promise; returns the latency of the whole call.
function timed(fn) {
  const t0 = performance.now();
  const r = fn();
  if (isPromise(r)) return r.then((v) => ({ v, ms: performance.now() - t0 }));
  return { v: r, ms: performance.now() - t0 };
}

function then(r, f) {
  return isPromise(r) ? r.then(f) : f(r);
}

// Keys are made once up front (XXH64 over BigInt costs microseconds; the native harness makes
// them outside the timed call too).
export function makeKeys(count) {
  const keys = new Array(count);
  for (let i = 0; i < count; i++) keys[i] = makeKey(i);
  return keys;
}

// The phases runAll() runs, in order.
export const PHASE_IDS = [
  'create', 'read', 'update', 'scan_count', 'scan_keys', 'scan_pairs', 'scan_skip_keys',
  'scan_skip_pairs', 'delete',
  ...[100, 1000].flatMap((s) => ['create', 'read', 'update', 'delete'].map((o) => `batch_${o}_${s}`)),
];

// Runs every phase against engine `e`, reporting each result through `report` as soon as it is
// known. After each phase it records `storage()` (optional: the bytes the browser says the
// origin stores) and the engine's own count of its file bytes, if it has a bytes() method.
// `hooks.before(id)` and `hooks.after(id)` (optional, awaited) run just before a phase's first
// operation and just after its last, outside its time.
export async function runAll(e, config, report, storage, hooks = {}) {
  const { n, clients } = config;
  const batchRows = config.batchRows || n;
  // A batch phase of size s covers max(1, batchRows / s) batches, so at least s rows.
  const keys = makeKeys(n + 2 * Math.max(batchRows, 1000));
  const phases = [];
  let seed = 1;
  const phase = async (id, ops, op) => {
    if (hooks.before) await hooks.before(id);
    const r = await runPhase(id, ops, clients, seed++, op);
    if (hooks.after) await hooks.after(id);
    // Background work the phase left is done before the next phase starts; not in its time.
    if (config.settlePhases && e.settle) r.settle_ms = await e.settle();
    if (storage) r.storage_after = await storage();
    if (e.bytes) r.engine_bytes_after = e.bytes();
    if (e.stats) r.files_per_level_after = e.stats().filesPerLevel;
    phases.push(r);
    report(r);
    return r;
  };

  // A fresh value is made for every create and update, before the timer starts.
  const single = (id, withValue, fn) => phase(id, n, (w, i, rng, acc) => {
    const k = keys[i];
    const v = withValue ? makeValue(rng, i) : undefined;
    return then(timed(() => fn(k, v)), ({ v: found, ms }) => {
      acc.rows++;
      if (found === false) acc.misses++;
      return ms;
    });
  });
  await single('create', true, (k, v) => e.create(k, v));
  await single('read', false, (k) => e.read(k));
  await single('update', true, (k, v) => e.update(k, v));

  const afterSkip = n > 5000 ? Math.min(100, n - 5000) : 0;
  const scan = (id, repeats, skip, limit, values, expect) => phase(id, repeats, (w, i, rng, acc) =>
    then(timed(() => (limit === 0 ? e.countAll() : e.scan(skip, limit, values))), ({ v, ms }) => {
      acc.rows += v;
      if (v !== expect) acc.misses++;
      return ms;
    }));
  await scan('scan_count', config.countRepeats, 0, 0, false, n);
  await scan('scan_keys', config.scanRepeats, 0, 100, false, Math.min(100, n));
  await scan('scan_pairs', config.scanRepeats, 0, 100, true, Math.min(100, n));
  await scan('scan_skip_keys', config.scanRepeats, 5000, 100, false, afterSkip);
  await scan('scan_skip_pairs', config.scanRepeats, 5000, 100, true, afterSkip);

  await single('delete', false, (k) => e.remove(k));

  // Batch j of size s covers indices base + j*s .. base + j*s + s - 1, past the single-row
  // phases' rows, and a different range for each batch size (as natively).
  let base = n;
  for (const size of [100, 1000]) {
    const batches = Math.max(1, Math.floor(batchRows / size));
    const keysOf = (j) => keys.slice(base + j * size, base + j * size + size);
    const write = (id, fn) => phase(id, batches, (w, j, rng, acc) => {
      const ks = keysOf(j);
      const rows = ks.map((k, r) => [k, makeValue(rng, base + j * size + r)]);
      return then(timed(() => fn(rows)), ({ ms }) => {
        acc.rows += size;
        return ms;
      });
    });
    await write(`batch_create_${size}`, (rows) => e.createBatch(rows));
    await phase(`batch_read_${size}`, batches, (w, j, rng, acc) => {
      const ks = keysOf(j);
      return then(timed(() => e.readBatch(ks)), ({ v, ms }) => {
        acc.rows += size;
        acc.misses += size - v;
        return ms;
      });
    });
    await write(`batch_update_${size}`, (rows) => e.updateBatch(rows));
    await phase(`batch_delete_${size}`, batches, (w, j, rng, acc) => {
      const ks = keysOf(j);
      return then(timed(() => e.removeBatch(ks)), ({ ms }) => {
        acc.rows += size;
        return ms;
      });
    });
    base += batchRows;
  }
  return phases;
}
