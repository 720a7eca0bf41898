/**
 * API keys of partners and wallet apps in one table, with what managing them
 * needs (issue 19): a public id (`key_…`), a name, an expiry, a revocation
 * (past, or pending after a rotation), the last use and the rotation's
 * successor. A key is found by its random lookup id, the middle of a
 * generated key (`pk_<lookup id>_<secret>`) and no part of its secret, or, for
 * a key the operator chose, by the hash of the whole key: the old tables kept
 * a chosen key's first 16 characters in clear, which this migration drops.
 * Existing keys keep working: their hashes move as they are.
 */
import { SqlClient } from "@effect/sql"
import { makeIdBody } from "@pay/core"
import { Effect } from "effect"

/** The first 16 characters of a generated key: `pk_`, the lookup id, `_`. */
const GENERATED_PREFIX = /^pk_([A-Za-z0-9]{12})_$/

interface OldKey {
  readonly prefix: string
  readonly hash: string
  readonly owner_id: string
  readonly created_at: Date
}

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE keys (
    id text COLLATE "C" PRIMARY KEY,
    owner_kind text NOT NULL CHECK (owner_kind IN ('partner', 'wallet_app')),
    owner_id text COLLATE "C" NOT NULL,
    name text,
    lookup_id text COLLATE "C" CONSTRAINT keys_lookup_id_key UNIQUE,
    hash text COLLATE "C" NOT NULL CONSTRAINT keys_hash_key UNIQUE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    rotated_to text COLLATE "C"
  )`
  yield* sql`CREATE INDEX keys_by_owner ON keys (owner_kind, owner_id, created_at)`
  const partnerKeys = yield* sql<OldKey>`SELECT prefix, hash, partner_id AS owner_id, created_at
    FROM api_keys`
  const appKeys = yield* sql<OldKey>`SELECT prefix, hash, app_id AS owner_id, created_at
    FROM wallet_app_keys`
  const old = [
    ...partnerKeys.map((k) => ({ ...k, kind: "partner" })),
    ...appKeys.map((k) => ({ ...k, kind: "wallet_app" }))
  ]
  for (const key of old) {
    const lookupId = GENERATED_PREFIX.exec(key.prefix)?.[1] ?? null
    yield* sql`INSERT INTO keys (id, owner_kind, owner_id, lookup_id, hash, created_at)
      VALUES (${`key_${makeIdBody(key.created_at.getTime())}`}, ${key.kind}, ${key.owner_id},
        ${lookupId}, ${key.hash}, ${key.created_at})`
  }
  yield* sql`DROP TABLE api_keys`
  yield* sql`DROP TABLE wallet_app_keys`
})
