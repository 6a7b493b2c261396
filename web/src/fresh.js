// @ts-check
// NewDatabase: a database that a call makes from nothing, a checkpoint's target or an import,
// while the call is under way. prepare() claims the name (no database of that name open in this
// worker, its Web Lock, and no directory of that name yet: a directory that exists, empty or
// not, is refused as the core refuses a checkpoint path that exists), creates the directory and
// opens blank slot files, all before the synchronous wasm call that fills them. Then exactly one
// of finish() (the database is made: close the handles, release the lock) or discard() (remove
// the directory and everything in it, which this call created, then release the lock).

import { SkvError, asSkvError } from './errors.js';
import { openNames, takeLock } from './core.js';
import { SlotTable, databaseDir, discardDatabase } from './slots.js';

export class NewDatabase {
  /**
   * @param {string} name
   * @param {SlotTable} table
   * @param {() => void} release
   * @param {boolean} rootCreated
   */
  constructor(name, table, release, rootCreated) {
    this.name = name;
    this.table = table;
    this.release = release;
    this.rootCreated = rootCreated;
    /** @type {any} the wasm module the table is registered with */
    this.core = null;
    this.tableId = -1;
  }

  /**
   * Claims `name` and makes its directory; `what` names the call for messages ("checkpoint").
   * Refusals: busy (open or being made in this worker, or locked by another tab or worker),
   * invalid_argument "already exists" (the directory exists). A refusal creates nothing.
   * @param {string} name
   * @param {string} what
   * @returns {Promise<NewDatabase>}
   */
  static async prepare(name, what) {
    if (openNames.has(name)) {
      throw new SkvError('busy', `opfs:${name}: the database is open in this worker`);
    }
    openNames.add(name);
    /** @type {(() => void) | null} */
    let release = null;
    /** @type {{ created: boolean, rootCreated: boolean } | null} */
    let made = null;
    try {
      release = await takeLock(name, false);
      const found = await databaseDir(name, true);
      if (!found) throw new SkvError('io', `opfs:${name}: the directory could not be made`);
      made = found;
      if (!found.created) {
        throw new SkvError('invalid_argument', `opfs:${name}: already exists (${what} makes a ` +
          'new database, and needs a name that no database or directory has)');
      }
      const table = await SlotTable.open(name, found.dir, 0);
      return new NewDatabase(name, table, release, found.rootCreated);
    } catch (e) {
      if (made && made.created) await discardDatabase(name, made.rootCreated);
      if (release) release();
      openNames.delete(name);
      throw asSkvError(e);
    }
  }

  /**
   * Opens `n` more blank slot files; fails with quota (naming `what`) if the browser gave fewer.
   * @param {number} n
   * @param {string} what
   */
  async grow(n, what) {
    const added = await this.table.grow(n);
    if (added < n) {
      throw new SkvError('quota', `opfs:${this.name}: ${what} needs ${n} slot files, and only ` +
        `${added} could be made`);
    }
  }

  /**
   * Registers the handle table with the wasm module; returns its id for the glue.
   * @param {any} core
   * @returns {number}
   */
  register(core) {
    this.core = core;
    this.tableId = core.skvTables.length;
    core.skvTables.push(this.table);
    return this.tableId;
  }

  #close() {
    if (this.core && this.tableId >= 0) this.core.skvTables[this.tableId] = null;
    this.tableId = -1;
    this.table.close();
  }

  /** The database is made: closes its handles and releases its lock. */
  finish() {
    this.#close();
    this.release();
    openNames.delete(this.name);
  }

  /** Removes everything this call made (the directory and its files); never throws. */
  async discard() {
    this.#close();
    await discardDatabase(this.name, this.rootCreated);
    this.release();
    openNames.delete(this.name);
  }
}
