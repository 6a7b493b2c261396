import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

test('worker API basics', async () => {
  const server = await startServer();
  const profile = newProfile();
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate(() => window.runWorker('basic.js', { name: 'basic' }));
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    console.log(JSON.stringify(r.result.stats));
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
});
