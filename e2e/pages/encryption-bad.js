// Bad `key` and `keyId` open options, shared by tests/encryption.mjs (client, worker API and wasm
// glue) and bad-options.js (tests/boundary.mjs). Each is [what, options]; every one must be
// invalid_argument with a message that names the option and never repeats the key.

// The text a refusal must never contain: this key's hex digits (and their first half), and the
// digits of bad-key strings below.
export const SECRET_HEX = '5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2';

export function badKeyOptions() {
  const bytes = (n) => new Uint8Array(n).fill(0x5e);
  return [
    ['key of 31 bytes', { key: bytes(31) }],
    ['key of 33 bytes', { key: bytes(33) }],
    ['key of 0 bytes', { key: new Uint8Array(0) }],
    ['key of 63 hex digits', { key: SECRET_HEX.slice(0, 63) }],
    ['key of 65 hex digits', { key: `${SECRET_HEX}a` }],
    ['key with a non-hex digit', { key: `${SECRET_HEX.slice(0, 63)}g` }],
    ['key with a space', { key: ` ${SECRET_HEX.slice(1)}` }],
    ['key with a trailing newline', { key: `${SECRET_HEX.slice(1)}\n` }],
    ['key as a number', { key: 12345 }],
    ['key as true', { key: true }],
    ['key as an array', { key: Array.from(bytes(32)) }],
    ['key as an ArrayBuffer', { key: bytes(32).buffer }],
    ['key as a Uint16Array', { key: new Uint16Array(16) }],
    ['key as a DataView', { key: new DataView(new ArrayBuffer(32)) }],
    ['key as an object', { key: { length: 32 } }],
    ['keyId 0', { key: SECRET_HEX, keyId: 0 }],
    ['keyId 1.5', { key: SECRET_HEX, keyId: 1.5 }],
    ['keyId -1', { key: SECRET_HEX, keyId: -1 }],
    ['keyId 2**32', { key: SECRET_HEX, keyId: 2 ** 32 }],
    ['keyId NaN', { key: SECRET_HEX, keyId: NaN }],
    ['keyId "1"', { key: SECRET_HEX, keyId: '1' }],
    ['keyId 1n', { key: SECRET_HEX, keyId: 1n }],
    ['keyId without key', { keyId: 1 }],
  ];
}

// The option a refusal must name ('key' or 'keyId').
export function optionNamed(what) {
  return what.startsWith('keyId') ? 'keyId' : 'key';
}

// Why a refusal's message is wrong, or null: it must name the option and contain no run of 16 or
// more hex digits of the key and no list of its bytes.
export function messageProblem(what, message) {
  const m = String(message);
  if (!m.includes(optionNamed(what))) return `does not name ${optionNamed(what)}: ${m}`;
  const lower = m.toLowerCase();
  for (let i = 0; i + 16 <= SECRET_HEX.length; i++) {
    if (lower.includes(SECRET_HEX.slice(i, i + 16))) return `repeats the key: ${m}`;
  }
  if (m.includes('94,94') || m.includes('94, 94')) return `lists the key's bytes: ${m}`;
  return null;
}
