// @ts-check
// importFiles(): makes database `name` from a set of files, the opposite of exportFiles() (a
// directory the native build wrote, read by the page; another database's export).
//
// Every name and the options are checked first; then the name is claimed and its directory and
// blank slot files made (fresh.js), the files are written through the pool's storage by the
// glue (web/native/web_import.h), CURRENT last, and the result is opened once, read-only, with
// `options` (a key for an encrypted set), and every live file is read and checked
// (WebDb::verify). So a damaged or incomplete set is refused with the core's own error (corrupt
// table, missing manifest, wrong key, ...) and never becomes a database: on any failure the
// directory and everything in it are removed. Resolves once the database is durable (every
// file synced, CURRENT written) and closed.
//
// Memory: each file's bytes go to the glue in chunks of CHUNK bytes, each copied once into wasm
// memory and written out; the caller's arrays are read, never copied whole.

import { SkvError, asSkvError, reasonOf } from './errors.js';
import { checkOptions, IMPORT_OPTIONS } from './options.js';
import { checkName, checkOpfs } from './slots.js';
import { checkFiles } from './files.js';
import { loadCore } from './core.js';
import { NewDatabase } from './fresh.js';

const CHUNK = 1 << 20;

/**
 * @param {any} native  a WebImport or WebDb
 */
function glueError(native) {
  const reason = typeof native.errorReason === 'function' ? native.errorReason() : '';
  return new SkvError(native.errorCode(), native.errorMessage(), { reason: reasonOf(reason) });
}

/**
 * Makes database `name` from `files` ([name, bytes] pairs); see the top of this file.
 * @param {string} name
 * @param {ReadonlyArray<readonly [string, Uint8Array | ArrayBuffer | ArrayBufferView]>} files
 * @param {import('../types/common.js').ImportOptions} [options]
 * @returns {Promise<void>}
 */
export async function importFiles(name, files, options) {
  checkName(name);
  const list = checkFiles(files, 'importFiles');
  const o = checkOptions(options, IMPORT_OPTIONS, 'importFiles');
  checkOpfs();
  const core = await loadCore();
  const fresh = await NewDatabase.prepare(name, 'importFiles');
  try {
    // One slot per file (CURRENT included: logs and tables leave the last free slot to it), and
    // a few for the first read-write open to start a WAL segment and a manifest.
    await fresh.grow(list.length + 4, 'the import');
    const id = fresh.register(core);
    const writer = new core.WebImport();
    try {
      if (writer.begin(name, id) !== 0) throw glueError(writer);
      for (const [file, bytes] of list) {
        if (writer.startFile(file) !== 0) throw glueError(writer);
        for (let at = 0; at < bytes.length; at += CHUNK) {
          if (writer.append(bytes.subarray(at, at + CHUNK)) !== 0) throw glueError(writer);
        }
        if (writer.endFile() !== 0) throw glueError(writer);
      }
      if (writer.finish() !== 0) throw glueError(writer);
    } finally {
      writer.delete();
    }
    const db = new core.WebDb();
    try {
      if (db.openReadOnly(name, id, o) !== 0) throw glueError(db);
      const rc = db.verify();
      const err = rc !== 0 ? glueError(db) : null;
      if (db.close() !== 0 && !err) throw glueError(db);
      if (err) throw err;
    } finally {
      db.delete();
    }
    fresh.finish();
  } catch (e) {
    await fresh.discard();
    throw asSkvError(e);
  }
}
