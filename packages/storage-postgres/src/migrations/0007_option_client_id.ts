/**
 * The wallet's `Client-Id` kept with each option it was offered (WIRE.md:
 * recorded as given).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe("ALTER TABLE payment_options ADD COLUMN client_id text")
})
