/**
 * The SQLite baselines' database, once for both drivers (better-sqlite3 on Node in
 * baseline-server.ts, bun:sqlite on Bun in baseline-bun-server.ts): the pragmas (the
 * engine's durability: WAL, synchronous = FULL), the schema, the seeded merchant, and the
 * three statements the routes run. The partner's key is checked in memory (its SHA-256
 * against the one held), as the engine's verified-key cache does: no read per request.
 */
import { env, type StatusColumns, sha256 } from "./baseline-rules.js"

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
  CREATE TABLE IF NOT EXISTS merchants (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL,
    status TEXT NOT NULL
  ) STRICT;
  CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    reference_id TEXT NOT NULL,
    amount_unit TEXT NOT NULL,
    amount_value TEXT NOT NULL,
    status TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    failure_code TEXT,
    token_asset TEXT,
    token_value TEXT,
    tx_id TEXT
  ) STRICT;
`

/** The pragmas, the schema, and the partner's merchant from BASELINE_MERCHANT_ID. */
export const setUpSqlite = (db: SqliteSetup) => {
  for (const pragma of PRAGMAS) db.exec(`PRAGMA ${pragma}`)
  db.exec(SCHEMA)
  db.prepare(`INSERT OR IGNORE INTO merchants VALUES (?, '${BASELINE_PARTNER}', 'active')`).run(
    env("BASELINE_MERCHANT_ID")
  )
}

export const BASELINE_PARTNER = "ptnr_baseline"
/** The SHA-256 of BASELINE_API_KEY, held in memory as the engine's key cache holds it. */
export const baselineKeyHash = () => sha256(env("BASELINE_API_KEY"))

/** Its rows: { partner_id, status }. */
export type MerchantRow = { readonly partner_id: string; readonly status: string }
/** Its rows: the owner's ids and what the status answer depends on. */
export interface PaymentRow extends StatusColumns {
  readonly partner_id: string
  readonly merchant_id: string
}

/** Why a create for this merchant is refused (status, code, message), or undefined. */
export const merchantRefusal = (
  m: MerchantRow | null | undefined
): readonly [status: number, code: string, message: string] | undefined =>
  m == null || m.partner_id !== BASELINE_PARTNER
    ? ([404, "not_found", "no such merchant"] as const)
    : m.status !== "active"
      ? ([403, "forbidden", "merchant not active"] as const)
      : undefined

/** Whether the payment read is the partner's, of the merchant asked about. */
export const paymentVisible = (p: PaymentRow | null | undefined, merchantId: string) =>
  p != null && p.partner_id === BASELINE_PARTNER && p.merchant_id === merchantId

export const SQL = {
  // The create's one read: the merchant is the partner's and active (the engine checks both).
  merchantById: "SELECT partner_id, status FROM merchants WHERE id = ?",
  // Parameters: id, partner, merchant, reference, unit, value, expires_at, created_at.
  insertPayment: `INSERT INTO payments (id, partner_id, merchant_id, reference_id, amount_unit,
   amount_value, status, expires_at, created_at)
   VALUES (?, ?, ?, ?, ?, ?, 'requires_action', ?, ?)`,
  // The status's one read, of what the answer depends on for any payment (the engine's
  // columns). Parameter: the payment's id.
  paymentById: `SELECT partner_id, merchant_id, status, expires_at, failure_code, token_asset,
    token_value, tx_id FROM payments WHERE id = ?`
} as const
