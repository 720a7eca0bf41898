/**
 * Indexes for the payment list's filters that the listing and statistics
 * indexes do not cover (issue 18):
 * - the reference search, a case-insensitive substring (`LIKE` over the
 *   already lower-cased `reference_folded`): a GIN index of `pg_trgm`'s
 *   trigrams. The extension is used where it is installed, whichever schema
 *   that is (an extension lives once per database, often outside this
 *   schema's `search_path`), so its operator class is named with its schema;
 *   when it is not installed yet it is created in `public` if this role may
 *   create there (where every schema can find it, and where dropping one
 *   engine schema cannot take it away from another), else in this schema.
 *   An advisory lock makes migrations of several schemas at once take turns.
 * - network and token: the payments of a partner by (chain, creation time,
 *   id), the token included, for pages in date order; and a covering index of
 *   the succeeded ones by (chain, token, creation time) with the buyer and the
 *   amount, for their statistics from the index alone.
 * Every index is created IF NOT EXISTS: an operator with a large table may
 * build them beforehand with CREATE INDEX CONCURRENTLY under the same names
 * (docs/operations.md), and this migration then only records them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Any constant shared by every instance: it only names the advisory lock. */
const EXTENSION_LOCK = 7_305_417_016

/** The schema `pg_trgm` is installed in, installing it first when it is not. */
export const trigramSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Held to the end of the migration's transaction: one check-and-create at a time.
  yield* sql`SELECT pg_advisory_xact_lock(${EXTENSION_LOCK})`
  const installed = () =>
    sql<{ readonly schema: string }>`SELECT n.nspname AS schema FROM pg_extension e
      JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`
  const [found] = yield* installed()
  if (found !== undefined) return found.schema
  const [{ home } = { home: "" }] = yield* sql<{ readonly home: string }>`SELECT CASE
      WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public')
        AND has_schema_privilege('public', 'CREATE') THEN 'public'
      ELSE current_schema() END AS home`
  yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA ${sql(home)}`
  const [created] = yield* installed()
  if (created === undefined) return yield* Effect.dieMessage("pg_trgm was not installed")
  return created.schema
})

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const schema = yield* trigramSchema
  yield* sql`CREATE INDEX IF NOT EXISTS payments_reference_trigrams ON payments
    USING gin (reference_folded ${sql(schema)}.gin_trgm_ops)`
  yield* sql`CREATE INDEX IF NOT EXISTS payments_by_partner_chain_date
    ON payments (partner_id, token_chain, created_at, id) INCLUDE (token_asset)`
  yield* sql`CREATE INDEX IF NOT EXISTS payments_succeeded_by_partner_token
    ON payments (partner_id, token_chain, token_asset, created_at)
    INCLUDE (buyer_key, amount_unit, amount_value) WHERE status = 'succeeded'`
})
