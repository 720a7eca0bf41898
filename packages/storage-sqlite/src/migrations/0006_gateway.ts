/**
 * The gateway's payment options (the exact EIP-3009 authorization offered to
 * one buyer account) and the data buyers enter. The authorization's numbers
 * are uint256, kept as decimal TEXT (exact up to 2^256 - 1); addresses and
 * the nonce are kept as given (hex case included); times are milliseconds.
 * Collected data is one row per payment and account, replaced by a later save.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE payment_options (
    id TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL REFERENCES payments (id),
    account TEXT NOT NULL,
    asset TEXT NOT NULL,
    value TEXT NOT NULL,
    auth_from TEXT NOT NULL,
    auth_to TEXT NOT NULL,
    valid_after TEXT NOT NULL,
    valid_before TEXT NOT NULL,
    nonce TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    quoted INTEGER NOT NULL CHECK (quoted IN (0, 1)),
    collect_data INTEGER NOT NULL CHECK (collect_data IN (0, 1)),
    created_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE INDEX payment_options_by_payment ON payment_options (payment_id)`,
  `CREATE TABLE collected_data (
    payment_id TEXT NOT NULL REFERENCES payments (id),
    account TEXT NOT NULL,
    data TEXT NOT NULL,
    collected_at INTEGER NOT NULL,
    PRIMARY KEY (payment_id, account)
  ) STRICT`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
