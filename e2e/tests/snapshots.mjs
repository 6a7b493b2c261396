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
// Both APIs: the client from the page, the worker API in pages/snapshots-worker.js, running the
// scenario of pages/snapshot-loops.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const LOOPS = 150;
const VALUE = 4096;
const BOUND = 16 * VALUE;

const browser = usePage();

// In the page, through the client (window.skv); the scenario is e2e/pages/snapshot-loops.js.
async function clientLoops(args) {
  const { snapshotLoops } = await import('/e2e/pages/snapshot-loops.js');
  return snapshotLoops(window.skv, args);
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
