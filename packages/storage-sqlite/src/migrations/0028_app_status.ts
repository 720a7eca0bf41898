/**
 * Wallet apps an operator can switch off (issue 40, core apps/WalletApps.ts):
 * an app's status, every existing app active, and when it was last used (ms,
 * written at most once a minute per app), null until its next request.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `ALTER TABLE wallet_apps ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'disabled'))`,
  "ALTER TABLE wallet_apps ADD COLUMN last_used_at INTEGER"
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
