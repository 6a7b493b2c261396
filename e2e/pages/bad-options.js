// Open options the package must refuse with invalid_argument, shared by the page and the worker
// side of tests/boundary.mjs: wrong types, numbers beyond what the field holds (a 32-bit size_t
// in wasm32 would wrap them), and objects that throw when they are read. The third element, when
// there is one, is the value the error message must name. The bad `key` and `keyId` values come
// from encryption-bad.js (their messages must not repeat the key; tests/encryption.mjs checks).
import { badKeyOptions } from './encryption-bad.js';

export function badOptions() {
  const throwingGetter = {};
  Object.defineProperty(throwingGetter, 'durability', {
    enumerable: true,
    get() {
      throw new Error('the getter refuses');
    },
  });
  const refuse = () => {
    throw new Error('the proxy refuses');
  };
  const throwingProxy = new Proxy({}, {
    ownKeys: refuse, get: refuse, getOwnPropertyDescriptor: refuse,
  });
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  return [
    ['durability 1', { durability: 1 }],
    ['durability true', { durability: true }],
    ['compression [zstd]', { compression: ['zstd'] }],
    ['compression String object', { compression: new String('zstd') }],
    ['createIfMissing 1', { createIfMissing: 1 }],
    ['memtableSize 2**40', { memtableSize: 2 ** 40 }, '1099511627776'],
    ['memtableSize 2**32 + 4096', { memtableSize: 2 ** 32 + 4096 }, '4294971392'],
    ['blockCacheSize 2**32', { blockCacheSize: 2 ** 32 }, '4294967296'],
    ['writeBufferBytes 2**32 + 1', { writeBufferBytes: 2 ** 32 + 1 }, '4294967297'],
    ['reserveSlots 2**32 + 24', { reserveSlots: 2 ** 32 + 24 }, '4294967320'],
    ['levelBaseBytes 2**53', { levelBaseBytes: 2 ** 53 }, '9007199254740992'],
    ['memtableSize "65536"', { memtableSize: '65536' }],
    ['memtableSize 65536n', { memtableSize: 65536n }],
    ['valueLog 1', { valueLog: 1 }],
    ['valueLog threshold 0', { valueLog: { threshold: 0 } }, '0'],
    ['valueLog threshold 2**32 + 1', { valueLog: { threshold: 2 ** 32 + 1 } }, '4294967297'],
    ['valueLog maxFileSize 100', { valueLog: { maxFileSize: 100 } }, '100'],
    ['valueLog gcRatio 0', { valueLog: { gcRatio: 0 } }],
    ['valueLog gcRatio 1.5', { valueLog: { gcRatio: 1.5 } }, '1.5'],
    ['valueLog gcRatio NaN', { valueLog: { gcRatio: NaN } }, 'NaN'],
    ['valueLog gcRatio "0.5"', { valueLog: { gcRatio: '0.5' } }],
    ['valueLog unknown field', { valueLog: { thresh: 64 } }],
    ...badKeyOptions(),
    ['throwing getter', throwingGetter],
    ['throwing proxy', throwingProxy],
    ['revoked proxy', revocable.proxy],
  ];
}
