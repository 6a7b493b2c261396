// @ts-check
// The files of a database as exportFiles() returns them and importFiles() takes them: an array
// of [name, bytes] pairs, one per logical file, named as the native build names them in its
// directory. Both sides check a set before using it (the client before it sends anything, the
// worker again, and the wasm glue checks each name once more).

import { SkvError, invalid } from './errors.js';
import { describe, errorText } from './options.js';

// The names the core writes (core/src/format/file_names.h): a file number zero-padded to six
// digits, with no extra leading zero past six.
const NUMBER = '(?:[0-9]{6}|[1-9][0-9]{6,16})';
const FILE_NAME = new RegExp(`^(?:${NUMBER}\\.(?:sst|wal|vlog)|MANIFEST-${NUMBER}|CURRENT)$`);

/**
 * Checks a set of database files; returns a new array of [name, Uint8Array] pairs (views of the
 * caller's bytes, not copies). Refused as invalid_argument, naming the entry: anything but an
 * array of two-element arrays, a name the core does not write (LOCK, a path, *.tmp, ...), a
 * name given twice, contents that are not bytes, and a set without CURRENT.
 * @param {unknown} files
 * @param {string} what  the call, for messages
 * @returns {Array<[string, Uint8Array]>}
 */
export function checkFiles(files, what) {
  if (!Array.isArray(files)) {
    throw invalid(`${what}: the files must be an array of [name, bytes] pairs, not ` +
      `${describe(files)}`);
  }
  /** @type {Array<[string, Uint8Array]>} */
  const out = [];
  const seen = new Set();
  let i = 0;
  try {
    for (; i < files.length; i++) {
      const entry = files[i];
      if (!Array.isArray(entry) || entry.length !== 2) {
        throw invalid(`${what}: file ${i} must be a [name, bytes] pair, not ${describe(entry)}`);
      }
      const [name, bytes] = entry;
      if (typeof name !== 'string' || !FILE_NAME.test(name)) {
        throw invalid(`${what}: file ${i}: ${describe(name)} is not the name of a database file ` +
          '(NNNNNN.sst, NNNNNN.wal, NNNNNN.vlog, MANIFEST-NNNNNN or CURRENT; the native LOCK ' +
          'file is left out)');
      }
      if (seen.has(name)) throw invalid(`${what}: ${name} is given twice`);
      seen.add(name);
      /** @type {Uint8Array} */
      let view;
      if (bytes instanceof Uint8Array) view = bytes;
      else if (ArrayBuffer.isView(bytes)) {
        view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } else if (bytes instanceof ArrayBuffer) view = new Uint8Array(bytes);
      else {
        throw invalid(`${what}: the bytes of ${name} must be a Uint8Array, an ArrayBuffer view ` +
          `or an ArrayBuffer, not ${describe(bytes)}`);
      }
      out.push([name, view]);
    }
  } catch (e) {
    if (e instanceof SkvError) throw e;
    throw invalid(`${what}: file ${i} could not be read: ${errorText(e)}`);
  }
  if (!seen.has('CURRENT')) {
    throw invalid(`${what}: the files hold no CURRENT (it names the live manifest; without it ` +
      'they are no database)');
  }
  return out;
}
