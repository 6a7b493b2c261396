// The example's worker: it owns the database and uses skv's synchronous worker API. The page
// (index.html) sends { op, text } messages and gets back { notes } or { error }.
//
// In an application the import is `import { open } from 'skv/worker';` (a bundler resolves it)
// or the URL the installed package is served at, e.g. '/node_modules/skv/web/src/worker.js'.
// Here it is the package's source in this repository, two folders up.
import { open, SkvError } from '../../web/src/worker.js';

// Open at once and listen at once: messages that arrive during the open wait for it.
const opened = open('example-notes');

/** The newest notes first, at most 20, as [key, text] pairs. */
function latest(db) {
  return db.scan('note:', 'note;', { as: 'string', reverse: true, limit: 20 });
}

self.onmessage = async ({ data }) => {
  try {
    const db = await opened;
    if (data.op === 'add') {
      // Keys sort as bytes: a zero-padded time keeps the notes in the order they were written.
      const key = `note:${String(Date.now()).padStart(15, '0')}:${crypto.randomUUID()}`;
      const tx = db.begin();
      tx.set(key, data.text);                  // buffered in the transaction
      tx.set('meta:last', key);
      await tx.commit();                       // durable (flushed to OPFS) when it resolves
    } else if (data.op === 'clear') {
      const tx = db.begin();
      for (const key of db.scan('note:', 'note;', { keysOnly: true })) tx.delete(key);
      tx.delete('meta:last');
      await tx.commit();
    }
    self.postMessage({ notes: latest(db), total: db.count('note:', 'note;') });
  } catch (e) {
    const error = e instanceof SkvError ? { code: e.code, message: e.message }
      : { code: 'unexpected', message: String(e) };
    self.postMessage({ error });
  }
};
