// @ts-check
// What every database of one worker shares: the wasm core (loaded once), the Web Locks named
// after databases, and the names open in this worker. Used by open() (database.js), checkpoints
// and imports (fresh.js).

import createSkvCore from '../dist/skv-core.mjs';
import { SkvError, asSkvError } from './errors.js';

/** @type {Promise<any> | null} */
let corePromise = null;

/** The names of the databases this worker has open, or is creating. */
export const openNames = new Set();

/** The loaded wasm module (a promise for it). */
export function loadCore() {
  if (!corePromise) {
    corePromise = createSkvCore({ skvTables: [] }).catch((/** @type {any} */ e) => {
      corePromise = null;
      throw new SkvError('not_supported', `cannot load the skv wasm core: ${e && e.message}`,
        { cause: e });
    });
  }
  return corePromise;
}

/**
 * Takes the Web Lock of database `name`; resolves with its release function.
 * @param {string} name
 * @param {boolean} wait
 * @returns {Promise<() => void>}
 */
export async function takeLock(name, wait) {
  if (typeof navigator === 'undefined' || !navigator.locks) return () => {};
  return new Promise((resolve, reject) => {
    navigator.locks.request(`skv:${name}`, wait ? {} : { ifAvailable: true }, (lock) => {
      if (!lock) {
        reject(new SkvError('busy', `opfs:${name}: the database is open in another tab or worker`));
        return undefined;
      }
      // The lock is held until the promise returned here settles: until close().
      return new Promise((release) => resolve(() => release(undefined)));
    }).catch((e) => reject(asSkvError(e)));
  });
}
