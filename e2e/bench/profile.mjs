// Sampling profiles of one benchmark phase (npm run bench:web -- --profile PHASE): Chromium's
// tracing with the V8 CPU profiler category, started just before the phase and stopped as soon
// as its operations end (before the wait for background work). The trace is written as Chrome
// trace JSON (open it in chrome://tracing, Perfetto or the DevTools Performance panel), and
// summarize() prints where the busiest thread spent its samples. Wasm functions have names only
// in a build made with SKV_WEB_PROFILING=1 (tools/build-web.sh); otherwise wasm-function[N].

const CATEGORIES = ['disabled-by-default-v8.cpu_profiler'];

// Starts tracing on `cdp` (a CDP session of the page); stop() ends it and resolves to the events.
export async function startTrace(cdp) {
  const events = [];
  const onData = (e) => events.push(...e.value);
  cdp.on('Tracing.dataCollected', onData);
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', {
    traceConfig: { includedCategories: CATEGORIES }, transferMode: 'ReportEvents',
  });
  return {
    async stop() {
      await cdp.send('Tracing.end');
      await complete;
      cdp.off('Tracing.dataCollected', onData);
      return events;
    },
  };
}

function frameName(node) {
  const f = node.callFrame;
  if (f.functionName) return f.functionName;
  const file = (f.url || '').split('/').pop();
  return file ? `(anonymous ${file}:${f.lineNumber + 1})` : '(anonymous)';
}

// The profiles in `events` (one per thread that ran JavaScript), as { nodes, samples, deltas }.
function profiles(events) {
  const byId = new Map();
  for (const e of events) {
    if (e.name !== 'Profile' && e.name !== 'ProfileChunk') continue;
    const key = `${e.pid}:${e.id}`;
    if (!byId.has(key)) byId.set(key, { nodes: new Map(), samples: [], deltas: [] });
    const p = byId.get(key);
    const data = e.args && e.args.data ? e.args.data : {};
    const cpu = data.cpuProfile || {};
    for (const n of cpu.nodes || []) p.nodes.set(n.id, n);
    for (const s of cpu.samples || []) p.samples.push(s);
    for (const d of data.timeDeltas || []) p.deltas.push(d);
  }
  return [...byId.values()];
}

// Lines naming the `top` functions by share of the busiest thread's samples: by self time, then
// by inclusive time (the function or anything it called).
export function summarize(events, top = 25) {
  const busy = (p) => p.samples.filter((s) => {
    const n = p.nodes.get(s);
    return n && !['(idle)', '(program)', '(garbage collector)'].includes(n.callFrame.functionName);
  }).length;
  const all = profiles(events).filter((p) => p.samples.length > 0);
  if (all.length === 0) return ['no samples were recorded'];
  const p = all.reduce((a, b) => (busy(b) > busy(a) ? b : a));
  // The thread idles while the start and stop requests travel between worker, page and Node:
  // idle samples before the first busy one and after the last are not the phase's.
  const idle = (s) => {
    const n = p.nodes.get(s);
    return !n || n.callFrame.functionName === '(idle)';
  };
  let first = 0;
  let last = p.samples.length;
  while (first < last && idle(p.samples[first])) first++;
  while (last > first && idle(p.samples[last - 1])) last--;
  p.samples = p.samples.slice(first, last);
  p.deltas = p.deltas.slice(first + 1, last);
  const self = new Map();
  const inclusive = new Map();
  const add = (m, k) => m.set(k, (m.get(k) || 0) + 1);
  for (const s of p.samples) {
    let n = p.nodes.get(s);
    if (!n) continue;
    add(self, frameName(n));
    const seen = new Set();
    for (; n; n = p.nodes.get(n.parent)) {
      const name = frameName(n);
      if (!seen.has(name)) add(inclusive, name);
      seen.add(name);
    }
  }
  const total = p.samples.length;
  const ms = p.deltas.reduce((a, b) => a + b, 0) / 1000;
  const pct = (c) => `${((100 * c) / total).toFixed(1).padStart(5)}%`;
  const list = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([name, c]) => `  ${pct(c)}  ${name.length > 140 ? `${name.slice(0, 137)}...` : name}`);
  return [
    `${total} samples over ${ms.toFixed(0)} ms on the busiest thread (idle ends trimmed)`,
    'self:', ...list(self),
    'inclusive:', ...list(inclusive),
  ];
}
