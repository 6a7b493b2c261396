// @ts-check
// The OPFS side of the slot pool: the files of one database and their sync access handles.
//
// A database `name` is the directory skv/<name>/ of the origin's OPFS root. It holds slot files
// slot-000000, slot-000001, ... Each is one slot of the pool (platform/opfs/slot_pool.h); the
// headers inside name the logical files, so the file names only fix the slot order. Opening and
// creating handles is asynchronous, which is why the pool is opened up front and topped up
// between calls (SlotTable.grow).
//
// A slot file's name is exactly what slotFileName() makes of its index: 'slot-' and the index in
// decimal, zero-padded to six digits. Any other entry in the directory ('slot-', 'slot-0.0',
// 'slot-1e1', 'slot-0000001', a directory, notes.txt, ...) is not the pool's: it is never opened,
// changed or removed, and new slot files are numbered past every name that looks like one.
//
// A sync handle is exclusive per file, across tabs and workers; the Web Lock the database takes
// first (database.js) turns a second opener into a clear `busy` error instead of a
// NoModificationAllowedError from the first slot.

import { SkvError, asSkvError } from './errors.js';
import { describe } from './options.js';

const ROOT_DIR = 'skv';
const SLOT_PREFIX = 'slot-';

/**
 * A database name: a string of 1 to 200 characters (UTF-16 code units) without '/', '\\' or NUL,
 * and neither '.' nor '..'. Anything else is invalid_argument.
 * @param {unknown} name
 * @returns {asserts name is string}
 */
export function checkName(name) {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200 || /[/\\\0]/.test(name) ||
      name === '.' || name === '..') {
    throw new SkvError('invalid_argument', "database name must be 1..200 characters without '/', " +
      `'\\' or NUL, and not '.' or '..': ${typeof name === 'string' ? JSON.stringify(name) : describe(name)}`);
  }
}

/** Fails with not_supported where there is no Origin Private File System (not a browser). */
export function checkOpfs() {
  if (typeof navigator === 'undefined' || !navigator.storage || !navigator.storage.getDirectory) {
    throw new SkvError('not_supported', 'this context has no Origin Private File System ' +
      '(skv runs in a browser page or worker)');
  }
}

/** @param {number} index */
function slotFileName(index) {
  return SLOT_PREFIX + String(index).padStart(6, '0');
}

const SLOT_NAME = /^slot-([0-9]{6,16})$/;

/**
 * The index a slot file's name stands for, or -1 when the name is not one slotFileName() makes
 * (no sign, point, exponent, space or extra leading zero).
 * @param {string} name
 * @returns {number}
 */
export function slotIndex(name) {
  const m = SLOT_NAME.exec(name);
  if (!m) return -1;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && slotFileName(n) === name ? n : -1;
}

/** @param {unknown} e */
const notFound = (e) => /** @type {any} */ (e)?.name === 'NotFoundError';

/**
 * @param {boolean} create
 * @returns {Promise<FileSystemDirectoryHandle>}
 */
async function rootDir(create) {
  checkOpfs();
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(ROOT_DIR, { create });
}

/**
 * The directory of database `name`, or null when it does not exist and `create` is false.
 * `created` says whether this call made it (and `rootCreated` whether it made the skv/ folder
 * too), so that an open that then fails can take back what it made (discardDatabase).
 * @param {string} name
 * @param {boolean} create
 * @returns {Promise<{ dir: FileSystemDirectoryHandle, created: boolean, rootCreated: boolean } | null>}
 */
export async function databaseDir(name, create) {
  try {
    let root;
    let rootCreated = false;
    try {
      root = await rootDir(false);
    } catch (e) {
      if (!notFound(e) || !create) throw e;
      root = await rootDir(true);
      rootCreated = true;
    }
    try {
      return { dir: await root.getDirectoryHandle(name), created: false, rootCreated };
    } catch (e) {
      if (!notFound(e) || !create) throw e;
      return { dir: await root.getDirectoryHandle(name, { create: true }), created: true, rootCreated };
    }
  } catch (e) {
    if (notFound(e)) return null;
    throw asSkvError(e);
  }
}

/**
 * Removes what databaseDir created for an open that failed: the database's directory, and the
 * skv/ folder when that call made it and nothing else is in it. Errors are ignored (the open's
 * own error is the one to report).
 * @param {string} name
 * @param {boolean} rootCreated
 */
export async function discardDatabase(name, rootCreated) {
  try {
    const top = await navigator.storage.getDirectory();
    const root = await top.getDirectoryHandle(ROOT_DIR);
    await root.removeEntry(name, { recursive: true });
    if (rootCreated) await top.removeEntry(ROOT_DIR);
  } catch {
    // Not there, or the skv/ folder holds another database now.
  }
}

/**
 * The slot files of a database directory, as [index, name] in slot order; other entries are
 * left out.
 * @param {FileSystemDirectoryHandle} dir
 * @returns {Promise<Array<[number, string]>>}
 */
async function slotFiles(dir) {
  /** @type {Array<[number, string]>} */
  const slots = [];
  for await (const [entry, handle] of /** @type {any} */ (dir).entries()) {
    const n = slotIndex(entry);
    if (n >= 0 && handle.kind === 'file') slots.push([n, entry]);
  }
  return slots.sort((a, b) => a[0] - b[0]);
}

// The names of the databases of this origin: the directories of skv/ that hold a slot file.
/** @returns {Promise<string[]>} */
export async function listDatabases() {
  let root;
  try {
    root = await rootDir(false);
  } catch (e) {
    if (notFound(e)) return [];
    throw asSkvError(e);
  }
  const names = [];
  try {
    for await (const [entry, handle] of /** @type {any} */ (root).entries()) {
      if (handle.kind === 'directory' && (await slotFiles(handle)).length > 0) names.push(entry);
    }
  } catch (e) {
    throw asSkvError(e);
  }
  return names.sort();
}

/**
 * Removes database `name`: its slot files, then its directory if nothing else is in it (entries
 * the pool did not make stay where they are). The database must not be open anywhere.
 * @param {string} name
 */
export async function removeDatabase(name) {
  checkName(name);
  let root;
  let dir;
  try {
    root = await rootDir(false);
    dir = await root.getDirectoryHandle(name);
  } catch (e) {
    if (notFound(e)) return;
    throw asSkvError(e);
  }
  try {
    for (const [, file] of await slotFiles(dir)) await dir.removeEntry(file);
  } catch (e) {
    if (/** @type {any} */ (e)?.name === 'NoModificationAllowedError') {
      throw new SkvError('busy', `opfs:${name}: the database is open elsewhere`, { cause: e });
    }
    if (!notFound(e)) throw asSkvError(e);
  }
  try {
    await root.removeEntry(name);
  } catch (e) {
    // Not empty: it holds entries that are not the pool's, which are left alone.
    if (!notFound(e) && /** @type {any} */ (e)?.name !== 'InvalidModificationError') {
      throw asSkvError(e);
    }
  }
}

/**
 * The sync access handles of one database's slot files, in slot order; the glue reads them
 * through Module.skvTables (web/native/js_slot_handles.cpp).
 */
export class SlotTable {
  /**
   * `maxSlots` caps the pool (0 = no cap beyond the browser's quota).
   * @param {string} name
   * @param {FileSystemDirectoryHandle} dir
   * @param {number} maxSlots
   */
  constructor(name, dir, maxSlots) {
    this.name = name;
    this.dir = dir;
    this.maxSlots = maxSlots;
    /** @type {any[]} FileSystemSyncAccessHandle */
    this.handles = [];
    this.nextIndex = 0;
  }

  /**
   * Opens every slot file of the directory, in slot order.
   * @param {string} name
   * @param {FileSystemDirectoryHandle} dir
   * @param {number} maxSlots
   */
  static async open(name, dir, maxSlots) {
    const table = new SlotTable(name, dir, maxSlots);
    const indices = [];
    // New slot files are numbered past every entry with a slot file's name, a directory too.
    let next = 0;
    try {
      for await (const [entry, handle] of /** @type {any} */ (dir).entries()) {
        const n = slotIndex(entry);
        if (n < 0) continue;
        next = Math.max(next, n + 1);
        if (handle.kind === 'file') indices.push(n);
      }
    } catch (e) {
      throw asSkvError(e);
    }
    indices.sort((a, b) => a - b);
    try {
      for (const n of indices) await table.openSlot(n, false);
    } catch (e) {
      table.close();
      if (/** @type {any} */ (e)?.name === 'NoModificationAllowedError') {
        throw new SkvError('busy', `opfs:${name}: the database is open in another tab or worker`,
          { cause: e });
      }
      throw asSkvError(e);
    }
    table.nextIndex = next;
    return table;
  }

  /**
   * @param {number} index
   * @param {boolean} create
   */
  async openSlot(index, create) {
    const file = await this.dir.getFileHandle(slotFileName(index), { create });
    this.handles.push(await /** @type {any} */ (file).createSyncAccessHandle());
  }

  /**
   * How many more slots the cap allows, up to `wanted`.
   * @param {number} wanted
   */
  room(wanted) {
    if (!this.maxSlots) return wanted;
    return Math.max(0, Math.min(wanted, this.maxSlots - this.handles.length));
  }

  /**
   * Creates and opens up to `n` new slot files (fewer at the cap); returns how many were added.
   * @param {number} n
   */
  async grow(n) {
    const add = this.room(n);
    let added = 0;
    try {
      for (; added < add; added++) await this.openSlot(this.nextIndex++, true);
    } catch (e) {
      if (added === 0) throw asSkvError(e);
    }
    return added;
  }

  /** The bytes of every slot file, headers included: what the database takes in OPFS. */
  fileBytes() {
    let total = 0;
    for (const h of this.handles) total += h.getSize();
    return total;
  }

  close() {
    for (const h of this.handles) {
      try {
        h.close();
      } catch (e) {
        // Already closed (a terminated database); nothing more to release.
      }
    }
    this.handles = [];
  }
}
