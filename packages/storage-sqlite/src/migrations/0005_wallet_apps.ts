/**
 * Wallet apps (the wallets that call the gateway) and their API keys, kept
 * like partner keys: the key's prefix finds the row, only its SHA-256 is
 * stored. Times are integer milliseconds since the epoch.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE wallet_apps (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    icon_url TEXT,
    created_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE TABLE wallet_app_keys (
    prefix TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    app_id TEXT NOT NULL REFERENCES wallet_apps (id),
    created_at INTEGER NOT NULL
  ) STRICT`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
