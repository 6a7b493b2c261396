// npm always ships the README.md at the package root, and ours is the repository's page (building
// from source, the layout, the tests). People who install the package should get web/README.md
// instead. package.json therefore swaps the two around `npm pack` / `npm publish`:
//
//   "prepack":  node tools/pack-check.mjs && node tools/pack-readme.mjs swap
//   "postpack": node tools/pack-readme.mjs restore
//
// swap moves README.md to .README.md.pack-backup (one rename) and copies web/README.md in its
// place; restore renames the backup back over it. The guard runs before the swap, so a refused
// pack (no wasm build) never touches README.md. Should npm stop between the two (killed, a write
// error), the repository's README stays in the backup, `git status` shows README.md changed, and
// the next `npm pack`, or `node tools/pack-readme.mjs restore`, puts it back first. Neither step
// ever overwrites a README.md that is neither the package README nor the backup: it stops and
// says so instead.

// Every message goes to stderr: npm passes a script's stdout through, and `npm pack --json`
// must print nothing but its JSON.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = path.join(ROOT, 'README.md');
const PACKAGE_README = path.join(ROOT, 'web', 'README.md');
const BACKUP = path.join(ROOT, '.README.md.pack-backup');

function fail(message) {
  console.error(`pack-readme: ${message}`);
  process.exit(1);
}

const read = (file) => (fs.existsSync(file) ? fs.readFileSync(file) : null);

// Puts the backup back if there is one. README.md must then be the package README (a swap that
// was not restored); anything else is somebody's edit, which is kept and reported.
function restore() {
  if (!fs.existsSync(BACKUP)) return false;
  const current = read(README);
  if (current !== null && !current.equals(fs.readFileSync(PACKAGE_README))) {
    fail(`README.md was changed while the package README stood in for it; the repository's ` +
      `README is in ${path.basename(BACKUP)}: merge them by hand, then delete the backup`);
  }
  fs.renameSync(BACKUP, README);
  return true;
}

const mode = process.argv[2];
if (mode === 'swap') {
  if (!fs.existsSync(PACKAGE_README)) fail('web/README.md is missing');
  if (restore()) console.error('pack-readme: restored README.md left by an interrupted pack');
  fs.renameSync(README, BACKUP);
  fs.copyFileSync(PACKAGE_README, README);
  console.error('pack-readme: README.md is web/README.md until postpack');
} else if (mode === 'restore') {
  if (restore()) console.error('pack-readme: README.md restored');
} else {
  fail('usage: node tools/pack-readme.mjs swap|restore');
}
