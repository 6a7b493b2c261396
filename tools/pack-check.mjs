// The guard `npm pack` and `npm publish` run first (package.json "prepack"): the package is
// useless without the wasm build, which is not in git, so packing stops here with a message
// instead of shipping a tarball whose worker cannot start.
//
// It fails when web/dist/skv-core.mjs or web/dist/skv-core.wasm is missing, empty, or older than
// the newest C++ source compiled into them (core/, platform/opfs/, web/native/,
// web/CMakeLists.txt): after a pull or an edit there, `npm run build` must run again. The age
// check compares modification times, which a fresh checkout sets to the checkout's time, so a
// build made after the checkout always passes. A build that left the two files as they were (a
// source change that did not change them) says it ran through the stamp tools/build-web.sh
// touches, <build dir>/skv-web.built (BUILD_DIR, default build-wasm). SKV_PACK_ALLOW_STALE=1 downgrades it to a warning
// (for a build known to match, e.g. copied from another checkout of the same commit).
//
//   node tools/pack-check.mjs        exit 0 when the package can be packed, 1 with a message if not

// Every message goes to stderr: npm passes a script's stdout through, and `npm pack --json`
// must print nothing but its JSON.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = ['web/dist/skv-core.mjs', 'web/dist/skv-core.wasm'];
const SOURCES = ['core/src', 'core/include', 'platform/opfs', 'web/native', 'web/CMakeLists.txt'];
const SOURCE_FILE = /\.(cpp|cc|h|hpp|txt)$/;

function fail(message) {
  console.error(`pack-check: ${message}`);
  process.exit(1);
}

// The newest file under `rel` (a file or a folder), as { file, mtimeMs }; null if there is none.
function newest(rel) {
  const abs = path.join(ROOT, rel);
  let st;
  try {
    st = fs.statSync(abs);
  } catch {
    return null;
  }
  if (st.isFile()) return SOURCE_FILE.test(rel) ? { file: rel, mtimeMs: st.mtimeMs } : null;
  if (!st.isDirectory()) return null;
  let best = null;
  for (const entry of fs.readdirSync(abs)) {
    const found = newest(path.posix.join(rel, entry));
    if (found && (!best || found.mtimeMs > best.mtimeMs)) best = found;
  }
  return best;
}

// The newer of the two: a build whose glue came out unchanged leaves the .mjs as it was (the build
// copies it only when it differs), but the wasm is rewritten whenever a source changed.
let built = -Infinity;
for (const rel of DIST) {
  let st;
  try {
    st = fs.statSync(path.join(ROOT, rel));
  } catch {
    fail(`${rel} is missing: build the wasm first with 'npm run build' (tools/build-web.sh)`);
  }
  if (!st.isFile() || st.size === 0) fail(`${rel} is empty or not a file: run 'npm run build'`);
  built = Math.max(built, st.mtimeMs);
}

// A completed build that found the files already up to date.
try {
  const stamp = path.join(ROOT, process.env.BUILD_DIR || 'build-wasm', 'skv-web.built');
  built = Math.max(built, fs.statSync(stamp).mtimeMs);
} catch {
  // no stamp: the files' own times decide
}

let source = null;
for (const rel of SOURCES) {
  const found = newest(rel);
  if (found && (!source || found.mtimeMs > source.mtimeMs)) source = found;
}
if (source && source.mtimeMs > built) {
  const message = `web/dist is older than ${source.file} (changed ` +
    `${new Date(source.mtimeMs).toISOString()}, wasm built ${new Date(built).toISOString()}): ` +
    `run 'npm run build' again`;
  if (process.env.SKV_PACK_ALLOW_STALE !== '1') {
    fail(`${message}, or set SKV_PACK_ALLOW_STALE=1 if the build is known to match`);
  }
  console.error(`pack-check: warning: ${message} (SKV_PACK_ALLOW_STALE=1 given)`);
} else {
  console.error(`pack-check: ${DIST.join(' and ')} present and newer than the sources`);
}
