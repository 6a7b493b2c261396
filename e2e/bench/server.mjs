// The benchmark's static server: e2e/server.mjs plus, unless `coi` is false, the cross-origin
// isolation headers, which give performance.now() a 5 µs step instead of 100 µs.

import { startServer as startStaticServer } from '../server.mjs';

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export function startServer({ coi = true } = {}) {
  return startStaticServer({ headers: coi ? ISOLATION : {} });
}
