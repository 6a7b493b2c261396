// The npm package as users get it: `npm pack` makes a tarball; unpacked as node_modules/skv of a
// site, a page uses it from the main thread, and strict TypeScript compiles against its types.
// Before that, tsc checks the package's own JavaScript against those types (npm run typecheck).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

test('the JavaScript sources type-check against the declarations', () => {
  execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'web/tsconfig.json'],
    { cwd: ROOT, stdio: 'inherit' });
});

test('npm pack tarball works in a page and type-checks', async () => {
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'skv-pack-'));
  try {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'));
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', site], { cwd: ROOT });
    // prepack swaps in web/README.md for the tarball; postpack puts the repository's back.
    assert.ok(fs.readFileSync(path.join(ROOT, 'README.md')).equals(readme),
      'README.md is not restored after npm pack');
    assert.ok(!fs.existsSync(path.join(ROOT, '.README.md.pack-backup')), 'README backup left');
    const [info] = JSON.parse(out.toString());
    const files = info.files.map((f) => f.path);
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(manifest.exports['./server'].default, './web/src/server.js',
      "package.json exports the worker script as 'skv/server'");
    for (const f of ['package.json', 'web/src/index.js', 'web/src/worker.js', 'web/src/server.js',
      'web/dist/skv-core.mjs', 'web/dist/skv-core.wasm', 'web/types/index.d.ts',
      'web/types/worker.d.ts', 'README.md', 'LICENSE', 'docs/web.md', 'docs/indexeddb.md']) {
      assert.ok(files.includes(f), `tarball lacks ${f}`);
    }
    assert.ok(!files.some((f) => f.startsWith('core/') || f.startsWith('e2e/')), 'sources leaked');
    for (const f of files.filter((name) => name.startsWith('web/src/'))) {
      const imports = fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/from '(\.[^']+)'/g);
      for (const [, spec] of imports) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), spec));
        assert.ok(files.includes(target), `${f} imports ${spec}, which the tarball lacks`);
      }
    }
    const pkgDir = path.join(site, 'node_modules', 'skv');
    fs.mkdirSync(pkgDir, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(site, info.filename), '-C', pkgDir,
      '--strip-components=1']);
    assert.ok(fs.readFileSync(path.join(pkgDir, 'README.md'))
      .equals(fs.readFileSync(path.join(ROOT, 'web/README.md'))), 'the tarball README is not web/README.md');
    assert.equal(JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).license,
      'Apache-2.0');
    fs.copyFileSync(path.join(ROOT, 'e2e/consumer/index.html'), path.join(site, 'index.html'));
    fs.copyFileSync(path.join(ROOT, 'e2e/consumer/consumer.ts'), path.join(site, 'consumer.ts'));

    execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['--noEmit', '--strict',
      '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--lib', 'es2022,dom,dom.iterable,dom.asynciterable', 'consumer.ts'], { cwd: site, stdio: 'inherit' });

    const server = await startServer({ root: site });
    const profile = newProfile();
    const { context, page } = await launch(profile, `${server.origin}/index.html`);
    try {
      await page.waitForFunction(() => window.ready === true);
      const r = await page.evaluate(() => window.run());
      assert.deepEqual(r, { value: 'world', commits: 1 });
    } finally {
      await context.close();
      removeProfile(profile);
      await server.close();
    }
  } finally {
    fs.rmSync(site, { recursive: true, force: true });
  }
});
