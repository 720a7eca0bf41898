/**
 * API keys' scopes (issue 40, core keys/Scopes.ts): what each key may do,
 * comma-separated in the canonical order. Every key made before keeps
 * everything it could do, so the column's default is every scope; the store
 * always writes the column, so the default only fills the existing rows.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

/** Every scope as 0027 knew them (ALL_SCOPES then): a migration never changes. */
const EVERY_SCOPE = "read,payments,merchants,webhooks,refunds,keys"

export default (db: SqliteConnection): void => {
  db.exec(`ALTER TABLE keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '${EVERY_SCOPE}'`)
}
