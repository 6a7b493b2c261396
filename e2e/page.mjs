// The fixture most browser tests share: a server on 127.0.0.1, a fresh Chromium profile and one
// page on e2e/pages/index.html (which loads the client as window.skv and the harness), started
// before the file's tests and torn down after them.
//
//   const harness = usePage();
//   test('...', async () => { await harness.page.evaluate(...); });

import { before, after } from 'node:test';
import { startServer } from './server.mjs';
import { launch, newProfile, removeProfile } from './browser.mjs';

export function usePage(path = '/e2e/pages/index.html') {
  const harness = { server: null, profile: null, context: null, page: null };
  before(async () => {
    harness.server = await startServer();
    harness.profile = newProfile();
    const { context, page } = await launch(harness.profile, `${harness.server.origin}${path}`);
    harness.context = context;
    harness.page = page;
    await page.waitForFunction(() => window.ready === true);
  });
  after(async () => {
    if (harness.context) await harness.context.close();
    if (harness.profile) removeProfile(harness.profile);
    if (harness.server) await harness.server.close();
  });
  return harness;
}
