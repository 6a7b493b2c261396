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

/** Every failure the package reports. */
export declare class SkvError extends Error {
  constructor(code: ErrorCode, message: string);
  readonly name: 'SkvError';
  readonly code: ErrorCode;
  toJSON(): { code: ErrorCode; message: string };
}

export type Durability = 'immediate' | 'eventual';
export type Mode = 'readwrite' | 'readonly';

export interface OpenOptions {
  /** Create the database if it does not exist (default true); else open fails with not_found. */
  createIfMissing?: boolean;
  /** Durability of commits that do not choose one (default 'immediate'). */
  durability?: Durability;
  /** Wait for another tab or worker to close the database instead of failing with busy. */
  waitForLock?: boolean;
  /** Free slots (OPFS files) the pool keeps ready (default 24). */
  reserveSlots?: number;
  /** Cap on the number of slots (0: no cap but the browser's quota). */
  maxSlots?: number;
  /** Open even if some slot headers are damaged, keeping those slots out of use. */
  openWithDamagedSlots?: boolean;
  /** Bytes buffered per file before one OPFS write (default 1 MiB). */
  writeBufferBytes?: number;
  memtableSize?: number;
  maxImmutableMemtables?: number;
  blockSize?: number;
  blockCacheSize?: number;
  bloomBitsPerKey?: number;
  levelBaseBytes?: number;
  targetFileSize?: number;
  /** Input bytes a compaction reads per step between calls (default 1 MiB; 0: all at once). */
  compactionStepBytes?: number;
  l0CompactionTrigger?: number;
  compression?: 'zstd' | 'none';
}

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
  /** Entries fetched per step (default 256). */
  batchSize?: number;
}

export interface ScanOptions extends RangeOptions {
  /** Entries to skip first. */
  offset?: number;
  /** At most this many entries. */
  limit?: number;
}

export type Entry<V> = [key: V, value: V];

export interface PoolStats {
  slots: number;
  used: number;
  free: number;
  releasing: number;
  damaged: number;
  handleReads: number;
  handleWrites: number;
  handleFlushes: number;
}

export interface Stats {
  lastSequence: number;
  memtableBytes: number;
  immutableMemtables: number;
  filesPerLevel: number[];
  bytesPerLevel: number[];
  flushes: number;
  compactions: number;
  /** Steps the compactions took (each one task between calls). */
  compactionSteps: number;
  stalls: number;
  blockCacheBytes: number;
  /** Commits written to the WAL since open. */
  commits: number;
  /** WAL writes that carried them (group commit: at most `commits`). */
  commitGroups: number;
  /** flush() calls on the WAL for Immediate commits. */
  walSyncs: number;
  pool: PoolStats;
  /** Executor tasks the worker ran between calls (WAL writes, flushes, compactions). */
  steps: number;
  /** The longest of them, in milliseconds: how long the worker was kept from answering. */
  longestStepMs: number;
}

/** A logical file of the database, as the native build keeps it in its directory. */
export type ExportedFile = [name: string, bytes: Uint8Array];
