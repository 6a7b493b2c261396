// @ts-check
// Engine: one open database inside the worker, as the worker API's classes share it. It owns the
// wasm WebDb, the slot table and the Web Lock, and drives the core's executor. It is internal:
// the public Database, Transaction and RangeIterator keep it in a private field.
//
// A commit only queues: its WAL write runs as a task of the core's executor, which the engine
// drives from a macrotask scheduled after the current turn of the event loop. So every commit
// issued in one turn shares one WAL write and, if any of them is Immediate, one flush() of the
// WAL's slot; the commits' promises settle after that. The same pump then runs background work
// (memtable flushes, compactions) one task at a time, yielding to the event loop between tasks,
// and tops the slot pool up before it runs low.
//
// Transactions and iterators the application drops without ending them would keep their
// snapshot (and every version it sees) until close(); a FinalizationRegistry ends them once they
// are garbage collected.

import { SkvError, reasonOf } from './errors.js';

// Runs `fn` in the next macrotask (MessageChannel: no 4 ms clamp like nested setTimeout). The
// channel is made on first use, so that merely importing the module keeps nothing alive.
/** @type {MessageChannel | null} */
let channel = null;
/** @type {Array<() => void>} */
const macrotasks = [];
/** @param {() => void} fn */
function nextMacrotask(fn) {
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => {
      const next = macrotasks.shift();
      if (next) next();
    };
  }
  macrotasks.push(fn);
  channel.port2.postMessage(0);
}

/**
 * @typedef {{ resolve: (v?: any) => void, reject: (e: unknown) => void }} Waiter
 * @typedef {{ kind: 'txn' | 'iter', id: number }} Dropped
 */

export class Engine {
  /**
   * Opens the wasm tree over `table`; on failure nothing is left registered. The caller owns
   * `table` and `release` until this resolves.
   * @param {any} core  the loaded wasm module
   * @param {string} name
   * @param {import('./slots.js').SlotTable} table
   * @param {() => void} release  releases the Web Lock
   * @param {Record<string, unknown>} nativeOptions  checked options the glue reads
   * @param {number} reserve
   */
  static async open(core, name, table, release, nativeOptions, reserve) {
    const tableId = core.skvTables.length;
    core.skvTables.push(table);
    const native = new core.WebDb();
    let rc = native.open(name, tableId, nativeOptions);
    // Opening needs a free slot or two (a new WAL segment, a new manifest). A pool left full
    // (by a run that hit its cap) gets the room the cap now allows, and one more try.
    if (rc !== 0 && native.errorCode() === 'quota' && table.room(1) > 0) {
      await table.grow(reserve);
      rc = native.open(name, tableId, nativeOptions);
    }
    if (rc !== 0) {
      const err = new SkvError(native.errorCode(), native.errorMessage(),
        { reason: reasonOf(native.errorReason()) });
      native.delete();
      core.skvTables[tableId] = null;
      throw err;
    }
    const engine = new Engine(core, native, name, table, tableId, release);
    try {
      await engine.topUp();
    } catch (e) {
      await engine.close().catch(() => {});
      throw e;
    }
    return engine;
  }

  /**
   * @param {any} core
   * @param {any} native  the WebDb
   * @param {string} name
   * @param {import('./slots.js').SlotTable} table
   * @param {number} tableId
   * @param {() => void} release
   */
  constructor(core, native, name, table, tableId, release) {
    this.name = name;
    this.core = core;
    this.native = native;
    this.table = table;
    this.tableId = tableId;
    this.release = release;
    this.closed = false;
    /** @type {Map<number, Waiter>} commit or flush id -> its promise */
    this.waiters = new Map();
    this.pumpScheduled = false;
    /** @type {Promise<void> | null} */
    this.toppingUp = null;
    this.sliceMs = 8;
    this.steps = 0;
    this.longestStepMs = 0;
    /** Ends transactions and iterators that were dropped without being ended. */
    this.dropped = new FinalizationRegistry((/** @type {Dropped} */ { kind, id }) => {
      if (this.closed) return;
      if (kind === 'txn') this.native.rollback(id);
      else this.native.iterClose(id);
    });
  }

  /** Throws `closed` once the database is closed. */
  check() {
    if (this.closed) throw new SkvError('closed', `opfs:${this.name}: the database is closed`);
  }

  /** The glue's last error as an SkvError. */
  error() {
    return new SkvError(this.native.errorCode(), this.native.errorMessage(),
      { reason: reasonOf(this.native.errorReason()) });
  }

  /**
   * A promise for commit or flush `id`, settled by the pump.
   * @param {number} id
   * @returns {Promise<void>}
   */
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
    for (const [id, code, message, reason] of done) {
      const w = this.waiters.get(id);
      if (!w) continue;
      this.waiters.delete(id);
      if (code === 'ok') w.resolve();
      else w.reject(new SkvError(code, message, { reason: reasonOf(reason) }));
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

  // Tops the pool's reserve up now if it is short (after a top-up under way), for a call that
  // writes files of this database synchronously (checkpoint() flushes the memtable first).
  async reserve() {
    while (this.toppingUp) await this.toppingUp;
    this.check();
    if (this.native.needsMoreSlots() && this.table.room(1) > 0) {
      this.toppingUp = this.topUp().finally(() => {
        this.toppingUp = null;
        this.schedule();
      });
      await this.toppingUp;
      this.check();
    }
  }

  // The slots a checkpoint's target needs: one per table and value log file of the current
  // version, one for the table the checkpoint's flush adds (and one per memtable waiting for its
  // flush), a manifest and CURRENT, plus room for compactions that finish while the flush runs
  // (they may replace some tables by more).
  checkpointSlots() {
    const s = this.native.stats();
    const files = s.filesPerLevel.reduce((/** @type {number} */ a, /** @type {number} */ b) =>
      a + b, 0) + s.vlogFiles;
    return files + s.immutableMemtables + 1 + 2 + 4 + Math.ceil(files / 8);
  }

  // After a synchronous call that ran executor tasks itself (a checkpoint's flush): settles the
  // commits they completed and lets the pump run what is left.
  ranInline() {
    if (this.closed) return;
    this.settle();
    this.schedule();
  }

  /** The core's counters, the pool's, and the pump's. */
  stats() {
    this.check();
    const s = this.native.stats();
    s.steps = this.steps;
    s.longestStepMs = this.longestStepMs;
    if (s.pool) s.pool.fileBytes = this.table.fileBytes();
    return s;
  }

  // Waits for a top-up in progress, closes the tree (queued commits are written first), then the
  // slot handles and the lock.
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
    this.release();
    if (err) throw err;
  }
}
