/**
 * SQLite storage on Node, through better-sqlite3. Import from
 * `@pay/storage-sqlite/node`; Bun, which cannot load better-sqlite3, has
 * `@pay/storage-sqlite/bun`. Only opening a connection differs: the
 * migrations and the stores are one implementation (SqliteFile.ts).
 */
import Database from "better-sqlite3"
import { CONNECTION_PRAGMAS, type SqliteConnection } from "./SqliteDatabase.js"
import { sqliteFileStorage } from "./SqliteFile.js"

export { SqliteStorageError, type SqliteStorageOptions } from "./SqliteFile.js"

const openDriverConnection = (filename: string): SqliteConnection => {
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

export const { openConnection, migrateFile, connectionLayer, layer } =
  sqliteFileStorage(openDriverConnection)
