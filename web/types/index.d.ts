// 'skv': the main-thread client. Same calls as 'skv/worker', as promises; the database runs in
// a module worker the client starts. Every call that returns a promise reports every failure,
// bad arguments included, by rejecting with an SkvError; it never throws.
import type {
  DumpImportOptions, DumpImportResult, IndexedDBDump, IndexedDBImportOptionsBase,
  IndexedDBImportProgress,
  Bytes, CommitOptions, Decoded, ExportedFile, HistoryOptions, ImportedFile, ImportOptions, KeyVersion,
  Mode, OpenOptions,
  RangeEntry, RangeOptions, ReadOptions, ScanOptions, Stats, Timestamp, TransactionOptions,
  Versioning,
} from './common.js';

export * from './common.js';

export interface ClientOpenOptions extends OpenOptions {
  /**
   * A worker already running the package's worker script, 'skv/server' (default: start one).
   * Databases opened on one worker share it; close() leaves it running.
   */
  worker?: Worker;
}

export declare function open(name: string, options?: ClientOpenOptions): Promise<Database>;
/**
 * Removes the database's slot files, and its directory unless it holds entries skv did not
 * make (those are left alone). `busy` while the database is open anywhere.
 */
export declare function deleteDatabase(name: string): Promise<void>;
/** The names of the directories under skv/ that hold a database's slot files. */
export declare function listDatabases(): Promise<string[]>;
/**
 * Makes database `name` from `files`, the opposite of exportFiles(): a directory the native skv
 * tool wrote, or another database's export. `name` must not exist (invalid_argument "already
 * exists"; busy while open or locked). Every name is checked (only the names the core writes;
 * CURRENT required), the files are written, CURRENT last, and the database is opened once,
 * read-only, with `options`, and every live file read and checked: a damaged or incomplete set
 * is refused with the core's error and leaves no database. Resolves once it is durable. The client checks the files, then sends them to a short-lived
 * worker by structured clone (one copy there for the length of the call).
 */
export declare function importFiles(name: string, files: ReadonlyArray<ImportedFile>,
  options?: ImportOptions): Promise<void>;

export interface IndexedDBImportOptions extends IndexedDBImportOptionsBase {
  /**
   * The destination: a database name (opened, created if missing unless `openOptions` say
   * otherwise, and closed at the end, in a worker of the call's own or `worker`), or a
   * Database open through this client (the import runs in its worker).
   */
  into: string | Database;
  /** With a name: a worker running 'skv/server' to run the import in (default: a new one). */
  worker?: Worker;
}

export interface ClientDumpImportOptions extends DumpImportOptions {
  /** With a name: a worker running 'skv/server' to run the import in (default: a new one). */
  worker?: Worker;
}

/**
 * Imports IndexedDB database `source` of this origin into an skv database (docs/indexeddb.md).
 * The records are read in the worker that holds the destination, in batches; each batch is one
 * skv transaction that also records the progress, so a call with the same arguments after a
 * reload resumes after the last committed batch. Resolves with the last progress (done: true).
 * Refusals: no such database or store (not_found, reason no_such_source); an unfinished import
 * of another source in the destination (invalid_argument, reason source_mismatch); a record
 * that cannot be imported (invalid_argument: key_too_large, value_too_large, unsupported_value).
 */
export declare function importIndexedDB(source: string, options: IndexedDBImportOptions):
  Promise<IndexedDBImportProgress>;

/**
 * Imports an INDXDB01 dump file (docs/indexeddb.md) into `into`: a database name (created if
 * missing) or a Database open through this client. The whole file is checked before anything is
 * opened or written: bad magic, a wrong count, a length past the end, trailing bytes, a key skv
 * cannot hold are invalid_argument with a reason, and create nothing.
 */
export declare function importIndexedDBDump(dump: IndexedDBDump, into: string | Database,
  options?: ClientDumpImportOptions): Promise<DumpImportResult>;

export declare class Database {
  private constructor();
  readonly name: string;
  /**
   * Returns at once; the worker begins the transaction with its first request. A mode other
   * than 'readwrite' or 'readonly' throws invalid_argument; after close() it throws closed.
   */
  begin(mode?: Mode): Transaction;
  get<O extends ReadOptions = {}>(key: Bytes, options?: O): Promise<Decoded<O> | undefined>;
  set(key: Bytes, value: Bytes, options?: CommitOptions): Promise<void>;
  delete(key: Bytes, options?: CommitOptions): Promise<void>;
  scan<O extends ScanOptions = {}>(start?: Bytes, end?: Bytes, options?: O):
    Promise<Array<RangeEntry<O>>>;
  /**
   * Iterates [start, end) in a read-only transaction of its own, which ends with the loop
   * (exhausted, broken out of, or failed). Bad arguments throw invalid_argument here.
   */
  range<O extends RangeOptions = {}>(start?: Bytes, end?: Bytes, options?: O):
    RangeIterator<RangeEntry<O>>;
  count(start?: Bytes, end?: Bytes): Promise<number>;
  /**
   * Versioned queries need a database opened or created with versioning; on any other they
   * fail with not_supported. Timestamps are nanoseconds since the Unix epoch (Timestamp).
   * setAt writes `value` stamped with `timestamp` (1 to 2^63 - 1), in a transaction of its own.
   */
  setAt(key: Bytes, value: Bytes, timestamp: Timestamp, options?: CommitOptions): Promise<void>;
  /** The value of `key` as of `timestamp` (its newest version at or before it). */
  getAt<O extends ReadOptions = {}>(key: Bytes, timestamp: Timestamp, options?: O):
    Promise<Decoded<O> | undefined>;
  /** Every version of `key`, newest first. */
  history<O extends HistoryOptions = {}>(key: Bytes, options?: O):
    Promise<Array<KeyVersion<Decoded<O>>>>;
  /** As range(), over the database as it was at `timestamp`: each key with its version then. */
  rangeAt<O extends RangeOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): RangeIterator<RangeEntry<O>>;
  /** As scan(), over the database as it was at `timestamp`. */
  scanAt<O extends ScanOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): Promise<Array<RangeEntry<O>>>;
  /** Whether the database is versioned and its retention, as stored in it. */
  versioning(): Promise<Versioning>;
  /**
   * Runs `fn` in a read-write transaction, commits it, and returns what `fn` returned. On a
   * conflict the whole transaction runs again, up to `retries` times (default 3).
   */
  transaction<T>(fn: (tx: Transaction) => T | PromiseLike<T>, options?: TransactionOptions):
    Promise<Awaited<T>>;
  flush(): Promise<void>;
  compact(): Promise<void>;
  /**
   * Rewrites the value log files whose garbage share reaches `valueLog.gcRatio` and removes the
   * files nothing points into any more; runs to completion (like compact()). Does nothing on a
   * database that never used the value log.
   */
  collectVlogGarbage(): Promise<void>;
  stats(): Promise<Stats>;
  exportFiles(): Promise<ExportedFile[]>;
  /**
   * Writes a consistent copy of this database into the new database `target` while this one
   * stays open and in use: every commit acknowledged before the call and a prefix (in commit
   * order) of the ones made during it, the same stored options, sealed like this one when it is
   * encrypted (it then opens with the same key only). `target` must not exist (invalid_argument
   * "already exists"), nor be open or locked elsewhere (busy); a refusal creates nothing, and a
   * failure part-way removes what it made.
   */
  checkpoint(target: string): Promise<void>;
  /**
   * Closes the database and stops the worker the client started. From the call on, every call
   * on this handle answers closed (begin and range throw it, the rest reject); closing again
   * does nothing.
   */
  close(): Promise<void>;
}

export declare class Transaction {
  private constructor();
  readonly mode: Mode;
  /**
   * Queued and sent with the next request; settles when the worker has buffered the write.
   * Awaiting it is optional: a refused write (a key or value that is not a string or bytes, an
   * empty key, a write in a read-only transaction) fails the whole transaction, so later
   * requests on it, commit() included, reject with the same error.
   */
  set(key: Bytes, value: Bytes): Promise<void>;
  delete(key: Bytes): Promise<void>;
  /**
   * Queued like set(); stamped with `timestamp` (1 to 2^63 - 1) instead of the commit's time. A
   * bad timestamp, or a database without versioning, fails the whole transaction.
   */
  setAt(key: Bytes, value: Bytes, timestamp: Timestamp): Promise<void>;
  get<O extends ReadOptions = {}>(key: Bytes, options?: O): Promise<Decoded<O> | undefined>;
  /**
   * As get(); in the worker the read runs as a task on the engine's executor
   * (Transaction::get_async), so it settles on a later turn with the same value.
   */
  getAsync<O extends ReadOptions = {}>(key: Bytes, options?: O): Promise<Decoded<O> | undefined>;
  count(start?: Bytes, end?: Bytes): Promise<number>;
  /** Bad arguments throw invalid_argument here. The iterator ends with the transaction. */
  range<O extends RangeOptions = {}>(start?: Bytes, end?: Bytes, options?: O):
    RangeIterator<RangeEntry<O>>;
  scan<O extends ScanOptions = {}>(start?: Bytes, end?: Bytes, options?: O):
    Promise<Array<RangeEntry<O>>>;
  /**
   * Versioned reads see the committed versions of the transaction's snapshot, not its own
   * writes. The value of `key` as of `timestamp`.
   */
  getAt<O extends ReadOptions = {}>(key: Bytes, timestamp: Timestamp, options?: O):
    Promise<Decoded<O> | undefined>;
  /** Every version of `key`, newest first. */
  history<O extends HistoryOptions = {}>(key: Bytes, options?: O):
    Promise<Array<KeyVersion<Decoded<O>>>>;
  /** The iterator ends with the transaction. */
  rangeAt<O extends RangeOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): RangeIterator<RangeEntry<O>>;
  scanAt<O extends ScanOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): Promise<Array<RangeEntry<O>>>;
  savepoint(): Promise<void>;
  rollbackToSavepoint(): Promise<void>;
  commit(options?: CommitOptions): Promise<void>;
  rollback(): Promise<void>;
}

/** An async iterator over a range; `break` in a for await loop closes it. */
export declare class RangeIterator<E> implements AsyncIterableIterator<E> {
  private constructor();
  next(): Promise<IteratorResult<E, undefined>>;
  return(): Promise<IteratorResult<E, undefined>>;
  [Symbol.asyncIterator](): RangeIterator<E>;
}
