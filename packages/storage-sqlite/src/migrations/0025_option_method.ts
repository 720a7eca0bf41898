/**
 * How each option is paid (core chain/Permission.ts): `method` (EIP-3009, or
 * Permit2 for tokens without it), the Permit2 approvals the buyer sends first
 * (`approvals`, decimal amounts, comma-separated, in order: empty for none)
 * and the rate a fiat price was converted at with the feed rounds it came
 * from (`rate`, JSON; null for a price asked in the token). Options stored
 * before were all EIP-3009, needed no approval, and kept no rate.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec(`ALTER TABLE payment_options ADD COLUMN method TEXT NOT NULL DEFAULT 'eip3009'
    CHECK (method IN ('eip3009', 'permit2'))`)
  db.exec("ALTER TABLE payment_options ADD COLUMN approvals TEXT NOT NULL DEFAULT ''")
  db.exec("ALTER TABLE payment_options ADD COLUMN rate TEXT")
}
