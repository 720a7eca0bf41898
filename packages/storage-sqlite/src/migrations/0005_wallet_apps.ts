/**
 * Wallet apps (the wallets that call the gateway) and their API keys, kept
 * like partner keys: the key's prefix finds the row, only its SHA-256 is
 * stored. Times are integer milliseconds since the epoch.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

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

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
