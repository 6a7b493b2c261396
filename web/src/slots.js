// The OPFS side of the slot pool: the files of one database and their sync access handles.
//
// A database `name` is the directory skv/<name>/ of the origin's OPFS root. It holds slot files
// slot-000000, slot-000001, ... Each is one slot of the pool (platform/opfs/slot_pool.h); the
// headers inside name the logical files, so the file names only fix the slot order. Opening and
// creating handles is asynchronous, which is why the pool is opened up front and topped up
// between calls (SlotTable.grow).
//
// A sync handle is exclusive per file, across tabs and workers; the Web Lock the database takes
// first (database.js) turns a second opener into a clear `busy` error instead of a
// NoModificationAllowedError from the first slot.

import { SkvError, asSkvError } from './errors.js';

const ROOT_DIR = 'skv';
const SLOT_PREFIX = 'slot-';

export function checkName(name) {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200 || /[/\\\0]/.test(name) ||
      name === '.' || name === '..') {
    throw new SkvError('invalid_argument',
      `database name must be 1..200 characters without '/', '\\' or NUL: ${JSON.stringify(name)}`);
  }
}

function slotFileName(index) {
  return SLOT_PREFIX + String(index).padStart(6, '0');
}

async function rootDir(create) {
  if (typeof navigator === 'undefined' || !navigator.storage || !navigator.storage.getDirectory) {
    throw new SkvError('not_supported', 'this context has no Origin Private File System');
  }
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(ROOT_DIR, { create });
}

// The directory of database `name`, or null when it does not exist and `create` is false.
export async function databaseDir(name, create) {
  try {
    const root = await rootDir(create);
    return await root.getDirectoryHandle(name, { create });
  } catch (e) {
    if (e && e.name === 'NotFoundError') return null;
    throw asSkvError(e);
  }
}

// The names of the databases of this origin.
export async function listDatabases() {
  let root;
  try {
    root = await rootDir(false);
  } catch (e) {
    if (e && e.name === 'NotFoundError') return [];
    throw asSkvError(e);
  }
  const names = [];
  for await (const [entry, handle] of root.entries()) {
    if (handle.kind === 'directory') names.push(entry);
  }
  return names.sort();
}

// Removes database `name` and its files. The database must not be open anywhere.
export async function removeDatabase(name) {
  checkName(name);
  let root;
  try {
    root = await rootDir(false);
    await root.removeEntry(name, { recursive: true });
  } catch (e) {
    if (e && e.name === 'NotFoundError') return;
    if (e && e.name === 'NoModificationAllowedError') {
      throw new SkvError('busy', `opfs:${name}: the database is open elsewhere`);
    }
    throw asSkvError(e);
  }
}

export class SlotTable {
  // `maxSlots` caps the pool (0 = no cap beyond the browser's quota).
  constructor(name, dir, maxSlots) {
    this.name = name;
    this.dir = dir;
    this.maxSlots = maxSlots;
    this.handles = [];
  }

  // Opens every slot file of the directory, in slot order.
  static async open(name, dir, maxSlots) {
    const table = new SlotTable(name, dir, maxSlots);
    const indices = [];
    for await (const [entry, handle] of dir.entries()) {
      if (handle.kind === 'file' && entry.startsWith(SLOT_PREFIX)) {
        const n = Number(entry.slice(SLOT_PREFIX.length));
        if (Number.isInteger(n) && n >= 0) indices.push(n);
      }
    }
    indices.sort((a, b) => a - b);
    try {
      for (const n of indices) await table.openSlot(n, false);
    } catch (e) {
      table.close();
      if (e && e.name === 'NoModificationAllowedError') {
        throw new SkvError('busy', `opfs:${name}: the database is open in another tab or worker`);
      }
      throw asSkvError(e);
    }
    table.nextIndex = indices.length ? indices[indices.length - 1] + 1 : 0;
    return table;
  }

  async openSlot(index, create) {
    const file = await this.dir.getFileHandle(slotFileName(index), { create });
    this.handles.push(await file.createSyncAccessHandle());
  }

  // How many more slots the cap allows.
  room(wanted) {
    if (!this.maxSlots) return wanted;
    return Math.max(0, Math.min(wanted, this.maxSlots - this.handles.length));
  }

  // Creates and opens up to `n` new slot files (fewer at the cap); returns how many were added.
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
