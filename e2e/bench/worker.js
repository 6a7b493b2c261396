// The benchmark's module worker: opens one engine (engine-<name>.js) on a clean slate, runs the
// workload's phases against it, posts each phase's figures as { progress } and ends with
// { done, result } (or { done, error }).
import { runAll } from './workload.js';

// The smallest step performance.now() takes here: 5 µs when cross-origin isolated, 100 µs if not.
function timerStep() {
  let step = Infinity;
  for (let i = 0; i < 20; i++) {
    const a = performance.now();
    let b = a;
    while (b === a) b = performance.now();
    step = Math.min(step, b - a);
  }
  return step;
}

async function storageBytes() {
  try {
    return (await navigator.storage.estimate()).usage;
  } catch {
    return null;
  }
}

// With config.profilePhase, the page starts and stops a trace around that phase
// (e2e/bench/profile.mjs): the worker asks with { profile: 'start' | 'stop' } and waits for the
// page's { profileAck }.
let ack = null;
function askPage(profile) {
  return new Promise((resolve) => {
    ack = resolve;
    self.postMessage({ profile });
  });
}

function profileHooks(phase) {
  if (!phase) return {};
  return {
    before: (id) => (id === phase ? askPage('start') : undefined),
    after: (id) => (id === phase ? askPage('stop') : undefined),
  };
}

self.onmessage = async (e) => {
  if (e.data && e.data.profileAck) {
    const resolve = ack;
    ack = null;
    if (resolve) resolve();
    return;
  }
  const config = e.data;
  try {
    const t0 = performance.now();
    const mod = await import(`./engine-${config.engine}.js`);
    const engine = await mod.openEngine(config);
    const openMs = performance.now() - t0;
    self.postMessage({ progress: { opened: engine.name, ms: openMs } });
    const phases = await runAll(engine, config, (p) => self.postMessage({ progress: p }),
      storageBytes, profileHooks(config.profilePhase));
    const stats = engine.stats();
    await engine.close();
    self.postMessage({
      done: true,
      result: {
        key: config.engine, name: engine.name, durability: engine.durability, open_ms: openMs,
        phases, stats,
        env: {
          userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated === true,
          timerStepMs: timerStep(), hardwareConcurrency: navigator.hardwareConcurrency,
        },
      },
    });
  } catch (err) {
    self.postMessage({ done: true, error: { message: String(err && err.message), stack: String(err && err.stack) } });
  }
};
