// How a call ended, for the API contract tests (pages and workers). Written against behaviour,
// not internals, so the same checks run on any version of the package.
//
//   await outcome(() => db.set('k', {}))   'resolved', an SkvError code ('invalid_argument'),
//                                          'timeout', 'threw synchronously: <code>', or
//                                          '<name>: <message>' for any other error
//   thrown(() => tx.get('k'))              the same for a synchronous call ('returned' if none)

export function describe(e) {
  if (e && e.name === 'SkvError') return e.code;
  return `${e && e.name}: ${e && e.message}`;
}

export async function outcome(fn, ms = 5000) {
  let p;
  try {
    p = fn();
  } catch (e) {
    return `threw synchronously: ${describe(e)}`;
  }
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([Promise.resolve(p).then(() => 'resolved'), timeout]);
  } catch (e) {
    return describe(e);
  } finally {
    clearTimeout(timer);
  }
}

export function thrown(fn) {
  try {
    fn();
    return 'returned';
  } catch (e) {
    return describe(e);
  }
}

// Counts unhandled rejections from now on; `settle()` waits a few turns and returns the count.
export function watchUnhandled(target = self) {
  const seen = [];
  const onEvent = (event) => {
    event.preventDefault();
    seen.push(describe(event.reason));
  };
  target.addEventListener('unhandledrejection', onEvent);
  return async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));
    target.removeEventListener('unhandledrejection', onEvent);
    return seen;
  };
}
