/**
 * The engine's secret when none is given (core secrets/EngineSecret.ts): one
 * row, written by the first start, read by every later one and every instance.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE engine_secrets (
    name text COLLATE "C" PRIMARY KEY,
    value text NOT NULL,
    created_at timestamptz NOT NULL
  )`
})
