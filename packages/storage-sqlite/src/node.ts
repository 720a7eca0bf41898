/**
 * SQLite storage on Node: better-sqlite3 for the stores, and the
 * @effect/sql-sqlite-node client for the Migrator. Import from
 * `@pay/storage-sqlite/node`; Bun gets its own entry, since Bun cannot load
 * better-sqlite3.
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { SqliteClient } from "@effect/sql-sqlite-node"
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import { migrate } from "./Migrations.js"
import { CONNECTION_PRAGMAS, type SqliteConnection, SqliteDatabase } from "./SqliteDatabase.js"
import { SqliteStores } from "./SqliteStores.js"

export interface SqliteStorageOptions {
  /** The database file; its folder is created if missing. */
  readonly filename: string
}

export const openConnection = (filename: string): SqliteConnection => {
  mkdirSync(dirname(filename), { recursive: true })
  const db = new Database(filename)
  for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma)
  return {
    prepare: (sql) => {
      const statement = db.prepare(sql)
      return {
        run: (...params) => statement.run(...params),
        get: (...params) => statement.get(...params),
        all: (...params) => statement.all(...params)
      }
    },
    exec: (sql) => {
      db.exec(sql)
    },
    transaction: (body) => db.transaction(body)(),
    close: () => db.close()
  }
}

/** Applies pending migrations to the file through the Migrator, then lets go of it. */
export const migrateFile = (filename: string) =>
  Effect.zipRight(
    // Before the client layer is built: it opens the file.
    Effect.sync(() => mkdirSync(dirname(filename), { recursive: true })),
    Effect.provide(migrate, SqliteClient.layer({ filename }))
  )

/** The connection, migrated, closed when the layer's scope ends. */
export const connectionLayer = (options: SqliteStorageOptions) =>
  Layer.scoped(
    SqliteDatabase,
    Effect.zipRight(
      migrateFile(options.filename),
      Effect.acquireRelease(
        Effect.sync(() => openConnection(options.filename)),
        (db) => Effect.sync(() => db.close())
      )
    )
  )

/** Every storage port of the core on a SQLite file. */
export const layer = (options: SqliteStorageOptions) =>
  SqliteStores.pipe(Layer.provideMerge(connectionLayer(options)))
