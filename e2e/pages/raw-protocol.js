// A client of web/src/server.js that speaks its message protocol directly, for the tests that
// send what the real client never would. Every request waits at most 5 s for its answer, so a
// worker that stops answering shows up as 'timeout' instead of a hung test.
export function rawProtocol() {
  const worker = new Worker('/web/src/server.js', { type: 'module' });
  let errors = 0;
  worker.onerror = (e) => {
    e.preventDefault();
    errors++;
  };
  let next = 1;
  const waiting = new Map();
  worker.onmessage = (e) => {
    for (const m of e.data.batch) {
      const resolve = waiting.get(m.id);
      waiting.delete(m.id);
      if (resolve) resolve(m);
    }
  };
  // Posts one request (given whole, beyond its id) and resolves with its answer or { timeout }.
  const raw = (request, transfer = []) => {
    const id = next++;
    const reply = new Promise((resolve) => waiting.set(id, resolve));
    worker.postMessage({ batch: [{ id, ...request }] }, transfer);
    const timeout = new Promise((resolve) => {
      setTimeout(() => resolve({ timeout: true }), 5000);
    });
    return Promise.race([reply, timeout]);
  };
  const send = (op, args, transfer) => raw({ op, args }, transfer);
  // 'ok', the error's code, or 'timeout'.
  const answer = (m) => {
    if (m.timeout) return 'timeout';
    return m.ok ? 'ok' : m.error.code;
  };
  const code = async (op, args, transfer) => answer(await send(op, args, transfer));
  return { worker, raw, send, answer, code, errors: () => errors };
}
