/**
 * Wallet apps (the wallets that call the gateway) and their API keys, kept
 * like partner keys: the key's prefix finds the row, only its SHA-256 is
 * stored. Ids sort bytewise (COLLATE "C"), as in the other tables.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE wallet_apps (
    id text COLLATE "C" PRIMARY KEY,
    name text NOT NULL,
    icon_url text,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX wallet_apps_by_age ON wallet_apps (created_at, id)`,
  `CREATE TABLE wallet_app_keys (
    prefix text CONSTRAINT wallet_app_keys_pkey PRIMARY KEY,
    hash text NOT NULL,
    app_id text COLLATE "C" NOT NULL REFERENCES wallet_apps (id),
    created_at timestamptz NOT NULL
  )`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
