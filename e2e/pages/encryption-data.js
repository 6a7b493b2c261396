// What tests/encryption.mjs and its worker share, in the page and in the worker.

// Keys and values carry these words, so the exported files can be searched for them.
export const KEY_WORD = 'opaquekeyword';
export const VALUE_WORD = 'visiblevalueword';

// SHA-256 of every file in the database's directory, by name: what a refused open must not change.
export async function digest(name) {
  const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('skv');
  const dir = await root.getDirectoryHandle(name);
  const out = {};
  for await (const [file, handle] of dir.entries()) {
    if (handle.kind !== 'file') continue;
    const bytes = await (await handle.getFile()).arrayBuffer();
    const h = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    out[file] = Array.from(h, (x) => x.toString(16).padStart(2, '0')).join('');
  }
  return Object.fromEntries(Object.entries(out).sort());
}

const str = (b) => (typeof b === 'string' ? b : new TextDecoder().decode(b));

// Every entry as [key, value] strings (the worker API and the client alike).
export const entries = async (db) => (await db.scan(undefined, undefined, { as: 'string' }))
  .map(([k, v]) => [str(k), str(v)]);
