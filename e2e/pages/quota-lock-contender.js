// Tries to open a database another worker holds: reports the error, or (with waitForLock) how
// long it waited and what it read once it got the database.
import { open, deleteDatabase, SkvError } from '/web/src/worker.js';
import { serve, text } from './harness.js';

const describe = (e) => ({
  isSkvError: e instanceof SkvError, code: e && e.code, message: String(e && e.message),
});

serve(async ({ name, waitForLock, tryDelete }) => {
  let deleteError = null;
  if (tryDelete) {
    try {
      await deleteDatabase(name);
    } catch (e) {
      deleteError = describe(e);
    }
  }
  self.postMessage({ progress: 'opening' });
  const t0 = performance.now();
  let db;
  try {
    db = await open(name, { waitForLock, createIfMissing: false });
  } catch (e) {
    return { opened: false, error: describe(e), deleteError };
  }
  const waitedMs = Math.round(performance.now() - t0);
  const owner = text(db.get('owner'));
  await db.set('owner', 'contender');
  await db.close();
  return { opened: true, waitedMs, owner, deleteError };
});
