/**
 * API keys' scopes (issue 40, core keys/Scopes.ts): what each key may do,
 * comma-separated in the canonical order, each name checked. Every key made
 * before keeps everything it could do: the column is added with every scope
 * as its default (a constant default rewrites no rows), then the default is
 * dropped, so a write that forgot the column fails instead of granting all.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Every scope as 0028 knew them (ALL_SCOPES then): a migration never changes. */
const EVERY_SCOPE = "read,payments,merchants,webhooks,refunds,keys"
const SCOPE = "(read|payments|merchants|webhooks|refunds|keys)"

const statements = [
  `ALTER TABLE keys ADD COLUMN scopes text NOT NULL DEFAULT '${EVERY_SCOPE}'
    CONSTRAINT keys_scopes_check CHECK (scopes ~ '^${SCOPE}(,${SCOPE})*$')`,
  "ALTER TABLE keys ALTER COLUMN scopes DROP DEFAULT"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
