/**
 * A settlement held while its merchant is not active (issue 20) reads
 * `held`. Kept as a flag beside the `pending` status, as on SQLite (whose
 * CHECK from 0008 cannot be widened in place), so both stores read the pair
 * the same way through core's columns mapping. A constant default adds the
 * column without rewriting a row.
 *
 * Settlements held before this migration are `pending` with no active settle
 * job (a settlement under way always has one): they are marked here.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(
    "ALTER TABLE payments ADD COLUMN settlement_held boolean NOT NULL DEFAULT false"
  )
  yield* sql.unsafe(`UPDATE payments SET settlement_held = true
    WHERE status = 'succeeded' AND settlement_status = 'pending'
      AND NOT EXISTS (SELECT 1 FROM chain_jobs j
        WHERE j.payment_id = payments.id AND j.kind = 'settle' AND j.state = 'active')`)
})
