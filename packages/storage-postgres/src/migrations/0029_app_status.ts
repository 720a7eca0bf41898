/**
 * Wallet apps an operator can switch off (issue 40, core apps/WalletApps.ts):
 * an app's status, every existing app active (a constant default rewrites no
 * rows), and when it was last used (written at most once a minute per app),
 * null until its next request.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `ALTER TABLE wallet_apps ADD COLUMN status text NOT NULL DEFAULT 'active'
    CONSTRAINT wallet_apps_status_check CHECK (status IN ('active', 'disabled'))`,
  "ALTER TABLE wallet_apps ADD COLUMN last_used_at timestamptz"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
