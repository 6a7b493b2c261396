// The worker API's importIndexedDB() and importIndexedDBDump() (skv/worker), into a Database
// open in this worker: IndexedDB is read here, in the worker. Returns what the test asserts.
import * as skv from '/web/src/worker.js';
import { serve } from './harness.js';

const outcome = async (p) => {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return { code: e.code, reason: e.reason, message: e.message };
  }
};

serve(async ({ source, name, batchBytes }) => {
  await skv.deleteDatabase(name);
  const db = await skv.open(name);
  try {
    const reports = [];
    const done = await skv.importIndexedDB(source, {
      into: db, stores: ['w'], batchBytes, progress: (p) => { reports.push(p); },
    });
    const rows = db.scan(...skv.indexedDBStoreRange('w'));
    const sizes = rows.map(([k, v]) => k.length + v.length);
    const odd = await outcome(skv.importIndexedDB(source, { into: db, stores: ['odd'] }));
    const long = await outcome(skv.importIndexedDB(source, { into: db, stores: ['long'] }));
    const withOptions = await outcome(skv.importIndexedDB(source,
      { into: db, stores: ['w'], openOptions: {} }));
    const dump = new Uint8Array([...new TextEncoder().encode('INDXDB01'), 0, 0, 0, 1,
      0, 0, 0, 2, 0xff, 0xfe, 0, 0, 0, 1, 42]);
    const dumped = await skv.importIndexedDBDump(dump, db);
    return {
      done, reports: reports.map((p) => p.records), bytes: reports.map((p) => p.bytes), sizes,
      count: rows.length, odd, long, withOptions, dumped,
      dumpValue: Array.from(db.get(new Uint8Array([0xff, 0xfe])) ?? []),
      stillOpen: db.count() > 0,
    };
  } finally {
    await db.close();
  }
});
