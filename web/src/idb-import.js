// @ts-check
// The IndexedDB importer, on the worker side (docs/indexeddb.md). It runs in the worker that
// holds the destination database: IndexedDB is available in workers, so the records go from
// IndexedDB's cursor to the engine without crossing a thread.
//
// IndexedDBImport reads one batch per step(): a read-only IndexedDB transaction with a cursor
// that starts after the last imported key, at most `batchSize` records or `batchBytes` bytes;
// then one skv transaction writes the batch and the progress marker (MARKER_KEY, idb-key.js)
// together, so a reload at any point resumes after the last committed batch. The step that
// writes the last batch of the last store deletes the marker instead. Memory: one batch at a
// time.
//
// The source is checked before the destination is opened, so a refused call creates nothing.

import { SkvError, asSkvError, invalid } from './errors.js';
import { checkName, listDatabases } from './slots.js';
import {
  checkOptions, describe, DUMP_IMPORT_OPTIONS, IDB_IMPORT_OPTIONS,
} from './options.js';
import {
  decodeIndexedDBKey, encodeIndexedDBKey, importError, MARKER_KEY, MAX_KEY_BYTES,
  MAX_VALUE_BYTES, storeNameBytes,
} from './idb-key.js';
import { encodeValueParts, joinValue } from './idb-value.js';
import { DumpReader, dumpSource } from './idb-dump.js';
import { open, deleteDatabase, Database } from './database.js';

const MARKER_FORMAT = 1;
const DEFAULT_BATCH_SIZE = 1000;
const DEFAULT_BATCH_BYTES = 4 << 20;

/**
 * @typedef {import('../types/common.js').IndexedDBImportProgress} Progress
 * @typedef {{ format: number, source: string, stores: string[], store: number,
 *   after: string | null, records: number, bytes: number, batches: number }} Marker
 */

/** @param {Uint8Array} b */
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
/** @param {string} s */
const unhex = (s) => Uint8Array.from(s.match(/../g) ?? [], (x) => parseInt(x, 16));

/**
 * @template T
 * @param {IDBRequest<T>} req
 * @returns {Promise<T>}
 */
function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(asSkvError(req.error));
  });
}

/**
 * Opens IndexedDB database `name` read-only, never creating it: a database that is not there
 * is no_such_source (and the upgrade that would create it is aborted).
 * @param {string} name
 * @returns {Promise<IDBDatabase>}
 */
async function openSource(name) {
  if (typeof indexedDB === 'undefined') {
    throw new SkvError('not_supported', 'this context has no IndexedDB');
  }
  const known = await indexedDB.databases();
  if (!known.some((d) => d.name === name)) {
    throw new SkvError('not_found', `indexeddb:${name}: no such database`,
      { reason: 'no_such_source' });
  }
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    let missing = false;
    req.onupgradeneeded = () => {
      missing = true;
      /** @type {IDBTransaction} */ (req.transaction).abort();
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(missing
      ? new SkvError('not_found', `indexeddb:${name}: no such database`,
        { reason: 'no_such_source' })
      : asSkvError(req.error));
    req.onblocked = () => {};
  });
}

/**
 * @param {Database} db
 * @returns {Marker | null}
 */
function readMarker(db) {
  const raw = db.get(MARKER_KEY, { as: 'string' });
  if (raw === undefined) return null;
  let m;
  try {
    m = JSON.parse(/** @type {string} */ (raw));
  } catch {
    m = null;
  }
  /** @param {unknown} n */
  const count = (n) => Number.isSafeInteger(n) && /** @type {number} */ (n) >= 0;
  if (!m || m.format !== MARKER_FORMAT || typeof m.source !== 'string' ||
    !Array.isArray(m.stores) || !m.stores.every((/** @type {unknown} */ x) =>
      typeof x === 'string') ||
    !count(m.store) || m.store >= m.stores.length ||
    !(m.after === null || (typeof m.after === 'string' && /^(?:[0-9a-f]{2})+$/.test(m.after))) ||
    !count(m.records) || !count(m.bytes) || !count(m.batches)) {
    throw new SkvError('corruption', `opfs:${db.name}: the IndexedDB import marker cannot be read`);
  }
  return m;
}

export class IndexedDBImport {
  /** @type {IDBDatabase} */ #idb;
  /** @type {string} */ #source;
  /** @type {string[]} */ #stores;
  /** @type {Uint8Array[]} */ #prefixes;
  #batchSize;
  #batchBytes;
  /** @type {Database | null} */ #db = null;
  /** @type {Marker | null} */ #state = null;
  #done = false;
  #upgraded = false;

  /**
   * @param {IDBDatabase} idb
   * @param {string} source
   * @param {string[]} stores
   * @param {number} batchSize
   * @param {number} batchBytes
   */
  constructor(idb, source, stores, batchSize, batchBytes) {
    this.#idb = idb;
    this.#source = source;
    this.#stores = stores;
    this.#prefixes = stores.map((s) => {
      const name = storeNameBytes(s);
      const p = new Uint8Array(name.length + 1);
      p.set(name);
      return p;
    });
    this.#batchSize = batchSize;
    this.#batchBytes = batchBytes;
    // The page upgrades or deletes the source: let it (an open connection would block it), and
    // fail the next step by name. A later call resumes from the marker.
    idb.onversionchange = () => {
      this.#upgraded = true;
      idb.close();
    };
  }

  /**
   * Opens the source and checks the stores (every one of it by default); the destination is
   * given later (attach), so a refusal here creates nothing.
   * @param {string} source
   * @param {{ stores?: string[], batchSize?: number, batchBytes?: number }} options  checked
   * @returns {Promise<IndexedDBImport>}
   */
  static async open(source, options) {
    if (typeof source !== 'string') {
      throw invalid(`importIndexedDB: the source must be the name of an IndexedDB database, not ` +
        `${describe(source)}`);
    }
    const idb = await openSource(source);
    try {
      const names = Array.from(idb.objectStoreNames);
      const stores = options.stores ?? names;
      for (const s of stores) {
        if (!names.includes(s)) {
          throw new SkvError('not_found', `indexeddb:${source}: no object store ${describe(s)}`,
            { reason: 'no_such_source' });
        }
      }
      return new IndexedDBImport(idb, source, [...stores], options.batchSize ?? DEFAULT_BATCH_SIZE,
        options.batchBytes ?? DEFAULT_BATCH_BYTES);
    } catch (e) {
      idb.close();
      throw e;
    }
  }

  /**
   * Takes the destination: resumes from its marker, or starts. A marker of another source (or
   * other stores) is refused with source_mismatch.
   * @param {Database} db
   */
  attach(db) {
    const m = readMarker(db);
    if (m && (m.source !== this.#source || m.stores.length !== this.#stores.length ||
      m.stores.some((s, i) => s !== this.#stores[i]))) {
      throw importError('source_mismatch', `opfs:${db.name} holds an unfinished import of ` +
        `IndexedDB database ${describe(m.source)} (stores ${m.stores.map((s) => describe(s))
          .join(', ')}); finish it, or import into another database`);
    }
    this.#db = db;
    this.#state = m ?? {
      format: MARKER_FORMAT, source: this.#source, stores: this.#stores, store: 0, after: null,
      records: 0, bytes: 0, batches: 0,
    };
    this.#done = this.#stores.length === 0;
  }

  /** @returns {Progress} */
  #progress() {
    const s = /** @type {Marker} */ (this.#state);
    const i = Math.min(s.store, this.#stores.length - 1);
    return {
      store: i >= 0 ? this.#stores[i] : null,
      records: s.records,
      bytes: s.bytes,
      storesDone: Math.min(s.store, this.#stores.length),
      storesTotal: this.#stores.length,
      batches: s.batches,
      done: this.#done,
    };
  }

  /**
   * Reads one batch of the current store from IndexedDB: the records after `after`, with
   * their skv keys and encoded values, and whether the store ends with them.
   * @param {number} index
   * @param {Uint8Array | null} after
   * @returns {Promise<{ keys: Uint8Array[], values: Array<Uint8Array | Promise<Uint8Array>>,
   *   last: Uint8Array | null, bytes: number, ended: boolean }>}
   */
  #read(index, after) {
    const store = this.#stores[index];
    const prefix = this.#prefixes[index];
    return new Promise((resolve, reject) => {
      /** @type {IDBTransaction} */
      let tx;
      try {
        tx = this.#idb.transaction(store, 'readonly');
      } catch (e) {
        reject(asSkvError(e));
        return;
      }
      const range = after ? IDBKeyRange.lowerBound(decodeIndexedDBKey(after), true) : null;
      const req = tx.objectStore(store).openCursor(range);
      /** @type {Uint8Array[]} */
      const keys = [];
      /** @type {Array<Uint8Array | Promise<Uint8Array>>} */
      const values = [];
      /** @type {Uint8Array | null} */
      let last = null;
      let bytes = 0;
      let full = false;
      /** @type {unknown} */
      let failed = null;
      /** @type {{ ended: boolean } | null} */
      let outcome = null;
      req.onsuccess = () => {
        const cursor = req.result;
        if (full) {
          outcome = { ended: cursor === null };
          return;
        }
        if (!cursor) {
          outcome = { ended: true };
          return;
        }
        try {
          const encoded = encodeIndexedDBKey(cursor.primaryKey);
          if (prefix.length + encoded.length > MAX_KEY_BYTES) {
            throw importError('key_too_large', `indexeddb:${this.#source}/${store}: a key ` +
              `encodes to ${prefix.length + encoded.length} bytes with its store name (skv keys ` +
              `are at most ${MAX_KEY_BYTES})`);
          }
          const value = encodeValueParts(cursor.value);
          if (value.size > MAX_VALUE_BYTES) {
            throw importError('value_too_large', `indexeddb:${this.#source}/${store}: a value ` +
              `encodes to ${value.size} bytes (skv values are at most ${MAX_VALUE_BYTES})`);
          }
          const key = new Uint8Array(prefix.length + encoded.length);
          key.set(prefix);
          key.set(encoded, prefix.length);
          keys.push(key);
          values.push(joinValue(value));
          last = encoded;
          bytes += key.length + value.size;
        } catch (e) {
          failed = e;
          tx.abort();
          return;
        }
        full = keys.length >= this.#batchSize || bytes >= this.#batchBytes;
        cursor.continue();
      };
      tx.oncomplete = () => {
        if (outcome) resolve({ keys, values, last, bytes, ended: outcome.ended });
        else reject(new SkvError('io', `indexeddb:${this.#source}/${store}: the read ended early`));
      };
      tx.onabort = () => {
        const e = failed ?? tx.error ?? req.error;
        if (e instanceof SkvError) {
          reject(new SkvError(e.code, `indexeddb:${this.#source}/${store}: ${e.message}`,
            { reason: e.reason }));
        } else {
          reject(asSkvError(e ?? new Error('the IndexedDB transaction was aborted')));
        }
      };
    });
  }

  /**
   * Imports the next batch in one skv transaction (with the marker, or the marker's removal
   * after the last batch) and reports the progress after it.
   * @returns {Promise<Progress>}
   */
  async step() {
    const db = this.#db;
    const s = this.#state;
    if (!db || !s) throw new SkvError('closed', 'importIndexedDB: the import is closed');
    if (this.#done) return this.#progress();
    if (this.#upgraded) {
      throw new SkvError('busy', `indexeddb:${this.#source}: the database was upgraded or ` +
        'deleted during the import (call importIndexedDB again to resume)');
    }
    const after = s.after === null ? null : unhex(s.after);
    const batch = await this.#read(s.store, after);
    const values = await Promise.all(batch.values);
    const next = { ...s, batches: s.batches + 1 };
    if (batch.ended) {
      next.store = s.store + 1;
      next.after = null;
      next.records = 0;
      next.bytes = 0;
    } else {
      next.after = hex(/** @type {Uint8Array} */ (batch.last));
      next.records = s.records + batch.keys.length;
      next.bytes = s.bytes + batch.bytes;
    }
    const finished = next.store >= this.#stores.length;
    const tx = db.begin();
    try {
      for (let i = 0; i < batch.keys.length; i++) tx.set(batch.keys[i], values[i]);
      if (finished) tx.delete(MARKER_KEY);
      else tx.set(MARKER_KEY, JSON.stringify(next));
    } catch (e) {
      tx.rollback();
      throw e;
    }
    await tx.commit();
    // The report names the store this batch belonged to, with its totals.
    const report = {
      store: this.#stores[s.store],
      records: s.records + batch.keys.length,
      bytes: s.bytes + batch.bytes,
      storesDone: next.store,
      storesTotal: this.#stores.length,
      batches: next.batches,
      done: finished,
    };
    this.#state = next;
    this.#done = finished;
    return report;
  }

  /** The progress so far (before any step: what the marker says). */
  get progress() {
    return this.#progress();
  }

  close() {
    this.#idb.close();
    this.#db = null;
  }
}

/**
 * Checks the destination of an import: a database name, or an open Database of the worker API.
 * @param {unknown} into
 * @param {string} what
 * @returns {string | Database}
 */
function checkInto(into, what) {
  if (into instanceof Database) return into;
  if (typeof into === 'string') {
    checkName(into);
    return into;
  }
  throw invalid(`${what}: the destination must be a database name or an open Database, not ` +
    `${describe(into)}`);
}

/**
 * Imports IndexedDB database `source` into skv (the worker API; see docs/indexeddb.md).
 * @param {string} source
 * @param {import('../types/worker.js').IndexedDBImportOptions} options
 * @returns {Promise<Progress>}
 */
export async function importIndexedDB(source, options) {
  const o = checkOptions(options, IDB_IMPORT_OPTIONS, 'importIndexedDB');
  const into = checkInto(o.into, 'importIndexedDB');
  if (typeof into !== 'string' && o.openOptions) {
    throw invalid('importIndexedDB: openOptions go with a database name, not an open Database');
  }
  const job = await IndexedDBImport.open(source, o);
  /** @type {Database | null} */
  let owned = null;
  try {
    let db;
    if (typeof into === 'string') db = owned = await open(into, o.openOptions);
    else db = into;
    job.attach(db);
    let p = job.progress;
    while (!p.done) {
      p = await job.step();
      if (o.progress) await o.progress(p);
    }
    return p;
  } finally {
    job.close();
    if (owned) await owned.close();
  }
}

/**
 * Imports an INDXDB01 dump (bytes or a Blob) into `into` (a name or an open Database). The whole
 * dump is checked before anything is opened or written; a database this call created is removed
 * again if writing fails.
 * @param {unknown} dump
 * @param {unknown} into
 * @param {import('../types/common.js').DumpImportOptions} [options]
 * @returns {Promise<import('../types/common.js').DumpImportResult>}
 */
export async function importIndexedDBDump(dump, into, options) {
  const o = checkOptions(options, DUMP_IMPORT_OPTIONS, 'importIndexedDBDump');
  const dest = checkInto(into, 'importIndexedDBDump');
  if (typeof dest !== 'string' && o.openOptions) {
    throw invalid('importIndexedDBDump: openOptions go with a database name, not an open Database');
  }
  const source = dumpSource(dump);
  if (!source) {
    throw invalid(`importIndexedDBDump: the dump must be a Uint8Array, an ArrayBuffer (or view) ` +
      `or a Blob, not ${describe(dump)}`);
  }
  const { count, bytes } = await new DumpReader(source).check();
  const batchSize = o.batchSize ?? DEFAULT_BATCH_SIZE;
  const batchBytes = o.batchBytes ?? DEFAULT_BATCH_BYTES;
  /** @type {Database} */
  let db;
  let created = false;
  if (typeof dest === 'string') {
    created = !(await listDatabases()).includes(dest);
    db = await open(dest, o.openOptions);
  } else {
    db = dest;
  }
  let batches = 0;
  /** @type {import('./transaction.js').Transaction | null} */
  let tx = null;
  try {
    let n = 0;
    let size = 0;
    for await (const [k, v] of new DumpReader(source).records()) {
      tx ??= db.begin();
      tx.set(k, v);
      n++;
      size += k.length + v.length;
      if (n >= batchSize || size >= batchBytes) {
        const t = tx;
        tx = null;
        n = 0;
        size = 0;
        await t.commit();
        batches++;
      }
    }
    if (tx) {
      await tx.commit();
      batches++;
    }
  } catch (e) {
    if (tx) tx.rollback();
    if (typeof dest === 'string') {
      await db.close();
      if (created) await deleteDatabase(dest).catch(() => {});
    }
    throw asSkvError(e);
  }
  if (typeof dest === 'string') await db.close();
  return { records: count, bytes, batches };
}
