// Outside a browser (plain node: no Worker, no OPFS) both entry points load, and every call
// rejects with SkvError 'not_supported' (bad arguments still give 'invalid_argument'), never a
// bare ReferenceError. Each check runs in a child process with a deadline, so a module that
// keeps node alive on import fails the test instead of hanging it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../server.mjs';

const SCRIPT = `
const entry = await import(process.argv[1]);
const out = {};
const calls = {
  open: () => entry.open('notes'),
  openBadOption: () => entry.open('notes', { durability: 'sometimes' }),
  listDatabases: () => entry.listDatabases(),
  deleteDatabase: () => entry.deleteDatabase('notes'),
};
for (const [name, call] of Object.entries(calls)) {
  try {
    await call();
    out[name] = 'resolved';
  } catch (e) {
    out[name] = e instanceof entry.SkvError ? e.code : String(e);
  }
}
console.log(JSON.stringify(out));
`;

for (const entry of ['index.js', 'worker.js']) {
  test(`web/src/${entry} under node: not_supported`, () => {
    const out = execFileSync(process.execPath,
      ['--input-type=module', '-e', SCRIPT, path.join(ROOT, 'web/src', entry)],
      { timeout: 20000, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)), {
      open: 'not_supported', openBadOption: 'invalid_argument', listDatabases: 'not_supported',
      deleteDatabase: 'not_supported',
    });
  });
}
