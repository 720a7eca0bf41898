/**
 * Partners and keys, merchants, crypto settlements and idempotency keys.
 * Times are integer milliseconds since the epoch.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE partners (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    api_version TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE TABLE api_keys (
    prefix TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    partner_id TEXT NOT NULL REFERENCES partners (id),
    created_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE TABLE merchants (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners (id),
    name TEXT NOT NULL,
    name_folded TEXT NOT NULL,
    email TEXT,
    icon_url TEXT,
    status TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'suspended')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
  ) STRICT`,
  `CREATE INDEX merchants_live_by_partner ON merchants (partner_id, id) WHERE deleted_at IS NULL`,
  `CREATE TABLE crypto_settlements (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    asset TEXT NOT NULL,
    destination TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
  ) STRICT`,
  `CREATE UNIQUE INDEX crypto_settlements_live_asset
    ON crypto_settlements (merchant_id, asset) WHERE deleted_at IS NULL`,
  `CREATE TABLE idempotency_keys (
    partner_id TEXT NOT NULL,
    route TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    locked_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    response_status INTEGER,
    response_body TEXT,
    PRIMARY KEY (partner_id, route, key)
  ) STRICT`,
  `CREATE INDEX idempotency_keys_finished ON idempotency_keys (created_at)
    WHERE response_status IS NOT NULL`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
