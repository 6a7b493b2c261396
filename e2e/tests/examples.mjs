// examples/web, the page the README points to: it starts its own worker, which uses the worker
// API. Notes added through the page are listed newest first, survive a reload, and clear.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

test('examples/web: notes in a worker survive a reload', async () => {
  const server = await startServer();
  const profile = newProfile();
  const { context, page } = await launch(profile, `${server.origin}/examples/web/index.html`);
  try {
    const ready = () => page.evaluate(() => window.ready);
    assert.deepEqual(await ready(), { notes: [], total: 0 });
    await page.evaluate(() => window.notes.add('first'));
    const r = await page.evaluate(() => window.notes.add('second'));
    assert.deepEqual(r, { notes: ['second', 'first'], total: 2 });

    await page.reload();
    assert.deepEqual(await ready(), { notes: ['second', 'first'], total: 2 });
    assert.match(await page.textContent('#status'), /^2 notes in OPFS/);
    assert.deepEqual(await page.evaluate(() => window.notes.clear()), { notes: [], total: 0 });
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
});
