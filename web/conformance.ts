// Compile-time only (web/tsconfig.json): the implementation in web/src must be assignable to the
// declarations in web/types, entry point by entry point, so the two cannot drift apart.
import * as client from './src/index.js';
import * as worker from './src/worker.js';
import type * as ClientApi from './types/index.js';
import type * as WorkerApi from './types/worker.js';

declare function check<T>(value: T): void;

check<typeof ClientApi.open>(client.open);
check<typeof ClientApi.listDatabases>(client.listDatabases);
check<typeof ClientApi.deleteDatabase>(client.deleteDatabase);
check<typeof ClientApi.importFiles>(client.importFiles);
check<typeof ClientApi.ERROR_CODES>(client.ERROR_CODES);
check<typeof ClientApi.ENCRYPTION_REASONS>(client.ENCRYPTION_REASONS);
check<ClientApi.SkvError>(new client.SkvError('encryption', 'x', { reason: 'wrong_key' }));
check<ClientApi.SkvError>(new client.SkvError('io', 'x', { cause: 1 }));
check<ClientApi.Database>(null as unknown as client.Database);
check<ClientApi.Transaction>(null as unknown as client.Transaction);
check<ClientApi.RangeIterator<unknown>>(null as unknown as client.RangeIterator);

check<typeof WorkerApi.open>(worker.open);
check<typeof WorkerApi.listDatabases>(worker.listDatabases);
check<typeof WorkerApi.deleteDatabase>(worker.deleteDatabase);
check<typeof WorkerApi.importFiles>(worker.importFiles);
check<typeof WorkerApi.ERROR_CODES>(worker.ERROR_CODES);
check<typeof WorkerApi.ENCRYPTION_REASONS>(worker.ENCRYPTION_REASONS);
check<WorkerApi.Database>(null as unknown as worker.Database);
check<WorkerApi.Transaction>(null as unknown as worker.Transaction);
check<WorkerApi.RangeIterator<unknown>>(null as unknown as worker.RangeIterator);

for (const api of [client, worker] as const) {
  check<typeof ClientApi.encodeIndexedDBKey>(api.encodeIndexedDBKey);
  check<typeof ClientApi.decodeIndexedDBKey>(api.decodeIndexedDBKey);
  check<typeof ClientApi.encodeIndexedDBValue>(api.encodeIndexedDBValue);
  check<typeof ClientApi.decodeIndexedDBValue>(api.decodeIndexedDBValue);
  check<typeof ClientApi.indexedDBRecordKey>(api.indexedDBRecordKey);
  check<typeof ClientApi.indexedDBStoreRange>(api.indexedDBStoreRange);
  check<typeof ClientApi.splitIndexedDBKey>(api.splitIndexedDBKey);
  check<typeof ClientApi.INDEXEDDB_IMPORT_MARKER>(api.INDEXEDDB_IMPORT_MARKER);
}
check<typeof ClientApi.importIndexedDB>(client.importIndexedDB);
check<typeof ClientApi.importIndexedDBDump>(client.importIndexedDBDump);
check<typeof WorkerApi.importIndexedDB>(worker.importIndexedDB);
check<typeof WorkerApi.importIndexedDBDump>(worker.importIndexedDBDump);
