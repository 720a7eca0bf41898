/**
 * Frozen merchant logos (core merchants/Logo.ts): each logo's master (size 0)
 * and its smaller sizes, under the logo's content-addressed name.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE logos (
    name text COLLATE "C" NOT NULL,
    size integer NOT NULL,
    content_type text NOT NULL,
    bytes bytea NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (name, size)
  )`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
