// SkvError: every failure the package reports. `code` is stable and names the engine's error kind,
// the same names the C++ core uses (Code in core/include/skv/status.h):
//
//   not_found, conflict, read_only, closed, invalid_argument, corruption, io, quota, busy,
//   encryption, not_supported
//
// A conflict means another transaction committed a write to one of this transaction's keys
// first: retry with a new transaction. quota means the browser's storage quota or the slot pool
// ran out. busy means another tab or worker has the database open.

export const ERROR_CODES = Object.freeze([
  'not_found', 'conflict', 'read_only', 'closed', 'invalid_argument', 'corruption', 'io', 'quota',
  'busy', 'encryption', 'not_supported',
]);

export class SkvError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'SkvError';
    this.code = code;
  }

  // A plain object that survives postMessage (Error subclasses lose their class on the way).
  toJSON() {
    return { code: this.code, message: this.message };
  }

  static from(plain) {
    return new SkvError(plain.code, plain.message);
  }
}

// Wraps anything thrown into an SkvError (a JavaScript error from OPFS keeps its name).
export function asSkvError(e) {
  if (e instanceof SkvError) return e;
  const name = e && e.name ? e.name : 'Error';
  const message = e && e.message !== undefined ? e.message : String(e);
  if (name === 'QuotaExceededError') return new SkvError('quota', `${name}: ${message}`);
  return new SkvError('io', `${name}: ${message}`);
}
