/**
 * The network's own coin as a payment option (core chainwork/NativeCollect.ts):
 *
 * - `payment_options.method` takes `native` beside `eip3009` and `permit2`.
 *   SQLite cannot alter a CHECK constraint, so the table is rebuilt from its
 *   own text as stored in the schema (whatever columns later migrations
 *   added), with only that CHECK changed: a new table, the rows copied, the
 *   old one dropped, the new one renamed, its indexes and triggers created
 *   again from their own text. No table references `payment_options`, so
 *   dropping it breaks no foreign key.
 * - `chain_transfers.value`: the coin a transfer sends, in wei, decimal TEXT
 *   as `gas` is (0 for the contract calls recorded before).
 * - `payments.fee_network`: a native payment's settlement gas, in the coin
 *   (null for a token, and for every payment before).
 * - A buyer's transfer is claimed by one payment only: a unique index on the
 *   collect jobs' `paid.hash` per chain (the gateway lowercases the hash).
 * - `returnable_funds`: coin that reached the collector without paying for
 *   anything, once per transaction, listed newest first and summed by asset.
 * - The ledger's sum (`owedIn`): the settlement amounts of succeeded payments
 *   not settled yet, found by asset through a partial index (a small part of
 *   the payments).
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

/** The CHECK as 0025 declared it (ALTER TABLE ADD COLUMN keeps its text as written). */
const METHOD_CHECK = /CHECK\s*\(\s*method\s+IN\s*\(\s*'eip3009'\s*,\s*'permit2'\s*\)\s*\)/g
const NATIVE_METHOD_CHECK = "CHECK (method IN ('eip3009', 'permit2', 'native'))"
const TABLE_NAME = /^CREATE TABLE\s+(?:"payment_options"|payment_options)\s*\(/

const rebuildPaymentOptions = (db: SqliteConnection) => {
  const table = db
    .prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'payment_options'")
    .get() as { readonly sql: string } | undefined
  if (table === undefined) throw new Error("migration 0026: no payment_options table")
  const checks = table.sql.match(METHOD_CHECK)?.length ?? 0
  if (checks !== 1 || !TABLE_NAME.test(table.sql)) {
    throw new Error(`migration 0026: payment_options is not as 0025 left it: ${table.sql}`)
  }
  const create = table.sql
    .replace(METHOD_CHECK, NATIVE_METHOD_CHECK)
    .replace(TABLE_NAME, "CREATE TABLE payment_options_new (")
  // Read before the drop takes them with the table.
  const kept = db
    .prepare(
      `SELECT sql FROM sqlite_schema
        WHERE type IN ('index', 'trigger') AND tbl_name = 'payment_options' AND sql IS NOT NULL
        ORDER BY type, name`
    )
    .all() as Array<{ readonly sql: string }>
  const columns = (
    db.prepare("PRAGMA table_info(payment_options)").all() as Array<{ name: string }>
  )
    .map((c) => `"${c.name}"`)
    .join(", ")
  db.exec(create)
  // The same text made the same columns; each row is copied whole, its rowid too.
  db.exec(`INSERT INTO payment_options_new (rowid, ${columns})
    SELECT rowid, ${columns} FROM payment_options`)
  db.exec("DROP TABLE payment_options")
  db.exec("ALTER TABLE payment_options_new RENAME TO payment_options")
  for (const { sql } of kept) db.exec(sql)
}

const statements = [
  "ALTER TABLE chain_transfers ADD COLUMN value TEXT NOT NULL DEFAULT '0'",
  "ALTER TABLE payments ADD COLUMN fee_network TEXT",
  `CREATE UNIQUE INDEX chain_jobs_claimed_transfer
    ON chain_jobs (chain_id, json_extract(payload, '$.paid.hash'))
    WHERE kind = 'collect' AND json_extract(payload, '$.paid.hash') IS NOT NULL`,
  `CREATE TABLE returnable_funds (
    chain_id TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    payment_id TEXT NOT NULL REFERENCES payments (id),
    asset TEXT NOT NULL,
    from_address TEXT NOT NULL,
    value TEXT NOT NULL,
    reason TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (chain_id, tx_hash)
  ) STRICT`,
  `CREATE INDEX returnable_funds_newest ON returnable_funds (recorded_at, chain_id, tx_hash)`,
  `CREATE INDEX returnable_funds_by_asset ON returnable_funds (asset, value)`,
  `CREATE INDEX payments_owed ON payments (token_asset)
    WHERE status = 'succeeded' AND settlement_status IN ('pending', 'no_destination')`
]

export default (db: SqliteConnection): void => {
  rebuildPaymentOptions(db)
  for (const statement of statements) db.exec(statement)
}
