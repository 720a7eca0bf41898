/**
 * The engine's secret when none is given (core secrets/EngineSecret.ts): one
 * row, written by the first start, read by every later one and every instance.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec(`CREATE TABLE engine_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT`)
}
