// 100,000 keys in the worker with flushes and compactions inside it (see pages/bulk-worker.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

test('100,000 keys with flushes and compactions in the worker', async () => {
  const server = await startServer();
  const profile = newProfile();
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate(() =>
      window.runWorker('bulk-worker.js', { name: 'bulk', total: 100000, perCommit: 1000 }));
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    console.log(JSON.stringify(r.result));
    assert.ok(r.result.stats.flushes > 0);
    assert.ok(r.result.stats.compactions > 0);
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
});
