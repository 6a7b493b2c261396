// Types shared by the main-thread client ('skv') and the worker API ('skv/worker').

/** A key, a value or a range bound: bytes, or a string stored as its UTF-8 bytes. */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | string;

/** The stable error kinds, the same names as the C++ core's error codes. */
export type ErrorCode =
  | 'not_found'
  | 'conflict'
  | 'read_only'
  | 'closed'
  | 'invalid_argument'
  | 'corruption'
  | 'io'
  | 'quota'
  | 'busy'
  | 'encryption'
  | 'not_supported';

export declare const ERROR_CODES: readonly ErrorCode[];

/**
 * The sub-kind of an 'encryption' error (SkvError.reason), the C++ core's EncryptionError:
 * - wrong_key: the key does not open the database;
 * - unknown_key_id: a file is sealed under a key id the opener did not give (`keyId`);
 * - key_retired: the key id may no longer seal new files;
 * - not_configured: the database is encrypted and open() was given no `key`;
 * - not_encrypted: `key` was given for a database created without encryption.
 */
export type EncryptionReason =
  | 'wrong_key'
  | 'unknown_key_id'
  | 'key_retired'
  | 'not_configured'
  | 'not_encrypted';

export declare const ENCRYPTION_REASONS: readonly EncryptionReason[];

/**
 * The sub-kind of an 'invalid_argument' or 'not_found' error of the IndexedDB importer
 * (docs/indexeddb.md):
 * - invalid_key: not an IndexedDB key; key_too_large: a record's skv key passes 65,535 bytes;
 * - unsupported_value: a value of a type the encoding does not hold; value_too_large: an encoded
 *   value passes 64 MiB;
 * - bad_store_name: a store name with U+0000 or a lone surrogate;
 * - bad_encoding: bytes given to a decode function that no encoder wrote;
 * - no_such_source: no IndexedDB database, or no object store, of that name;
 * - source_mismatch: the destination holds an unfinished import of another source;
 * - bad_magic, count_mismatch, truncated, trailing_bytes: a dump file that is not INDXDB01.
 */
export type ImportReason =
  | 'invalid_key'
  | 'key_too_large'
  | 'unsupported_value'
  | 'value_too_large'
  | 'bad_store_name'
  | 'bad_encoding'
  | 'no_such_source'
  | 'source_mismatch'
  | 'bad_magic'
  | 'count_mismatch'
  | 'truncated'
  | 'trailing_bytes';

/** What SkvError.reason may hold. */
export type ErrorReason = EncryptionReason | ImportReason;

/** What an SkvError becomes on its way between the worker and the page. */
export interface PlainError {
  code: ErrorCode;
  message: string;
  reason?: ErrorReason;
  cause?: { name: string; message: string };
}

/**
 * Every failure the package reports. An SkvError that wraps another error keeps it as `cause`
 * (across the worker boundary, as an Error with the original's name and message).
 */
export declare class SkvError extends Error {
  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; reason?: ErrorReason },
  );
  readonly name: 'SkvError';
  readonly code: ErrorCode;
  /**
   * For code 'encryption', which one; for an error of the IndexedDB importer, which one
   * (ImportReason); undefined otherwise.
   */
  readonly reason?: ErrorReason;
  toJSON(): PlainError;
  static from(plain: PlainError): SkvError;
}

export type Durability = 'immediate' | 'eventual';
export type Mode = 'readwrite' | 'readonly';

/**
 * Options of open(). Every one is checked before anything is created: a value of the wrong type,
 * a number that is not an integer in its range, or a name not listed here is invalid_argument.
 */
export interface OpenOptions {
  /** Create the database if it does not exist (default true); else open fails with not_found. */
  createIfMissing?: boolean;
  /** Durability of commits that do not choose one (default 'immediate'). */
  durability?: Durability;
  /** Wait for another tab or worker to close the database instead of failing with busy. */
  waitForLock?: boolean;
  /** Free slots (OPFS files) the pool keeps ready: 1..1024 (default 24). */
  reserveSlots?: number;
  /** Cap on the number of slots: 0..1,000,000 (0, the default: no cap but the browser's quota). */
  maxSlots?: number;
  /** Open even if some slot headers are damaged, keeping those slots out of use. */
  openWithDamagedSlots?: boolean;
  /** Bytes buffered per file before one OPFS write: 0..64 MiB (default 1 MiB). */
  writeBufferBytes?: number;
  /** Size at which the memtable is flushed: 4 KiB..1 GiB (default 4 MiB). */
  memtableSize?: number;
  /** Frozen memtables that may wait for a flush: 1..64 (default 2). */
  maxImmutableMemtables?: number;
  /** Target size of a table's data block: 256 B..64 MiB (default 16 KiB). */
  blockSize?: number;
  /** Block cache capacity: 0..1 GiB (default 16 MiB; 0 disables it). */
  blockCacheSize?: number;
  /** Bloom filter bits per key: 0..64 (default 10; 0 disables filters). */
  bloomBitsPerKey?: number;
  /** Target size of level 1: at least 64 KiB (default 16 MiB). */
  levelBaseBytes?: number;
  /** Compaction outputs are split at about this size: at least 64 KiB (default 4 MiB). */
  targetFileSize?: number;
  /** Input bytes a compaction reads per step between calls (default 1 MiB; 0: all at once). */
  compactionStepBytes?: number;
  /** L0 tables that trigger a compaction: 1..19 (default 4). */
  l0CompactionTrigger?: number;
  /** How compactions compress tables from `compressionStartLevel` on (default 'zstd'). */
  compression?: 'zstd' | 'none';
  /** The first level compactions compress: 1..7 (default 2: L1 stays raw, as L0 does). */
  compressionStartLevel?: number;
  /**
   * Versioned queries (setAt, getAt, history, rangeAt, scanAt): every write keeps its
   * timestamp. A database stores whether it is versioned. Without this option a new database
   * is not versioned and an existing one opens as it was created. With it a new database is
   * created versioned (or not, with `enabled: false`); an existing one must agree on `enabled`
   * (invalid_argument otherwise), and a different `retentionNs` replaces the stored one.
   */
  versioning?: VersioningOptions;
  /**
   * Key-value separation: each flush writes the values of at least `threshold` bytes to value
   * log files and the tables keep small pointers to them, so compactions move pointers instead of
   * values. Garbage collection rewrites a value log once `gcRatio` of it is garbage, in background
   * steps like compactions. On by default in the browser (values of at least 512 bytes);
   * `false` turns it off, `true` keeps the defaults. Values already separated stay readable with
   * it off.
   */
  valueLog?: ValueLogOptions | boolean;
  /**
   * Encryption at rest (docs/web.md, "Encryption"): the 32-byte root key, as a Uint8Array of
   * exactly 32 bytes or a string of exactly 64 hex digits. A new database is created sealed with
   * XChaCha20-Poly1305; an existing one must be encrypted and sealed under this key. Refusals are
   * SkvError 'encryption' with a `reason`: wrong_key, unknown_key_id, not_encrypted (the
   * database is plaintext); an encrypted database opened without `key` is not_configured.
   * Messages never repeat the key. The client sends a copy of a Uint8Array key and the worker
   * wipes it after the open; a string cannot be wiped.
   */
  key?: Uint8Array | string;
  /** The key id `key` is held under: an integer from 1 to 2^32 - 1 (default 1). Needs `key`. */
  keyId?: number;
}

export interface ValueLogOptions {
  /** Values of at least this many bytes are separated: 1 B..64 MiB (default 512 B here). */
  threshold?: number;
  /** A value log file rolls over at about this size: at least 4 KiB (default 16 MiB here). */
  maxFileSize?: number;
  /** Garbage share at which a value log is rewritten: a number in (0, 1] (default 0.5). */
  gcRatio?: number;
  /** Capacity of the cache of separated values: 0..1 GiB (default 8 MiB; 0 disables it). */
  cacheSize?: number;
}

/**
 * A timestamp: nanoseconds since the Unix epoch, from 0 to 2^63 - 1. A BigInt, or a Number that
 * is a safe integer (up to 2^53 - 1); results are always BigInts. A fraction, a negative value,
 * NaN, a larger value or another type is invalid_argument.
 */
export type Timestamp = bigint | number;

export interface VersioningOptions {
  /** Whether the database is versioned (default true). */
  enabled?: boolean;
  /**
   * How long compaction keeps versions that a newer one replaced, in nanoseconds: every version
   * newer than now - retentionNs stays, plus the newest one before that, so a read as of any
   * time in that window is exact. 0 (the default) keeps every version for ever.
   */
  retentionNs?: Timestamp;
}

/** A database's versioning, as stored in it (Database.versioning()). */
export interface Versioning {
  enabled: boolean;
  retentionNs: bigint;
}

export interface HistoryOptions extends ReadOptions {
  /** Also return the versions that delete the key (their value is undefined). */
  includeTombstones?: boolean;
  /** At most this many versions, newest first: a non-negative integer, or Infinity (default). */
  limit?: number;
}

/** One version of a key, as history() returns it. */
export type KeyVersion<V> =
  | { timestamp: bigint; value: V; tombstone: false }
  | { timestamp: bigint; value: undefined; tombstone: true };

export interface CommitOptions {
  durability?: Durability;
}

export interface ReadOptions {
  /** 'string' decodes keys and values as UTF-8; the default returns Uint8Array. */
  as?: 'bytes' | 'string';
}

export interface RangeOptions extends ReadOptions {
  reverse?: boolean;
  /** Yield keys only (values are never read). */
  keysOnly?: boolean;
  /** Entries fetched per step: 1..65536 (default 256). */
  batchSize?: number;
}

export interface ScanOptions extends RangeOptions {
  /** Entries to skip first: a non-negative integer. */
  offset?: number;
  /** At most this many entries: a non-negative integer, or Infinity (the default). */
  limit?: number;
}

export interface TransactionOptions {
  /** Times the whole transaction runs again after a conflict: 0..1000 (default 3). */
  retries?: number;
  /** Durability of the commit (default: the database's). */
  durability?: Durability;
}

export type Entry<V> = [key: V, value: V];

/**
 * What a key or value is read as under options `O`: a string with { as: 'string' }, bytes
 * without `as` or with 'bytes', either when `as` is not known at compile time.
 */
export type Decoded<O> = 'as' extends keyof O
  ? O extends { as: 'string' }
    ? string
    : O extends { as: 'bytes' | undefined }
      ? Uint8Array
      : string | Uint8Array
  : Uint8Array;

/** Whether options `O` ask for keys only: true, false, or boolean when not known. */
export type KeysOnly<O> = 'keysOnly' extends keyof O
  ? O extends { keysOnly: true }
    ? true
    : O extends { keysOnly: false | undefined }
      ? false
      : boolean
  : false;

/** What range() and scan() yield under options `O`: keys with { keysOnly: true }, else pairs. */
export type RangeEntry<O> = KeysOnly<O> extends true
  ? Decoded<O>
  : KeysOnly<O> extends false
    ? Entry<Decoded<O>>
    : Decoded<O> | Entry<Decoded<O>>;

export interface PoolStats {
  slots: number;
  used: number;
  free: number;
  releasing: number;
  damaged: number;
  handleReads: number;
  handleWrites: number;
  handleFlushes: number;
  /** Bytes of the database's slot files in OPFS, headers included. */
  fileBytes: number;
}

export interface Stats {
  lastSequence: number;
  memtableBytes: number;
  immutableMemtables: number;
  /**
   * Flush and compaction tasks queued or running (they run between calls). With
   * `immutableMemtables` at 0 too, the database has no background work left.
   */
  backgroundJobs: number;
  filesPerLevel: number[];
  bytesPerLevel: number[];
  flushes: number;
  compactions: number;
  /** Steps the compactions took (each one task between calls). */
  compactionSteps: number;
  stalls: number;
  blockCacheBytes: number;
  /** The part of `blockCacheBytes` held by blocks counts read (at most a quarter of the cache). */
  blockCacheScanBytes: number;
  /** Commits written to the WAL since open. */
  commits: number;
  /** WAL writes that carried them (group commit: at most `commits`). */
  commitGroups: number;
  /** flush() calls on the WAL for Immediate commits. */
  walSyncs: number;
  /** Value log files the tables point into. */
  vlogFiles: number;
  /** Their size, in bytes. */
  vlogBytes: number;
  /** Bytes of entries in them that no table points at any more. */
  vlogGarbageBytes: number;
  /** Value log garbage collections completed since open (background and collectVlogGarbage()). */
  vlogGcRuns: number;
  /** Value log bytes they rewrote. */
  vlogGcBytesMoved: number;
  /** Bytes held by the value cache. */
  vlogCacheBytes: number;
  pool: PoolStats;
  /** Executor tasks the worker ran between calls (WAL writes, flushes, compactions). */
  steps: number;
  /** The longest of them, in milliseconds: how long the worker was kept from answering. */
  longestStepMs: number;
  /** Transactions open now (each holds a snapshot, which keeps the versions it can see). */
  openTransactions: number;
  /** Iterators open now (each holds a snapshot too). */
  openIterators: number;
}

/** A logical file of the database, as the native build keeps it in its directory. */
export type ExportedFile = [name: string, bytes: Uint8Array];

/**
 * A file for importFiles(): a name the core writes (NNNNNN.sst, NNNNNN.wal, NNNNNN.vlog,
 * MANIFEST-NNNNNN or CURRENT; not the native LOCK) and its bytes.
 */
export type ImportedFile = readonly [name: string, bytes: Uint8Array | ArrayBuffer | ArrayBufferView];

/** Options of importFiles(): what the files need to be opened and checked. */
export interface ImportOptions {
  /** The root key of an encrypted set of files (as open()'s `key`). */
  key?: Uint8Array | string;
  /** The key id `key` is held under (as open()'s `keyId`). Needs `key`. */
  keyId?: number;
}

/**
 * What importIndexedDB() reports after each batch (one skv transaction), and resolves with at
 * the end.
 */
export interface IndexedDBImportProgress {
  /** The store the batch belonged to (null when the source has no store to import). */
  store: string | null;
  /** Records of that store imported so far (by this call and the calls it resumed). */
  records: number;
  /** Bytes of their skv keys and encoded values. */
  bytes: number;
  /** Stores finished, of storesTotal. */
  storesDone: number;
  storesTotal: number;
  /** Batches committed by the whole import, resumed calls included. */
  batches: number;
  /** True after the last batch: the marker is gone and the import is complete. */
  done: boolean;
}

/** Options of importIndexedDB() common to the client and the worker API. */
export interface IndexedDBImportOptionsBase {
  /** Open options of the destination, when `into` is a name (created if missing by default). */
  openOptions?: OpenOptions;
  /** The object stores to import, in this order (default: every store, in name order). */
  stores?: string[];
  /** Called after each committed batch; a promise it returns is awaited before the next. */
  progress?: (progress: IndexedDBImportProgress) => void | PromiseLike<void>;
  /** Records per batch: 1..65,536 (default 1,000). */
  batchSize?: number;
  /** A batch ends once its keys and values reach this many bytes: 1 B..64 MiB (default 4 MiB). */
  batchBytes?: number;
}

/** Options of importIndexedDBDump() common to the client and the worker API. */
export interface DumpImportOptions {
  /** Open options of the destination, when it is given by name. */
  openOptions?: OpenOptions;
  /** Records per transaction: 1..65,536 (default 1,000). */
  batchSize?: number;
  /** A transaction ends once its keys and values reach this many bytes (default 4 MiB). */
  batchBytes?: number;
}

/** What importIndexedDBDump() resolves with. */
export interface DumpImportResult {
  records: number;
  /** Bytes of the keys and values. */
  bytes: number;
  /** Transactions it took. */
  batches: number;
}

/** An INDXDB01 dump: its bytes, or a Blob (a File) holding them. */
export type IndexedDBDump = Uint8Array | ArrayBuffer | ArrayBufferView | Blob;

/** The skv key of record `key` of store `store`: `<store, UTF-8> 0x00 <encoded key>`. */
export declare function indexedDBRecordKey(store: string, key: IDBValidKey): Uint8Array;
/** [start, end): the range holding every imported record of store `store`. */
export declare function indexedDBStoreRange(store: string): [Uint8Array, Uint8Array];
/** The store and key of an imported record's skv key. */
export declare function splitIndexedDBKey(bytes: Uint8Array | ArrayBuffer | ArrayBufferView):
  { store: string; key: IDBValidKey };
/**
 * Order-preserving bytes of an IndexedDB key: comparing two encodings bytewise gives
 * indexedDB.cmp's order. Not a key: invalid_argument, reason invalid_key.
 */
export declare function encodeIndexedDBKey(key: IDBValidKey): Uint8Array;
/** The key back (binary keys as ArrayBuffer). Bad bytes: invalid_argument, bad_encoding. */
export declare function decodeIndexedDBKey(bytes: Uint8Array | ArrayBuffer | ArrayBufferView):
  IDBValidKey;
/** The tagged bytes of a structured-clone-able value (reads Blobs, so asynchronous). */
export declare function encodeIndexedDBValue(value: unknown): Promise<Uint8Array>;
/** A value back from its encoding. Bad bytes: invalid_argument, bad_encoding. */
export declare function decodeIndexedDBValue(bytes: Uint8Array | ArrayBuffer | ArrayBufferView):
  unknown;
/** The reserved key of an unfinished import's progress marker: 0x00 0xff "skv:indexeddb-import". */
export declare const INDEXEDDB_IMPORT_MARKER: Uint8Array;
