// Renders the browser benchmark's results as Markdown (the tables of docs/benchmarks.md) and
// collects the ratios skv / IndexedDB and skv / sqlite-wasm.

export const PHASES = [
  ['create', 'create'], ['read', 'read'], ['update', 'update'],
  ['scan_count', 'scan: count all'], ['scan_keys', 'scan: 100 keys'],
  ['scan_pairs', 'scan: 100 pairs'], ['scan_skip_keys', 'scan: skip 5,000, 100 keys'],
  ['scan_skip_pairs', 'scan: skip 5,000, 100 pairs'], ['delete', 'delete'],
  ['batch_create_100', 'batch create 100'], ['batch_read_100', 'batch read 100'],
  ['batch_update_100', 'batch update 100'], ['batch_delete_100', 'batch delete 100'],
  ['batch_create_1000', 'batch create 1,000'], ['batch_read_1000', 'batch read 1,000'],
  ['batch_update_1000', 'batch update 1,000'], ['batch_delete_1000', 'batch delete 1,000'],
];

const thousands = (v) => Math.round(v).toLocaleString('en-US');
export const rate = (v) => (v < 100 ? v.toFixed(1) : thousands(v));
export const ms = (v) => (v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v < 1000 ? v.toFixed(1) : thousands(v));
const mib = (b) => (b === null || b === undefined ? '-' : `${(b / 1048576).toFixed(1)} MiB`);
const ratio = (r) => (r >= 10 ? r.toFixed(0) : r.toFixed(2));

const phaseOf = (engine, id) => engine && engine.phases.find((p) => p.id === id);

// { phase id: { 'skv-inline': skv/skv without the value log, 'skv-xchacha': skv/sealed skv,
//   idb: skv/IndexedDB, sqlite: skv/sqlite-wasm } } in ops/s.
export function ratios(engines) {
  const skv = engines.find((e) => e.key === 'skv');
  const out = {};
  for (const [id] of PHASES) {
    const a = phaseOf(skv, id);
    if (!a) continue;
    for (const other of ['skv-inline', 'skv-xchacha', 'idb', 'sqlite']) {
      const b = phaseOf(engines.find((e) => e.key === other), id);
      if (b && b.ops_per_second > 0) {
        out[id] = out[id] || {};
        out[id][other] = a.ops_per_second / b.ops_per_second;
      }
    }
  }
  return out;
}

export function renderRun(run, config, env) {
  const { engines } = run;
  const o = [];
  o.push(`Browser benchmark: N = ${thousands(config.n)}, ${config.clients} clients, sync ` +
    `${run.sync ? 'on' : 'off'}, skv block cache and sqlite page cache ${config.cacheMiB} MiB, ` +
    `${thousands(config.batchRows || config.n)} rows per batch phase, ${config.scanRepeats} runs ` +
    `of each 100-row scan, ${config.countRepeats} of the full count` +
    `${config.settlePhases === false ? '; phases back to back' : "; each phase starts once skv's " +
      'flushes and compactions are done'}.`);
  if (env) {
    o.push(`Browser: ${env.browser}, ${env.crossOriginIsolated ? 'cross-origin isolated' : 'not isolated'} ` +
      `(performance.now() step ${Number(env.timerStepMs.toPrecision(3))} ms). Machine: ${env.machine}.`);
  }
  o.push('');
  for (const e of engines) o.push(`- ${e.name}: ${e.error ? `FAILED: ${e.error}` : e.durability}`);
  o.push('');
  const r = ratios(engines);
  const hasIdb = engines.some((e) => e.key === 'idb' && !e.error);
  const hasSqlite = engines.some((e) => e.key === 'sqlite' && !e.error);
  const hasSkv = engines.some((e) => e.key === 'skv' && !e.error);
  const hasSealed = engines.some((e) => e.key === 'skv-xchacha' && !e.error);
  const hasInline = engines.some((e) => e.key === 'skv-inline' && !e.error);
  o.push('Throughput in operations per second (an operation is one transaction: one row, or one ' +
    'batch of 100 or 1,000 rows; for scans, one scan). Higher is better.');
  o.push('');
  let head = '| phase |';
  let rule = '| --- |';
  for (const e of engines) {
    head += ` ${e.name} |`;
    rule += ' ---: |';
  }
  if (hasSkv && hasInline) {
    head += ' skv / no value log |';
    rule += ' ---: |';
  }
  if (hasSkv && hasSealed) {
    head += ' sealed / skv |';
    rule += ' ---: |';
  }
  if (hasSkv && hasIdb) {
    head += ' skv / IndexedDB |';
    rule += ' ---: |';
  }
  if (hasSkv && hasSqlite) {
    head += ' skv / sqlite-wasm |';
    rule += ' ---: |';
  }
  o.push(head, rule);
  for (const [id, title] of PHASES) {
    if (!engines.some((e) => phaseOf(e, id))) continue;
    let line = `| ${title} |`;
    for (const e of engines) {
      const p = phaseOf(e, id);
      line += ` ${p ? rate(p.ops_per_second) : '-'} |`;
    }
    if (hasSkv && hasInline) {
      line += ` ${r[id] && r[id]['skv-inline'] ? ratio(r[id]['skv-inline']) : '-'} |`;
    }
    if (hasSkv && hasSealed) {
      const x = r[id] && r[id]['skv-xchacha'];
      line += ` ${x ? ratio(1 / x) : '-'} |`;
    }
    if (hasSkv && hasIdb) line += ` ${r[id] && r[id].idb ? ratio(r[id].idb) : '-'} |`;
    if (hasSkv && hasSqlite) line += ` ${r[id] && r[id].sqlite ? ratio(r[id].sqlite) : '-'} |`;
    o.push(line);
  }
  o.push('');
  o.push('Latency of one operation, p50 / p99 / max, in milliseconds. Lower is better.');
  o.push('');
  o.push(`| phase |${engines.map((e) => ` ${e.name} |`).join('')}`);
  o.push(`| --- |${engines.map(() => ' ---: |').join('')}`);
  for (const [id, title] of PHASES) {
    if (!engines.some((e) => phaseOf(e, id))) continue;
    o.push(`| ${title} |${engines.map((e) => {
      const p = phaseOf(e, id);
      return p ? ` ${ms(p.p50_ms)} / ${ms(p.p99_ms)} / ${ms(p.max_ms)} |` : ' - |';
    }).join('')}`);
  }
  o.push('');
  o.push('Storage after a phase: the engine\'s own files (skv: its OPFS slot files; sqlite-wasm: ' +
    'the database file, WAL excluded; IndexedDB: not available), and navigator.storage.estimate() ' +
    'of the origin (a fresh profile per engine; it overstates OPFS files, see the caveats).');
  o.push('');
  o.push('| engine | files after create | after update | at end | estimate after create | after update | at end | open (ms) |');
  o.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const e of engines) {
    const c = phaseOf(e, 'create');
    const u = phaseOf(e, 'update');
    const last = e.phases && e.phases.length ? e.phases[e.phases.length - 1] : null;
    const f = (p, field) => mib(p && p[field]);
    o.push(`| ${e.name} | ${f(c, 'engine_bytes_after')} | ${f(u, 'engine_bytes_after')} | ` +
      `${f(last, 'engine_bytes_after')} | ${f(c, 'storage_after')} | ${f(u, 'storage_after')} | ` +
      `${f(last, 'storage_after')} | ${e.open_ms !== undefined ? ms(e.open_ms) : '-'} |`);
  }
  const notes = [];
  for (const e of engines) {
    for (const p of e.phases || []) {
      if (p.misses) notes.push(`- ${e.name}, ${p.id}: ${p.misses} reads or scans came back short`);
    }
  }
  for (const skv of engines.filter((e) => e.key.startsWith('skv') && e.stats)) {
    if (skv.stats.commits === undefined) continue;
    const s = skv.stats;
    notes.push(`- ${skv.name} counters at the end: ${thousands(s.commits)} commits in ` +
      `${thousands(s.commitGroups)} WAL writes (group commit), ${thousands(s.walSyncs)} WAL ` +
      `flushes, ${s.flushes} memtable flushes, ${s.compactions} compactions, ${s.stalls} stalls, ` +
      `files per level [${s.filesPerLevel.join(', ')}], longest executor step ` +
      `${ms(s.longestStepMs)} ms; OPFS handle calls: ${thousands(s.handleWrites)} writes, ` +
      `${thousands(s.handleFlushes)} flushes, ${thousands(s.handleReads)} reads.`);
  }
  if (notes.length) o.push('', ...notes);
  return o.join('\n') + '\n';
}
