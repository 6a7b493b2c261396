// Runs the browser end-to-end suite (e2e/tests/*.mjs) with node's test runner, one file at a time
// (each launches Chromium; the CI machine has two cores). Needs web/dist (npm run build) and, for
// the native round trip, the native skv tool (SKV_NATIVE_BUILD, default ./build).
//
//   node e2e/run.mjs                 every test file
//   node e2e/run.mjs crash quota     only e2e/tests/crash.mjs and e2e/tests/quota.mjs

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './server.mjs';
import { CHROMIUM } from './browser.mjs';

for (const f of ['web/dist/skv-core.mjs', 'web/dist/skv-core.wasm']) {
  if (!fs.existsSync(path.join(ROOT, f))) {
    console.error(`e2e: ${f} is missing; run 'npm run build' first`);
    process.exit(2);
  }
}
if (!fs.existsSync(CHROMIUM)) {
  console.error(`e2e: no browser at ${CHROMIUM} (apt-get install chromium, or set SKV_CHROMIUM)`);
  process.exit(2);
}
const dir = path.join(ROOT, 'e2e', 'tests');
const only = process.argv.slice(2);
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.mjs'))
  .filter((f) => only.length === 0 || only.includes(path.basename(f, '.mjs')))
  .sort().map((f) => path.join(dir, f));
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files],
  { stdio: 'inherit', cwd: ROOT });
process.exit(r.status === null ? 1 : r.status);
