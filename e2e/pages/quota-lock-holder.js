// Holds a database open until told to close: { cmd: 'open', name } opens it, writes a key and
// posts { progress: 'opened' }; { cmd: 'close' } closes it and posts { done }.
import { open, deleteDatabase, SkvError } from '/web/src/worker.js';

let db = null;
let sameWorker = null;

self.onmessage = async (e) => {
  try {
    if (e.data.cmd === 'open') {
      await deleteDatabase(e.data.name);
      db = await open(e.data.name);
      await db.set('owner', 'holder');
      // A second open in the same worker is refused too.
      try {
        await open(e.data.name);
        sameWorker = 'opened twice';
      } catch (err) {
        sameWorker = err instanceof SkvError ? err.code : String(err);
      }
      self.postMessage({ progress: 'opened' });
    } else {
      await db.close();
      self.postMessage({ done: true, result: { sameWorker } });
    }
  } catch (err) {
    self.postMessage({ done: true, error: { code: err.code, message: String(err.message) } });
  }
};
