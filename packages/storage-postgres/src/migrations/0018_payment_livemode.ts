/**
 * The engine's mode at each payment's creation (issue 19): true live, false
 * test (the sandbox, or only test networks). Payments stored before this
 * migration keep NULL: nothing here knows the mode they were made in, and
 * their views show the engine's mode of the moment (`paymentLivemode` in
 * core). Adding a nullable column without a default rewrites no row.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe("ALTER TABLE payments ADD COLUMN livemode boolean")
})
