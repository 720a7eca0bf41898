/**
 * A settlement held while its merchant is not active (issue 20) reads
 * `held`. The status column's CHECK from 0008 cannot be widened without
 * rebuilding the payments table, so the status stays `pending` and this flag
 * says it is held; core's columns mapping reads the pair as `held`. A
 * constant default adds the column without touching a row.
 *
 * Settlements held before this migration are `pending` with no active settle
 * job (a settlement under way always has one): they are marked here.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

export default (db: SqliteConnection): void => {
  db.exec(`ALTER TABLE payments ADD COLUMN settlement_held INTEGER NOT NULL DEFAULT 0
    CHECK (settlement_held IN (0, 1))`)
  db.exec(`UPDATE payments SET settlement_held = 1
    WHERE status = 'succeeded' AND settlement_status = 'pending'
      AND NOT EXISTS (SELECT 1 FROM chain_jobs j
        WHERE j.payment_id = payments.id AND j.kind = 'settle' AND j.state = 'active')`)
}
