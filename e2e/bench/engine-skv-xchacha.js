// skv with every file sealed (docs/encryption.md): the same engine and options as engine-skv.js,
// opened with a 32-byte key, so XChaCha20-Poly1305 (the cipher the browser build has) seals every
// WAL record, table block, manifest record and value log entry. The key is fixed: the benchmark
// measures the cost of sealing, not key handling.

import { openSkv } from './engine-skv.js';

export function openEngine(config) {
  const key = new Uint8Array(32);
  for (let i = 0; i < key.length; i++) key[i] = (i * 37 + 11) & 0xff;
  return openSkv(config, 'skv (xchacha20-poly1305)', { key });
}
