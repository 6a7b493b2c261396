// Shared by the test workers: runs `body(args)` on the first message and posts
// { done: true, result } or { done: true, error: { code, message, stack } }.
export function serve(body) {
  self.onmessage = async (e) => {
    try {
      const result = await body(e.data);
      self.postMessage({ done: true, result });
    } catch (err) {
      self.postMessage({ done: true, error: { code: err.code, message: String(err.message), stack: String(err.stack) } });
    }
  };
}

export const text = (b) => (b === undefined ? undefined : new TextDecoder().decode(b));

export function check(cond, message) {
  if (!cond) throw new Error(`check failed: ${message}`);
}
