/**
 * A merchant's frozen logo (core merchants/Logo.ts): the name of its image in
 * `logos`. Null for no logo, and for merchants written before logos were
 * frozen, which keep showing their `icon_url` until their next PATCH.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE merchants ADD COLUMN logo_name text`
})
