// The worker side of the versioning tests (the worker API, and the wasm glue straight).
//   { phase: 'write', name, files }  writes versioning-data.js's database, checks its facts and
//                                    returns the question times and the answers (and, with
//                                    `files`, the exported files, base64-encoded)
//   { phase: 'read', name, times }   reopens `name` without the versioning option: the answers
//   { phase: 'bad', name }           versioning-bad.js through the worker API, the option's
//                                    refusals and agreements, and the glue's own checks
import { open, deleteDatabase, listDatabases, SkvError } from '/web/src/worker.js';
import createSkvCore from '/web/dist/skv-core.mjs';
import { serve, check } from './harness.js';
import { write, questionTimes, answers, checkFacts } from './versioning-data.js';
import { refusals, badTimestamps, badVersioningOptions, MAX_TIMESTAMP } from './versioning-bad.js';

function base64(b) {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

const code = (e) => (e instanceof SkvError ? e.code : `${e && e.name}: ${e && e.message}`);

// `valueLog`: the open option, to write the same database with separated values.
async function writePhase(name, withFiles, valueLog) {
  await deleteDatabase(name);
  const db = await open(name, {
    versioning: { retentionNs: 0n }, memtableSize: 64 << 10, ...(valueLog ? { valueLog } : {}),
  });
  await write(db);
  const times = await questionTimes(db);
  const a = await answers(db, times);
  checkFacts(a, check);
  const stats = db.stats();
  const files = withFiles ? db.exportFiles().map(([f, data]) => [f, base64(data)]) : undefined;
  await db.close();
  return { times, answers: a, files, filesPerLevel: stats.filesPerLevel,
    memtableBytes: stats.memtableBytes, vlogFiles: stats.vlogFiles, vlogBytes: stats.vlogBytes };
}

async function readPhase(name, times) {
  const db = await open(name, { createIfMissing: false });
  try {
    return { answers: await answers(db, times) };
  } finally {
    await db.close();
  }
}

// Opens `name` through the glue over 16 new slot files; returns [w, close].
async function glueOpen(core, name, options) {
  const root = await (await navigator.storage.getDirectory())
    .getDirectoryHandle('skv', { create: true });
  const dir = await root.getDirectoryHandle(name, { create: true });
  const handles = [];
  for (let i = 0; i < 16; i++) {
    const file = await dir.getFileHandle(`slot-${String(i).padStart(6, '0')}`, { create: true });
    handles.push(await file.createSyncAccessHandle());
  }
  const table = core.skvTables.push({ handles }) - 1;
  const w = new core.WebDb();
  const rc = w.open(name, table, options);
  const close = () => {
    w.close();
    w.delete();
    for (const h of handles) h.close();
    core.skvTables[table] = null;
  };
  return { w, rc, close };
}

async function gluePhase(name, loops) {
  await deleteDatabase(name);
  const core = await createSkvCore({ skvTables: [] });
  const out = { options: {}, calls: {}, messages: {} };
  // Open options the wrapper would refuse, straight into the glue (no handle table: a good
  // option would then fail with not_found, never with invalid_argument).
  for (const [what, options] of badVersioningOptions()) {
    const w = new core.WebDb();
    try {
      const rc = w.open(name, 999, { createIfMissing: false, ...options });
      out.options[what] = rc === 0 ? 'opened' : w.errorCode();
      out.messages[`open ${what}`] = w.errorMessage();
    } catch (e) {
      out.options[what] = `threw ${code(e)}`;
    } finally {
      w.delete();
    }
  }
  out.options['a revoked proxy'] = (() => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const w = new core.WebDb();
    try {
      return w.open(name, 999, { createIfMissing: false, versioning: proxy }) === 0 ? 'opened'
        : w.errorCode();
    } catch (e) {
      return `threw ${code(e)}`;
    } finally {
      w.delete();
    }
  })();

  const { w, rc, close } = await glueOpen(core, name, { versioning: { retentionNs: 0n } });
  check(rc === 0, `glue open: ${w.errorCode()} ${w.errorMessage()}`);
  try {
    const tx = w.begin(false);
    check(w.setAt(tx, 'k', 'v5', 5n) === 0, `glue setAt: ${w.errorMessage()}`);
    check(w.setAt(tx, 'm', 'v-max', MAX_TIMESTAMP) === 0, `glue setAt max: ${w.errorMessage()}`);
    const op = w.commit(tx, 1);
    for (let i = 0; i < 1000 && w.pending() > 0; i++) w.runPending(16);
    const done = w.takeDone();
    check(done.length === 1 && done[0][0] === op && done[0][1] === 'ok',
      `glue commit: ${JSON.stringify(done)}`);
    const r = w.begin(true);
    // Every bad timestamp, many times over: an error code each time, never an exception.
    const bad = badTimestamps().filter(([what]) => what !== 'undefined');
    bad.push(['undefined', undefined, 'not undefined'], ['a symbol', Symbol('t'), 'symbol']);
    const tally = {};
    const count = (what, got) => {
      tally[what] = tally[what] || {};
      tally[what][got] = (tally[what][got] || 0) + 1;
    };
    for (let i = 0; i < loops; i++) {
      const [what, ts] = bad[i % bad.length];
      let got;
      try {
        const v = w.getAt(r, 'k', ts);
        got = v === null ? w.errorCode() : 'answered';
        if (i < bad.length) out.messages[`getAt ${what}`] = w.errorMessage();
        got += w.iterOpenAt(r, '', '', ts, false, false) === 0 ? ` ${w.errorCode()}` : ' opened';
        const wtx = w.begin(false);
        got += w.setAt(wtx, 'k', 'x', ts) !== 0 ? ` ${w.errorCode()}` : ' written';
        w.rollback(wtx);
      } catch (e) {
        got = `threw ${code(e)}`;
      }
      count(what, got);
    }
    out.calls.timestamps = tally;
    const wtx = w.begin(false);
    out.calls.setAt0 = w.setAt(wtx, 'k', 'x', 0n) !== 0 ? w.errorCode() : 'written';
    out.messages.setAt0 = w.errorMessage();
    w.rollback(wtx);
    out.calls.historyLimit = w.history(r, 'k', false, -1) === null ? w.errorCode() : 'answered';
    out.calls.historyNaN = w.history(r, 'k', false, NaN) === null ? w.errorCode() : 'answered';
    out.calls.historyFraction = w.history(r, 'k', false, 0.5) === null ? w.errorCode()
      : 'answered';
    // And it still answers.
    const got = w.getAt(r, 'k', 5);
    out.after = {
      at5: got ? new TextDecoder().decode(got) : String(got),
      at4: String(w.getAt(r, 'k', 4n)),
      max: new TextDecoder().decode(w.getAt(r, 'm', MAX_TIMESTAMP)),
      history: new DataView(w.history(r, 'k', true, Infinity).buffer).getUint32(0, true),
      versioning: (() => {
        const v = w.versioning();
        return `${v.enabled} ${typeof v.retentionNs} ${v.retentionNs}`;
      })(),
    };
    w.rollback(r);
  } finally {
    close();
  }
  await deleteDatabase(name);
  return out;
}

async function badPhase(name) {
  const vname = `${name}-versioned`;
  const pname = `${name}-plain`;
  for (const n of [vname, pname]) await deleteDatabase(n);
  const db = await open(vname, { versioning: {} });
  await db.set('doc', 'now');
  const plain = await open(pname);
  await plain.set('k', 'v');
  const api = await refusals(db, plain);
  await db.close();
  await plain.close();

  // The option: refusals create nothing; an existing database must agree on `enabled`; a new
  // retention replaces the stored one, and later opens without the option keep it.
  const options = {};
  for (const [what, o, shown] of badVersioningOptions()) {
    try {
      await open(`${name}-option`, o);
      options[what] = { code: 'opened' };
    } catch (e) {
      options[what] = { code: code(e), named: String(e.message).includes(shown),
        message: String(e.message) };
    }
  }
  const listed = (await listDatabases()).filter((n) => n.startsWith(`${name}-option`));
  const agree = {};
  for (const [what, n, o] of [
    ['versioned opened with enabled: false', vname, { versioning: { enabled: false } }],
    ['plain opened with versioning', pname, { versioning: {} }],
    ['plain opened with enabled: false', pname, { versioning: { enabled: false } }],
    ['versioned opened with retention 5', vname, { versioning: { retentionNs: 5 } }],
    ['versioned opened without the option', vname, {}],
  ]) {
    try {
      const d = await open(n, o);
      const v = d.versioning();
      agree[what] = `${v.enabled} ${v.retentionNs} ${d.get('doc', { as: 'string' })}`;
      await d.close();
    } catch (e) {
      agree[what] = code(e);
    }
  }
  for (const n of [vname, pname]) await deleteDatabase(n);
  return { api, options, listed, agree, glue: await gluePhase(`${name}-glue`, 600) };
}

serve(async ({ phase, name, times, files, valueLog }) => {
  if (phase === 'write') return writePhase(name, files === true, valueLog);
  if (phase === 'read') return readPhase(name, times);
  if (phase === 'bad') return badPhase(name);
  throw new Error(`unknown phase ${phase}`);
});
