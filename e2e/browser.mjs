// Launches Debian's Chromium through playwright-core (never a downloaded browser): headless, with
// a profile directory of our own so a test can restart the browser on the same profile and find
// its OPFS data again.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.SKV_CHROMIUM || '/usr/bin/chromium';

// --expose-gc gives pages and workers gc(), which the tests of dropped transactions call.
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--js-flags=--expose-gc'];

export function newProfile() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'skv-e2e-profile-'));
}

export function removeProfile(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
}

// Returns { context, page } on `url`. Console errors of the page are echoed with a prefix.
export async function launch(profile, url) {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS,
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error' || process.env.SKV_E2E_VERBOSE) {
      console.log(`[page ${msg.type()}] ${msg.text()}`);
    }
  });
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  if (url) await page.goto(url);
  return { context, page };
}
