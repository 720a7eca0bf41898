/**
 * The SQLite baselines' database, once for both drivers (better-sqlite3 on Node in
 * baseline-server.ts, bun:sqlite on Bun in baseline-bun-server.ts): the pragmas (the
 * engine's durability: WAL, synchronous = FULL), the schema, the seeded key and merchant,
 * and the three statements the routes run.
 */
import { env, sha256 } from "./baseline-rules.js"

/** What both drivers offer and the setup needs. */
export interface SqliteSetup {
  exec(sql: string): unknown
  prepare(sql: string): { run(param: string): unknown }
}

const PRAGMAS = [
  "journal_mode = WAL",
  "synchronous = FULL",
  "foreign_keys = ON",
  "busy_timeout = 5000"
]

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS api_keys (hash TEXT PRIMARY KEY, partner_id TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS merchants (id TEXT PRIMARY KEY, partner_id TEXT NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    reference_id TEXT NOT NULL,
    amount_unit TEXT NOT NULL,
    amount_value TEXT NOT NULL,
    status TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
`

/** The pragmas, the schema, and the partner's key and merchant from BASELINE_API_KEY and
 * BASELINE_MERCHANT_ID. */
export const setUpSqlite = (db: SqliteSetup) => {
  for (const pragma of PRAGMAS) db.exec(`PRAGMA ${pragma}`)
  db.exec(SCHEMA)
  db.prepare("INSERT OR IGNORE INTO api_keys VALUES (?, 'ptnr_baseline')").run(
    sha256(env("BASELINE_API_KEY"))
  )
  db.prepare("INSERT OR IGNORE INTO merchants VALUES (?, 'ptnr_baseline')").run(
    env("BASELINE_MERCHANT_ID")
  )
}

/** Its rows: { partner_id, merchant_id (null when the merchant is not the key's partner's) }. */
export type AuthorizeRow = { readonly partner_id: string; readonly merchant_id: string | null }
/** Its rows: { merchant_id, status }. */
export type PaymentRow = { readonly merchant_id: string; readonly status: string }

export const SQL = {
  // One query per request authenticates the key and, in the same read, checks that the
  // Merchant-Id belongs to its partner (the engine must refuse another partner's merchant too).
  // Parameters: the Merchant-Id, the key's hash.
  authorize: `SELECT k.partner_id, m.id AS merchant_id FROM api_keys k
   LEFT JOIN merchants m ON m.id = ? AND m.partner_id = k.partner_id WHERE k.hash = ?`,
  // Parameters: id, merchant, reference, unit, value, expires_at, created_at.
  insertPayment: `INSERT INTO payments (id, merchant_id, reference_id, amount_unit, amount_value,
   status, expires_at, created_at) VALUES (?, ?, ?, ?, ?, 'requires_action', ?, ?)`,
  // Parameter: the payment's id.
  paymentById: "SELECT merchant_id, status FROM payments WHERE id = ?"
} as const
