/**
 * Idempotency claims become leases held by a token (issue 4): the owner
 * renews `locked_at` while it works, and its completion is written only while
 * `claim_token` is still its own. Claims from before have no token: they are
 * taken over once stale, like a dead owner's.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec("ALTER TABLE idempotency_keys ADD COLUMN claim_token TEXT")
}
