/**
 * Partners and keys, merchants, crypto settlements and idempotency keys.
 * Ids sort bytewise (COLLATE "C") whatever the database's locale, because
 * keyset pages and "oldest first" rely on ids sorting like JavaScript strings.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const statements = [
  `CREATE TABLE partners (
    id text COLLATE "C" PRIMARY KEY,
    name text NOT NULL,
    api_version text NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX partners_by_age ON partners (created_at, id)`,
  `CREATE TABLE api_keys (
    prefix text CONSTRAINT api_keys_pkey PRIMARY KEY,
    hash text NOT NULL,
    partner_id text COLLATE "C" NOT NULL REFERENCES partners (id),
    created_at timestamptz NOT NULL
  )`,
  `CREATE TABLE merchants (
    id text COLLATE "C" PRIMARY KEY,
    partner_id text COLLATE "C" NOT NULL REFERENCES partners (id),
    name text NOT NULL,
    name_folded text NOT NULL,
    email text,
    icon_url text,
    status text NOT NULL CHECK (status IN ('active', 'inactive', 'suspended')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz
  )`,
  `CREATE INDEX merchants_live_by_partner ON merchants (partner_id, id) WHERE deleted_at IS NULL`,
  `CREATE TABLE crypto_settlements (
    id text COLLATE "C" PRIMARY KEY,
    merchant_id text COLLATE "C" NOT NULL REFERENCES merchants (id),
    asset text NOT NULL,
    destination text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz
  )`,
  // Also the index behind listing a merchant's live settlements.
  `CREATE UNIQUE INDEX crypto_settlements_live_asset
    ON crypto_settlements (merchant_id, asset) WHERE deleted_at IS NULL`,
  `CREATE TABLE idempotency_keys (
    partner_id text NOT NULL,
    route text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    locked_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    response_status integer,
    response_body text,
    PRIMARY KEY (partner_id, route, key)
  )`,
  `CREATE INDEX idempotency_keys_finished ON idempotency_keys (created_at)
    WHERE response_status IS NOT NULL`
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
