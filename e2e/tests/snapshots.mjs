// Iterating does not pin old versions. Every open transaction holds a snapshot, and compaction
// keeps every version a snapshot can see, so a loop that leaves its transaction open keeps one
// more version of each key it overwrote. Here one 4 KiB key is overwritten LOOPS times, with two
// iterations after each write; after flush() and compact() the tables must hold about one
// version (the bound allows 16), not LOOPS of them, and no transaction or iterator may be left.
//  - the documented pattern, db.range(): its transaction ends with the loop, whether the loop
//    runs to the end or breaks out;
//  - the pattern earlier docs showed, db.begin('readonly').range(), whose transaction nobody
//    ends: it is rolled back once garbage collected (the test calls gc(), exposed by the
//    browser's --expose-gc flag).
// Both APIs: the client from the page, the worker API in pages/snapshots-worker.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

const LOOPS = 150;
const VALUE = 4096;
const BOUND = 16 * VALUE;

let server;
let profile;
let browser;

before(async () => {
  server = await startServer();
  profile = newProfile();
  browser = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  await browser.page.waitForFunction(() => window.ready === true);
});

after(async () => {
  await browser.context.close();
  removeProfile(profile);
  await server.close();
});

// In the page: LOOPS overwrites, each followed by two iterations in `pattern`; then the table
// bytes after compaction and what is still open.
async function clientLoops({ name, pattern, loops, size }) {
  const { open, deleteDatabase } = window.skv;
  await deleteDatabase(name);
  const db = await open(name, { memtableSize: 64 << 10 });
  const range = () => (pattern === 'db.range' ? db.range() : db.begin('readonly').range());
  // The loops run in a function of their own, so no frame of this one still holds an iterator.
  const run = async () => {
    let seen = 0;
    for (let i = 0; i < loops; i++) {
      await db.set('key', crypto.getRandomValues(new Uint8Array(size)));
      for await (const entry of range()) seen += entry ? 1 : 0;
      for await (const entry of range()) {
        seen += entry ? 1 : 0;
        break;
      }
    }
    return seen;
  };
  const seen = await run();
  if (pattern !== 'db.range') {
    for (let i = 0; i < 3; i++) {
      window.gc();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await db.flush();
  await db.compact();
  const s = await db.stats();
  await db.close();
  return {
    seen,
    tableBytes: s.bytesPerLevel.reduce((a, b) => a + b, 0),
    openTransactions: s.openTransactions,
    openIterators: s.openIterators,
  };
}

function check(r) {
  assert.equal(r.seen, 2 * LOOPS, 'every loop saw the one key');
  assert.ok(r.tableBytes < BOUND,
    `after compact() the tables hold ${r.tableBytes} bytes for one ${VALUE}-byte key`);
  assert.equal(r.openTransactions, 0);
  assert.equal(r.openIterators, 0);
}

test('client: db.range() loops release their snapshots', async () => {
  const r = await browser.page.evaluate(clientLoops,
    { name: 'snap-client', pattern: 'db.range', loops: LOOPS, size: VALUE });
  console.log(JSON.stringify(r));
  check(r);
});

test('client: dropped transactions are rolled back once collected', async () => {
  const r = await browser.page.evaluate(clientLoops,
    { name: 'snap-client-dropped', pattern: 'begin', loops: LOOPS, size: VALUE });
  console.log(JSON.stringify(r));
  check(r);
});

for (const pattern of ['db.range', 'begin']) {
  test(`worker API: ${pattern === 'db.range' ? 'db.range() loops release their snapshots'
    : 'dropped transactions are rolled back once collected'}`, async () => {
    const r = await browser.page.evaluate((args) => window.runWorker('snapshots-worker.js', args),
      { name: `snap-worker-${pattern}`, pattern, loops: LOOPS, size: VALUE });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    console.log(JSON.stringify(r.result));
    check(r.result);
  });
}
