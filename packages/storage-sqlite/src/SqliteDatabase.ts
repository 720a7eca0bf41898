/**
 * The synchronous SQLite connection the stores run on: prepared statements
 * and transactions, the common surface of better-sqlite3 (Node) and
 * bun:sqlite (Bun). Statements run synchronously inside `Effect.sync`, which
 * is several times cheaper per query than an async SQL client and makes each
 * transaction atomic with respect to other fibers of the process.
 */
import { Context } from "effect"

export type SqliteValue = string | number | bigint | null | Uint8Array

export interface SqliteStatement {
  readonly run: (...params: ReadonlyArray<SqliteValue>) => { readonly changes: number | bigint }
  readonly get: (...params: ReadonlyArray<SqliteValue>) => unknown
  readonly all: (...params: ReadonlyArray<SqliteValue>) => ReadonlyArray<unknown>
  /** Releases the statement now, where the driver can (bun:sqlite); else it goes with its object. */
  readonly finalize?: () => void
}

export interface SqliteConnection {
  readonly prepare: (sql: string) => SqliteStatement
  readonly exec: (sql: string) => void
  /** Runs `body` in one transaction: committed if it returns, rolled back if it throws. */
  readonly transaction: <A>(body: () => A) => A
  readonly close: () => void
  /** The file it is on, where it is one (its WAL beside it): the group commit's fsync. */
  readonly filename?: string
}

export class SqliteDatabase extends Context.Tag("@pay/storage-sqlite/SqliteDatabase")<
  SqliteDatabase,
  SqliteConnection
>() {}

/** Settings every connection gets: a busy timeout instead of failing while another process
 * writes (first: switching to WAL needs the file's lock, which a process migrating it holds;
 * bun:sqlite, unlike better-sqlite3, waits for nothing by default), WAL for concurrent readers
 * (the CLI beside the server), full fsync on commit so an acknowledged write survives a power
 * cut, and enforced foreign keys. */
export const CONNECTION_PRAGMAS = [
  "busy_timeout = 5000",
  "journal_mode = WAL",
  "synchronous = FULL",
  "foreign_keys = ON"
] as const
