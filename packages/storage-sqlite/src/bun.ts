/**
 * SQLite storage on Bun, through bun:sqlite (Bun cannot load better-sqlite3).
 * Import from `@pay/storage-sqlite/bun`, under Bun only. The same migrations
 * and stores as on Node (SqliteFile.ts); this module only opens connections
 * and smooths the two drivers' differences.
 */
import { createRequire } from "node:module"
import { CONNECTION_PRAGMAS, type SqliteConnection, type SqliteValue } from "./SqliteDatabase.js"
import { sqliteFileStorage } from "./SqliteFile.js"

export { SqliteStorageError, type SqliteStorageOptions } from "./SqliteFile.js"

/**
 * The part of bun:sqlite used here, declared in this module: Bun's own global
 * types (`@types/bun`) would retype `fetch` and friends for every package.
 */
interface BunStatement {
  run(...params: ReadonlyArray<SqliteValue>): { readonly changes: number }
  get(...params: ReadonlyArray<SqliteValue>): unknown
  all(...params: ReadonlyArray<SqliteValue>): Array<unknown>
  finalize(): void
}
interface BunDatabase {
  prepare(sql: string): BunStatement
  exec(sql: string): void
  transaction<A>(body: () => A): () => A
  close(): void
}
type BunDatabaseClass = new (
  filename: string,
  options: { readonly create: boolean; readonly readwrite: boolean }
) => BunDatabase

// Required when the first connection opens, not imported: a static import would not type-check
// without Bun's types, and importing this module elsewhere fails only when it is used.
const require = createRequire(import.meta.url)
let databaseClass: BunDatabaseClass | undefined
const bunDatabase = (): BunDatabaseClass => {
  databaseClass ??= (require("bun:sqlite") as { Database: BunDatabaseClass }).Database
  return databaseClass
}

const openDriverConnection = (filename: string): SqliteConnection => {
  const Database = bunDatabase()
  const db = new Database(filename, { create: true, readwrite: true })
  for (const pragma of CONNECTION_PRAGMAS) db.exec(`PRAGMA ${pragma}`)
  return {
    prepare: (sql) => {
      const statement = db.prepare(sql)
      return {
        run: (...params) => statement.run(...params),
        // bun:sqlite answers null where better-sqlite3 (and the stores) say undefined: no row.
        get: (...params) => statement.get(...params) ?? undefined,
        all: (...params) => statement.all(...params),
        finalize: () => statement.finalize()
      }
    },
    exec: (sql) => {
      db.exec(sql)
    },
    transaction: (body) => db.transaction(body)(),
    close: () => db.close()
  }
}

export const { openConnection, migrateFile, connectionLayer, layer } =
  sqliteFileStorage(openDriverConnection)
