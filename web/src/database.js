// The worker side of the package: databases, transactions and iterators over the wasm core.
// Everything here runs in a dedicated worker, the only place OPFS sync access handles exist
// (web/src/index.js is the main-thread client that forwards to this code).
//
// Reads and buffered writes are synchronous calls into the core. A commit only queues: its WAL
// write runs as a task of the core's executor, which this file drives from a macrotask scheduled
// after the current turn of the event loop. So every commit issued in one turn shares one WAL
// write and, if any of them is Immediate, one flush() of the WAL's slot; the commits' promises
// settle after that. The same pump then runs background work (memtable flushes, compactions)
// one task at a time, yielding to the event loop between tasks, and tops the slot pool up
// before it runs low.

import createSkvCore from '../dist/skv-core.mjs';
import { toBytes, decode, unpackBatch } from './codec.js';
import { SkvError, asSkvError } from './errors.js';
import { SlotTable, checkName, databaseDir, removeDatabase } from './slots.js';

let corePromise = null;
const openNames = new Set();

function loadCore() {
  if (!corePromise) {
    corePromise = createSkvCore({ skvTables: [] }).catch((e) => {
      corePromise = null;
      throw new SkvError('not_supported', `cannot load the skv wasm core: ${e && e.message}`);
    });
  }
  return corePromise;
}

// Runs `fn` in the next macrotask (MessageChannel: no 4 ms clamp like nested setTimeout).
const channel = new MessageChannel();
const macrotasks = [];
channel.port1.onmessage = () => {
  const fn = macrotasks.shift();
  if (fn) fn();
};
function nextMacrotask(fn) {
  macrotasks.push(fn);
  channel.port2.postMessage(0);
}

async function takeLock(name, wait) {
  if (typeof navigator === 'undefined' || !navigator.locks) return () => {};
  return new Promise((resolve, reject) => {
    navigator.locks.request(`skv:${name}`, wait ? {} : { ifAvailable: true }, (lock) => {
      if (!lock) {
        reject(new SkvError('busy', `opfs:${name}: the database is open in another tab or worker`));
        return undefined;
      }
      // The lock is held until the promise returned here settles: until close().
      return new Promise((release) => resolve(release));
    }).catch((e) => reject(asSkvError(e)));
  });
}

const DURABILITY = { eventual: 0, immediate: 1 };

function durabilityArg(options) {
  if (!options || options.durability === undefined) return -1;
  const d = DURABILITY[options.durability];
  if (d === undefined) {
    throw new SkvError('invalid_argument',
      `durability must be 'immediate' or 'eventual', not ${JSON.stringify(options.durability)}`);
  }
  return d;
}

function rangeArg(x, what) {
  return x === undefined || x === null ? '' : toBytes(x, what);
}

// Opens (creating by default) database `name`. See web/types/index.d.ts for the options.
export async function open(name, options = {}) {
  checkName(name);
  const createIfMissing = options.createIfMissing !== false;
  if (openNames.has(name)) {
    throw new SkvError('busy', `opfs:${name}: the database is already open in this worker`);
  }
  openNames.add(name);
  let release = null;
  let table = null;
  try {
    release = await takeLock(name, options.waitForLock === true);
    const core = await loadCore();
    const dir = await databaseDir(name, createIfMissing);
    if (!dir) throw new SkvError('not_found', `opfs:${name}: no such database`);
    table = await SlotTable.open(name, dir, options.maxSlots || 0);
    const reserve = options.reserveSlots || 24;
    if (table.handles.length === 0 && createIfMissing) await table.grow(reserve + 4);
    return await Database.create(core, name, table, release, options, reserve);
  } catch (e) {
    if (table) table.close();
    if (release) release();
    openNames.delete(name);
    throw asSkvError(e);
  }
}

// Removes database `name` and its files. Fails with `busy` while it is open anywhere.
export async function deleteDatabase(name) {
  checkName(name);
  if (openNames.has(name)) {
    throw new SkvError('busy', `opfs:${name}: the database is open in this worker`);
  }
  const release = await takeLock(name, false);
  try {
    await removeDatabase(name);
  } finally {
    release();
  }
}

export class Database {
  static async create(core, name, table, release, options, reserve) {
    const tableId = core.skvTables.length;
    core.skvTables.push(table);
    const native = new core.WebDb();
    const nativeOptions = { ...options };
    delete nativeOptions.maxSlots;
    delete nativeOptions.waitForLock;
    let rc = native.open(name, tableId, nativeOptions);
    // Opening needs a free slot or two (a new WAL segment, a new manifest). A pool left full
    // (by a run that hit its cap) gets the room the cap now allows, and one more try.
    if (rc !== 0 && native.errorCode() === 'quota' && table.room(1) > 0) {
      await table.grow(reserve);
      rc = native.open(name, tableId, nativeOptions);
    }
    if (rc !== 0) {
      const err = new SkvError(native.errorCode(), native.errorMessage());
      native.delete();
      core.skvTables[tableId] = null;
      throw err;
    }
    const db = new Database(core, native, name, table, tableId, release);
    try {
      await db.topUp();
    } catch (e) {
      await db.close().catch(() => {});
      throw e;
    }
    return db;
  }

  constructor(core, native, name, table, tableId, release) {
    this.name = name;
    this.core = core;
    this.native = native;
    this.table = table;
    this.tableId = tableId;
    this.release = release;
    this.closed = false;
    this.waiters = new Map();  // commit or flush id -> { resolve, reject }
    this.pumpScheduled = false;
    this.toppingUp = null;
    this.sliceMs = 8;
    this.steps = 0;
    this.longestStepMs = 0;
  }

  check() {
    if (this.closed) throw new SkvError('closed', `opfs:${this.name}: the database is closed`);
  }

  error() {
    return new SkvError(this.native.errorCode(), this.native.errorMessage());
  }

  // Starts a transaction: 'readwrite' (default) or 'readonly'.
  begin(mode = 'readwrite') {
    this.check();
    if (mode !== 'readwrite' && mode !== 'readonly') {
      throw new SkvError('invalid_argument', `mode must be 'readwrite' or 'readonly', not ${mode}`);
    }
    const id = this.native.begin(mode === 'readonly');
    if (id === 0) throw this.error();
    return new Transaction(this, id, mode);
  }

  // Single-operation shortcuts, each its own transaction.
  get(key, options) {
    const tx = this.begin('readonly');
    try {
      return tx.get(key, options);
    } finally {
      tx.rollback();
    }
  }

  set(key, value, options) {
    const tx = this.begin();
    try {
      tx.set(key, value);
    } catch (e) {
      tx.rollback();
      throw e;
    }
    return tx.commit(options);
  }

  delete(key, options) {
    const tx = this.begin();
    try {
      tx.delete(key);
    } catch (e) {
      tx.rollback();
      throw e;
    }
    return tx.commit(options);
  }

  scan(start, end, options) {
    const tx = this.begin('readonly');
    try {
      return tx.scan(start, end, options);
    } finally {
      tx.rollback();
    }
  }

  count(start, end) {
    const tx = this.begin('readonly');
    try {
      return tx.count(start, end);
    } finally {
      tx.rollback();
    }
  }

  // Writes the memtable to a table; settles when that table is durable.
  flush() {
    this.check();
    const id = this.native.flush();
    if (id === 0) return Promise.reject(this.error());
    return this.await(id);
  }

  // Compacts every level down. Runs to completion in this call (a maintenance operation).
  compact() {
    this.check();
    if (this.native.compactAll() !== 0) return Promise.reject(this.error());
    return Promise.resolve();
  }

  // The core's counters, the pool's, and the pump's: executor tasks run between calls (WAL
  // writes, flushes, compaction steps) and the longest one, which is how long the worker was
  // kept from answering.
  stats() {
    this.check();
    const s = this.native.stats();
    s.steps = this.steps;
    s.longestStepMs = this.longestStepMs;
    return s;
  }

  // Every logical file of the database, as the native build keeps them in its directory:
  // [name, Uint8Array] pairs. Writing them into a directory gives a database `skv` opens.
  exportFiles() {
    this.check();
    const files = this.native.exportFiles();
    if (files === null) throw this.error();
    return files;
  }

  // Waits for queued commits, closes the tree, the slot handles and the lock.
  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.toppingUp) await this.toppingUp;
    const rc = this.native.close();
    const err = rc !== 0 ? this.error() : null;
    this.settle();
    for (const { reject } of this.waiters.values()) {
      reject(new SkvError('closed', `opfs:${this.name}: the database was closed`));
    }
    this.waiters.clear();
    this.native.delete();
    this.core.skvTables[this.tableId] = null;
    this.table.close();
    openNames.delete(this.name);
    this.release();
    if (err) throw err;
  }

  // --- commits and background work ---------------------------------------------------------

  await(id) {
    return new Promise((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
      this.schedule();
    });
  }

  schedule() {
    if (this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    nextMacrotask(() => this.pump());
  }

  // One slice of work: queued WAL writes first come in queue order with background tasks;
  // tasks run until the slice's time is up (a single flush or compaction step may take longer).
  pump() {
    this.pumpScheduled = false;
    if (this.closed || this.toppingUp) return;
    if (this.native.needsMoreSlots() && this.table.room(1) > 0) {
      this.toppingUp = this.topUp().finally(() => {
        this.toppingUp = null;
        this.schedule();
      });
      return;
    }
    const t0 = performance.now();
    // Background work that falls behind (L0 filling up toward the write stop) gets longer
    // slices, so it catches up before writers stall: a stall would run it all in one go.
    const slice = this.native.backgroundBehind() ? this.sliceMs * 6 : this.sliceMs;
    let t = t0;
    while (this.native.runPending(1) > 0) {
      const now = performance.now();
      this.steps++;
      this.longestStepMs = Math.max(this.longestStepMs, now - t);
      t = now;
      this.settle();
      if (now - t0 > slice || this.native.needsMoreSlots()) break;
    }
    this.settle();
    if (this.native.pending() > 0 || this.waiters.size > 0) this.schedule();
  }

  settle() {
    const done = this.native.takeDone();
    for (const [id, code, message] of done) {
      const w = this.waiters.get(id);
      if (!w) continue;
      this.waiters.delete(id);
      if (code === 'ok') w.resolve();
      else w.reject(new SkvError(code, message));
    }
  }

  // Opens new slot files until the pool's reserve is full again (or the cap is reached).
  async topUp() {
    const wanted = this.native.slotsWanted();
    if (wanted <= 0) return;
    const added = await this.table.grow(wanted);
    if (added > 0 && !this.closed && this.native.addSlots(added) !== 0) {
      throw this.error();
    }
  }
}

export class Transaction {
  constructor(db, id, mode) {
    this.db = db;
    this.id = id;
    this.mode = mode;
    this.finished = false;
  }

  native() {
    if (this.finished) throw new SkvError('closed', 'the transaction is finished');
    this.db.check();
    return this.db.native;
  }

  status(rc) {
    if (rc !== 0) throw this.db.error();
  }

  set(key, value) {
    this.status(this.native().set(this.id, toBytes(key, 'key'), toBytes(value, 'value')));
  }

  delete(key) {
    this.status(this.native().del(this.id, toBytes(key, 'key')));
  }

  // The value of `key`, or undefined. { as: 'string' } decodes it as UTF-8.
  get(key, options) {
    const v = this.native().get(this.id, toBytes(key, 'key'));
    if (v === null) throw this.db.error();
    return decode(v, options && options.as);
  }

  // The number of keys in [start, end) (either bound may be omitted).
  count(start, end) {
    const n = this.native().count(this.id, rangeArg(start, 'start'), rangeArg(end, 'end'));
    if (n < 0) throw this.db.error();
    return n;
  }

  // An iterator over [start, end): for (const [k, v] of tx.range(...)) or for await. Options:
  // reverse, keysOnly (yields keys, never reads values), as: 'string', batchSize.
  range(start, end, options = {}) {
    const native = this.native();
    const it = native.iterOpen(this.id, rangeArg(start, 'start'), rangeArg(end, 'end'),
      options.reverse === true, options.keysOnly === true);
    if (it === 0) throw this.db.error();
    return new RangeIterator(this.db, it, options);
  }

  // Up to `limit` entries of [start, end) after skipping `offset`, as an array: [key, value]
  // pairs, or keys with keysOnly.
  scan(start, end, options = {}) {
    const iter = this.range(start, end, options);
    try {
      if (options.offset) iter.skip(options.offset);
      return iter.take(options.limit === undefined ? Infinity : options.limit);
    } finally {
      iter.close();
    }
  }

  savepoint() {
    this.status(this.native().savepoint(this.id));
  }

  rollbackToSavepoint() {
    this.status(this.native().rollbackToSavepoint(this.id));
  }

  // Settles once the writes are visible (and durable, for durability 'immediate'); rejects with
  // SkvError('conflict') if another transaction wrote one of the same keys first.
  commit(options) {
    let id;
    try {
      const native = this.native();
      const d = durabilityArg(options);
      this.finished = true;
      id = native.commit(this.id, d);
      if (id === 0) throw this.db.error();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.db.await(id);
  }

  rollback() {
    if (this.finished) return;
    this.finished = true;
    if (!this.db.closed) this.db.native.rollback(this.id);
  }
}

export class RangeIterator {
  constructor(db, id, options) {
    this.db = db;
    this.id = id;
    this.as = options.as;
    this.batchSize = options.batchSize || 256;
    this.buffer = [];
    this.at = 0;
    this.done = false;
    this.closed = false;
  }

  // The next up to `max` entries (about `maxBytes` at most), packed as codec.js describes.
  nextPacked(max, maxBytes = 1 << 20) {
    if (this.closed) throw new SkvError('closed', 'the iterator is closed');
    this.db.check();
    const packed = this.db.native.iterNext(this.id, max, maxBytes);
    if (packed === null) throw this.db.error();
    return packed;
  }

  fill(max) {
    const { entries, done } = unpackBatch(this.nextPacked(max), this.as);
    this.buffer = entries;
    this.at = 0;
    this.done = done;
  }

  // Skips up to n entries; returns how many.
  skip(n) {
    let skipped = 0;
    const buffered = Math.min(n, this.buffer.length - this.at);
    this.at += buffered;
    skipped += buffered;
    if (skipped < n && !this.done) {
      const more = this.db.native.iterSkip(this.id, n - skipped);
      if (more < 0) throw this.db.error();
      skipped += more;
    }
    return skipped;
  }

  // The next up to n entries as an array.
  take(n) {
    const out = [];
    while (out.length < n) {
      if (this.at === this.buffer.length) {
        if (this.done) break;
        const want = n - out.length;
        this.fill(Number.isFinite(want) ? Math.max(1, Math.min(want, 4096)) : 1024);
        continue;
      }
      out.push(this.buffer[this.at++]);
    }
    return out;
  }

  next() {
    if (this.at === this.buffer.length && !this.done) this.fill(this.batchSize);
    if (this.at === this.buffer.length) {
      this.close();
      return { done: true, value: undefined };
    }
    return { done: false, value: this.buffer[this.at++] };
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    if (!this.db.closed) this.db.native.iterClose(this.id);
  }

  return() {
    this.close();
    return { done: true, value: undefined };
  }

  [Symbol.iterator]() {
    return this;
  }

  [Symbol.asyncIterator]() {
    return {
      next: () => Promise.resolve().then(() => this.next()),
      return: () => Promise.resolve(this.return()),
    };
  }
}
