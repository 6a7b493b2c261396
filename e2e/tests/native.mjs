// One format everywhere: a database written in the browser, copied out of OPFS with
// exportFiles() into a directory, opens with the native `skv` tool and shows the same keys and
// values (tables on two levels plus data only in the WAL). The tool's scan is compared in hex
// (`skv scan --hex`: every byte as two hex digits), which says byte for byte what it read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, ROOT } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

const SKV = path.join(path.resolve(ROOT, process.env.SKV_NATIVE_BUILD || 'build'), 'skv');

function skv(...args) {
  const r = spawnSync(SKV, args, { encoding: 'buffer', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `skv ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const skip = !fs.existsSync(SKV) && `no native tool at ${SKV} (cmake --build build)`;

test('a browser database opens with the native skv tool', { skip }, async () => {
  const server = await startServer();
  const profile = newProfile();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skv-e2e-native-'));
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate(() => window.runWorker('native-worker.js', { name: 'native' }));
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    const { entries, files, stats } = r.result;

    for (const [name, data] of files) {
      assert.match(name, /^[A-Za-z0-9._-]+$/, 'a plain file name');
      fs.writeFileSync(path.join(dir, name), Buffer.from(data, 'base64'));
    }
    const names = files.map(([n]) => n).sort();
    console.log(`browser: ${entries.length} keys, ${JSON.stringify(stats)}; ` +
      `files ${names.join(' ')}`);
    assert.ok(names.includes('CURRENT') && names.some((n) => n.endsWith('.sst')) &&
      names.some((n) => n.endsWith('.wal')), 'CURRENT, tables and a WAL');
    assert.ok(stats.memtableBytes > 0, 'some data is only in the WAL');
    assert.ok(stats.filesPerLevel.slice(1).some((n) => n > 0), 'tables below level 0');

    const decoded = entries.map(([k, v]) => [Buffer.from(k, 'base64'), Buffer.from(v, 'base64')]);
    const hex = (b) => Buffer.from(b).toString('hex');
    const expected = decoded.map(([k, v]) => `${hex(k)}\t${hex(v)}\n`).join('');
    const scanned = skv('scan', dir, '--hex').toString('latin1');
    if (scanned !== expected) {
      const a = scanned.split('\n');
      const b = expected.split('\n');
      const i = a.findIndex((line, n) => line !== b[n]);
      assert.fail(`native scan differs at line ${i}: ` +
        `${JSON.stringify(a[i])} != ${JSON.stringify(b[i])}` +
        ` (${a.length - 1} vs ${b.length - 1} lines)`);
    }
    assert.equal(skv('count', dir).toString().trim(), String(entries.length));
    const reverse = skv('scan', dir, '--hex', '--reverse', '--limit', '5').toString('latin1');
    const lastFive = expected.split('\n').slice(-6, -1).reverse();
    assert.equal(reverse, lastFive.map((l) => `${l}\n`).join(''));
    // Point reads of binary keys, bytes exactly as stored.
    for (const i of [0, 1, Math.floor(decoded.length / 2), decoded.length - 1]) {
      const [k, v] = decoded[i];
      assert.deepEqual(skv('get', dir, '--hex', hex(k), '--raw'), Buffer.from(v), `get ${hex(k)}`);
    }
    console.log(`native: scan and count agree (${entries.length} keys)`);
  } finally {
    await context.close();
    removeProfile(profile);
    fs.rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
});
