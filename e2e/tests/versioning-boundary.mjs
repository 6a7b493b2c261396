// Bad input to the versioned calls at every boundary (client, worker API, worker protocol, wasm
// glue): a named invalid_argument whose message shows the value as given, nothing written or
// created, and the worker answering afterwards; versioned calls on a database without versioning
// are not_supported. The calls themselves are in pages/versioning-bad.js, run through both APIs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const LIMIT = { timeout: 120_000 };

async function inWorker(page, args) {
  const r = await page.evaluate((a) => window.runWorker('versioning-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

const browser = usePage();

// What both APIs must answer to versioning-bad.js.
function checkRefusals({ out, accepted }, api) {
  for (const [what, got] of Object.entries(out)) {
    const want = what.startsWith('unversioned') ? 'not_supported' : 'invalid_argument';
    assert.equal(got.code, want, `${api}: ${what}`);
    assert.ok(got.named, `${api}: ${what}: the message shows the value`);
  }
  assert.ok(Object.keys(out).length > 90, `${api}: ${Object.keys(out).length} refusals`);
  assert.deepEqual(accepted, {
    bad: 0,
    plainCount: 1,
    plainVersioning: { code: 'ok', result: 'false 0' },
    getAtMax: { code: 'ok', result: 'object' },
    // 2^53 - 1 nanoseconds is in April 1970, before any commit here.
    getAtSafe: { code: 'ok', result: 'undefined' },
    getAt0: { code: 'ok', result: 'undefined' },
    setAtMax: { code: 'ok', result: undefined },
    setAt1: { code: 'ok', result: undefined },
    edgeHistory: { code: 'ok', result: ['9223372036854775807 max', '1 one'] },
    historyLimit0: { code: 'ok', result: 0 },
    historyInfinity: { code: 'ok', result: 1 },
  }, `${api}: what must work`);
}

test('client: bad timestamps and options are invalid_argument, unversioned calls not_supported',
  LIMIT, async () => {
    const r = await browser.page.evaluate(async () => {
      const { refusals, badVersioningOptions } = await import('/e2e/pages/versioning-bad.js');
      const { open, deleteDatabase, listDatabases } = window.skv;
      for (const n of ['client-bad-v', 'client-bad-p']) await deleteDatabase(n);
      const db = await open('client-bad-v', { versioning: { retentionNs: 0 } });
      await db.set('doc', 'now');
      const plain = await open('client-bad-p');
      await plain.set('k', 'v');
      const api = await refusals(db, plain);
      await db.close();
      await plain.close();
      const options = {};
      for (const [what, o, shown] of badVersioningOptions()) {
        try {
          await open('client-bad-option', o);
          options[what] = { code: 'opened' };
        } catch (e) {
          options[what] = { code: e.code, named: e.message.includes(shown), message: e.message };
        }
      }
      const listed = (await listDatabases()).filter((n) => n.startsWith('client-bad-option'));
      for (const n of ['client-bad-v', 'client-bad-p']) await deleteDatabase(n);
      return { api, options, listed };
    });
    checkRefusals(r.api, 'client');
    for (const [what, got] of Object.entries(r.options)) {
      assert.equal(got.code, 'invalid_argument', `open versioning ${what}: ${got.message}`);
      assert.ok(got.named, `open versioning ${what}: ${got.message}`);
    }
    assert.deepEqual(r.listed, [], 'a refused open created a database');
  });

test('worker API and wasm glue: bad timestamps and options are refused by name', LIMIT,
  async () => {
    const r = await inWorker(browser.page, { phase: 'bad', name: 'worker-bad' });
    checkRefusals(r.api, 'worker API');
    for (const [what, got] of Object.entries(r.options)) {
      assert.equal(got.code, 'invalid_argument', `open versioning ${what}: ${got.message}`);
      assert.ok(got.named, `open versioning ${what}: ${got.message}`);
    }
    assert.deepEqual(r.listed, [], 'a refused open created a database');
    assert.deepEqual(r.agree, {
      'versioned opened with enabled: false': 'invalid_argument',
      'plain opened with versioning': 'invalid_argument',
      'plain opened with enabled: false': 'false 0 undefined',
      'versioned opened with retention 5': 'true 5 now',
      'versioned opened without the option': 'true 5 now',
    });
    const { glue } = r;
    console.log(`glue messages: ${JSON.stringify(glue.messages)}`);
    for (const [what, got] of Object.entries(glue.options)) {
      // The glue reads only the names it knows, and null is no option: those open as far as the
      // missing handle table.
      const want = what === 'an unknown name' || what === 'null' ? 'not_found' : 'invalid_argument';
      assert.equal(got, want, `glue open, versioning ${what}`);
    }
    for (const [what, tally] of Object.entries(glue.calls.timestamps)) {
      assert.deepEqual(Object.keys(tally),
        ['invalid_argument invalid_argument invalid_argument'], `glue timestamp ${what}`);
    }
    assert.equal(Object.keys(glue.calls.timestamps).length, 15);
    assert.equal(glue.calls.setAt0, 'invalid_argument');
    assert.equal(glue.calls.historyLimit, 'invalid_argument');
    assert.equal(glue.calls.historyNaN, 'invalid_argument');
    assert.equal(glue.calls.historyFraction, 'invalid_argument');
    assert.deepEqual(glue.after, { at5: 'v5', at4: 'undefined', max: 'v-max', history: 1,
      versioning: 'true bigint 0' });
  });

test('worker protocol: timestamps the client never sends are refused by the worker', LIMIT,
  async () => {
    const r = await browser.page.evaluate(async () => {
      await window.skv.deleteDatabase('proto-versions');
      const { rawProtocol } = await import('/e2e/pages/raw-protocol.js');
      const { worker, send, code, errors } = rawProtocol();
      const db = (await send('open', ['proto-versions', { versioning: {} }])).result;
      const out = {};
      await code('begin', [db, 10, 'readwrite']);
      // A set_at whose packed u64 timestamp is 2^64 - 1, past what the engine takes.
      const key = new TextEncoder().encode('k');
      const buf = new Uint8Array(9 + 8 + 1 + 1);
      const view = new DataView(buf.buffer);
      view.setUint8(0, 3);
      view.setUint32(1, 1, true);
      view.setUint32(5, 1, true);
      view.setBigUint64(9, 0xffffffffffffffffn, true);
      buf.set(key, 17);
      buf[18] = 0x76;
      out.writes = await code('writes', [10, buf.buffer], [buf.buffer]);
      out.commit = await code('commit', [10, undefined]);
      await code('begin', [db, 11, 'readonly']);
      out.getAtString = await code('getAt', [11, key, '5']);
      out.getAtFraction = await code('getAt', [11, key, 0.5]);
      out.getAtMissing = await code('getAt', [11, key]);
      out.iterOpenAt = await code('iterOpen', [11, 12, '', '', {}, -1n]);
      out.scanAt = await code('scan', [11, '', '', {}, 2n ** 63n]);
      out.historyLimit = await code('history', [11, key, { limit: 'all' }]);
      out.historyOk = await code('history', [11, key, {}]);
      out.versioning = (await send('versioning', [db])).result;
      out.errors = errors();
      await code('close', [db]);
      worker.terminate();
      await window.skv.deleteDatabase('proto-versions');
      out.versioning = `${out.versioning.enabled} ${out.versioning.retentionNs}`;
      return out;
    });
    assert.deepEqual(r, {
      writes: 'invalid_argument', commit: 'invalid_argument', getAtString: 'invalid_argument',
      getAtFraction: 'invalid_argument', getAtMissing: 'invalid_argument',
      iterOpenAt: 'invalid_argument', scanAt: 'invalid_argument',
      historyLimit: 'invalid_argument', historyOk: 'ok', versioning: 'true 0', errors: 0,
    });
  });
