/**
 * A SQLite file as the engine's storage, for any driver: the driver entries
 * (`@pay/storage-sqlite/node`, `@pay/storage-sqlite/bun`) give only how to
 * open a connection; migrating, the connection's lifetime and the stores are
 * the same code on every runtime.
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { Data, Effect, Layer, Schedule } from "effect"
import { type AppliedMigration, applyMigrations } from "./Migrations.js"
import { type SqliteConnection, SqliteDatabase } from "./SqliteDatabase.js"
import { readWorkerLayer, type SqliteReadWorkerOptions } from "./SqliteReadWorker.js"
import { SqliteStores } from "./SqliteStores.js"

export interface SqliteStorageOptions {
  /** The database file; its folder is created if missing. */
  readonly filename: string
  /**
   * Payment listings and statistics on a worker thread with its own connection, so that
   * none stalls the engine's thread (SqliteReadWorker.ts); on the engine's connection if absent.
   */
  readonly readWorker?: SqliteReadWorkerOptions | undefined
}

/** Opens a connection to the file (creating the file) with CONNECTION_PRAGMAS applied. */
export type OpenSqliteConnection = (filename: string) => SqliteConnection

/** The file could not be opened or migrated (a missing permission, a full disk, a newer schema). */
export class SqliteStorageError extends Data.TaggedError("SqliteStorageError")<{
  readonly filename: string
  readonly cause: unknown
}> {
  override get message() {
    return `SQLite database ${this.filename}: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`
  }
}

export interface SqliteFileStorage {
  /** The driver's connection, the file's folder created first if missing. */
  readonly openConnection: OpenSqliteConnection
  /** Applies pending migrations to the file, names them, and lets go of it. */
  readonly migrateFile: (
    filename: string
  ) => Effect.Effect<ReadonlyArray<AppliedMigration>, SqliteStorageError>
  /** The connection, migrated, closed when the layer's scope ends. */
  readonly connectionLayer: (
    options: SqliteStorageOptions
  ) => Layer.Layer<SqliteDatabase, SqliteStorageError>
  /** Every storage port of the core on a SQLite file. */
  readonly layer: (
    options: SqliteStorageOptions
  ) => Layer.Layer<Layer.Layer.Success<typeof SqliteStores> | SqliteDatabase, SqliteStorageError>
}

export const sqliteFileStorage = (
  openDriverConnection: OpenSqliteConnection
): SqliteFileStorage => {
  const openConnection = (filename: string) => {
    mkdirSync(dirname(filename), { recursive: true })
    return { ...openDriverConnection(filename), filename }
  }
  // Opening and migrating are idempotent or one transaction each, so a "locked" answer is tried
  // again: SQLite gives it at once, without the busy timeout, where waiting could deadlock (a
  // new file that several processes open, switch to WAL and migrate at the same moment).
  const attempt = <A>(filename: string, body: () => A) =>
    Effect.try({ try: body, catch: (cause) => new SqliteStorageError({ filename, cause }) }).pipe(
      Effect.retry({
        while: (error) => /database is locked/i.test(error.message),
        schedule: Schedule.intersect(Schedule.spaced("25 millis"), Schedule.recurs(200))
      })
    )
  const migrateFile = (filename: string) =>
    Effect.acquireUseRelease(
      attempt(filename, () => openConnection(filename)),
      (db) => attempt(filename, () => applyMigrations(db)),
      (db) => Effect.sync(() => db.close())
    )
  const connectionLayer = (options: SqliteStorageOptions) =>
    Layer.scoped(
      SqliteDatabase,
      Effect.acquireRelease(
        attempt(options.filename, () => {
          const db = openConnection(options.filename)
          try {
            applyMigrations(db)
          } catch (error) {
            db.close()
            throw error
          }
          return db
        }),
        (db) => Effect.sync(() => db.close())
      )
    )
  return {
    openConnection,
    migrateFile,
    connectionLayer,
    // The worker starts once the connection has migrated the file.
    layer: (options) =>
      (options.readWorker === undefined
        ? SqliteStores
        : SqliteStores.pipe(Layer.provide(readWorkerLayer(options.filename, options.readWorker)))
      ).pipe(Layer.provideMerge(connectionLayer(options)))
  }
}
