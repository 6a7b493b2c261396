// @ts-check
// skv inside a dedicated worker: the synchronous API, for code that already runs in a worker.
//
//   import { open } from 'skv/worker';
//   const db = await open('notes');
//   const tx = db.begin();
//   tx.set('note:1', 'hello');
//   await tx.commit();
//   db.get('note:1', { as: 'string' });   // 'hello'
//   for (const [key, value] of db.range('note:', 'note;')) { ... }
//
// From the main thread use the client (import { open } from 'skv'), which runs this code in a
// worker of its own and exposes the same calls as promises.

export { open, deleteDatabase, Database } from './database.js';
export { Transaction } from './transaction.js';
export { RangeIterator } from './range.js';
export { SkvError, ERROR_CODES, ENCRYPTION_REASONS } from './errors.js';
export { listDatabases } from './slots.js';
export { importFiles } from './import.js';
export { importIndexedDB, importIndexedDBDump } from './idb-import.js';
export {
  MARKER_KEY as INDEXEDDB_IMPORT_MARKER, encodeIndexedDBKey, decodeIndexedDBKey,
  indexedDBRecordKey, indexedDBStoreRange, splitIndexedDBKey,
} from './idb-key.js';
export { encodeIndexedDBValue, decodeIndexedDBValue } from './idb-value.js';
