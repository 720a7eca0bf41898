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
import { makeIdBody } from "@pay/core"
import type { SqliteConnection } from "../SqliteDatabase.js"

/** The first 16 characters of a generated key: `pk_`, the lookup id, `_`. */
const GENERATED_PREFIX = /^pk_([A-Za-z0-9]{12})_$/

export default (db: SqliteConnection): void => {
  db.exec(`CREATE TABLE keys (
    id TEXT PRIMARY KEY,
    owner_kind TEXT NOT NULL CHECK (owner_kind IN ('partner', 'wallet_app')),
    owner_id TEXT NOT NULL,
    name TEXT,
    lookup_id TEXT UNIQUE,
    hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    last_used_at INTEGER,
    rotated_to TEXT
  ) STRICT`)
  db.exec("CREATE INDEX keys_by_owner ON keys (owner_kind, owner_id, created_at)")
  const insert =
    db.prepare(`INSERT INTO keys (id, owner_kind, owner_id, lookup_id, hash, created_at)
    VALUES (?, ?, ?, ?, ?, ?)`)
  const old = [
    ...(
      db
        .prepare("SELECT prefix, hash, partner_id AS owner_id, created_at FROM api_keys")
        .all() as Array<OldKey>
    ).map((k) => ({ ...k, kind: "partner" })),
    ...(
      db
        .prepare("SELECT prefix, hash, app_id AS owner_id, created_at FROM wallet_app_keys")
        .all() as Array<OldKey>
    ).map((k) => ({ ...k, kind: "wallet_app" }))
  ]
  for (const key of old) {
    const lookupId = GENERATED_PREFIX.exec(key.prefix)?.[1] ?? null
    insert.run(
      `key_${makeIdBody(key.created_at)}`,
      key.kind,
      key.owner_id,
      lookupId,
      key.hash,
      key.created_at
    )
  }
  // Overwrite what is dropped, or the chosen keys' first characters stay in free pages.
  db.exec("PRAGMA secure_delete = ON")
  db.exec("DROP TABLE api_keys")
  db.exec("DROP TABLE wallet_app_keys")
  db.exec("PRAGMA secure_delete = OFF")
}

interface OldKey {
  readonly prefix: string
  readonly hash: string
  readonly owner_id: string
  readonly created_at: number
}
