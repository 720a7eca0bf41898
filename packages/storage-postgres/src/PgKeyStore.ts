/**
 * API keys on PostgreSQL (migrations 0017, 0028 for scopes): one table for partners' and
 * wallet apps' keys. A revocation that must leave the owner another key
 * first takes a transaction-scoped advisory lock on the owner: under READ
 * COMMITTED, two transactions revoking an owner's last two keys would each
 * still see the other's key active and both succeed.
 */
import type { SqlClient } from "@effect/sql"
import {
  type ApiKeyId,
  ApiKeyLookupTaken,
  type KeyOwner,
  KeyRecord,
  KeyStore,
  scopesFromText,
  scopesToText
} from "@pay/core"
import { Effect, Option } from "effect"
import { writeAudit } from "./PgAuditStore.js"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { writeCompletion } from "./PgIdempotencyStore.js"

interface KeyRow {
  readonly id: string
  readonly owner_kind: string
  readonly owner_id: string
  readonly name: string | null
  readonly lookup_id: string | null
  readonly hash: string
  readonly created_at: Date
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
  readonly last_used_at: Date | null
  readonly rotated_to: string | null
  /** Comma-separated (migration 0028). */
  readonly scopes: string
}

// PostgreSQL's own mapping (SqliteKeyStore.ts has its twin): times are Date here.
const toKey = (r: KeyRow) =>
  new KeyRecord({
    id: r.id as ApiKeyId,
    ownerKind: r.owner_kind as KeyRecord["ownerKind"],
    ownerId: r.owner_id,
    name: r.name,
    lookupId: r.lookup_id,
    hash: r.hash,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
    rotatedTo: r.rotated_to as ApiKeyId | null,
    scopes: scopesFromText(r.scopes)
  })

const first = (rows: ReadonlyArray<KeyRow>) => Option.map(Option.fromNullable(rows[0]), toKey)

/** A taken lookup id or hash: the port's ApiKeyLookupTaken. */
const onTaken = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    onUniqueViolation("keys_lookup_id_key", () => Effect.fail(new ApiKeyLookupTaken())),
    onUniqueViolation("keys_hash_key", () => Effect.fail(new ApiKeyLookupTaken()))
  )

/** A key's row, inside the caller's transaction. */
export const insertKeyRow = (sql: SqlClient.SqlClient, k: KeyRecord) =>
  sql`INSERT INTO keys (id, owner_kind, owner_id, name, lookup_id, hash, created_at, expires_at,
      revoked_at, last_used_at, rotated_to, scopes)
    VALUES (${k.id}, ${k.ownerKind}, ${k.ownerId}, ${k.name}, ${k.lookupId}, ${k.hash},
      ${k.createdAt}, ${k.expiresAt}, ${k.revokedAt}, ${k.lastUsedAt}, ${k.rotatedTo},
      ${scopesToText(k.scopes)})`

export const makePgKeyStore = (sql: SqlClient.SqlClient) => {
  const find = (owner: KeyOwner, id: string) =>
    Effect.map(
      sql<KeyRow>`SELECT * FROM keys
        WHERE id = ${id} AND owner_kind = ${owner.kind} AND owner_id = ${owner.id}`,
      first
    )
  /** Serialises the owner's key changes to the end of the transaction. */
  const lockOwner = (owner: KeyOwner) =>
    sql`SELECT pg_advisory_xact_lock(hashtextextended(${`keys:${owner.kind}:${owner.id}`}, 0))`

  return KeyStore.of({
    insert: (key, extras) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* insertKeyRow(sql, key)
            if (extras?.completion) yield* writeCompletion(sql, extras.completion)
            yield* writeAudit(sql, extras?.audit, key)
          })
        )
        .pipe(onTaken, orDieSql),
    findByLookupId: (lookupId) =>
      Effect.map(sql<KeyRow>`SELECT * FROM keys WHERE lookup_id = ${lookupId}`, first).pipe(
        orDieSql
      ),
    findByHash: (hash) =>
      Effect.map(sql<KeyRow>`SELECT * FROM keys WHERE hash = ${hash}`, first).pipe(orDieSql),
    find: (owner, id) => find(owner, id).pipe(orDieSql),
    list: (owner) =>
      sql<KeyRow>`SELECT * FROM keys WHERE owner_kind = ${owner.kind} AND owner_id = ${owner.id}
        ORDER BY created_at DESC, id DESC`.pipe(
        Effect.map((rows) => rows.map(toKey)),
        orDieSql
      ),
    revoke: (owner, id, at, options) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* lockOwner(owner)
            const written = yield* sql<KeyRow>`UPDATE keys SET revoked_at = ${at}
              WHERE id = ${id} AND owner_kind = ${owner.kind} AND owner_id = ${owner.id}
                AND (revoked_at IS NULL OR revoked_at > ${at})
                AND (${!options.keepOneActive} OR EXISTS (SELECT 1 FROM keys other
                  WHERE other.owner_kind = keys.owner_kind AND other.owner_id = keys.owner_id
                    AND other.id <> keys.id AND other.revoked_at IS NULL
                    AND (other.expires_at IS NULL OR other.expires_at > ${at})))
              RETURNING *`
            if (written.length === 1) {
              const key = toKey(written[0]!)
              if (options.completion) yield* writeCompletion(sql, options.completion)
              yield* writeAudit(sql, options.audit, key)
              return { _tag: "Revoked" as const, key }
            }
            const key = yield* find(owner, id)
            if (Option.isNone(key)) return { _tag: "NotFound" as const }
            const revokedAt = key.value.revokedAt
            return revokedAt !== null && revokedAt <= at
              ? { _tag: "AlreadyRevoked" as const, key: key.value }
              : { _tag: "LastActiveKey" as const }
          })
        )
        .pipe(orDieSql),
    rotate: (owner, id, replacement, oldEndsAt, at, extras) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* lockOwner(owner)
            const ended = yield* sql<KeyRow>`UPDATE keys
              SET revoked_at = LEAST(coalesce(revoked_at, ${oldEndsAt}), ${oldEndsAt}),
                rotated_to = ${replacement.id}
              WHERE id = ${id} AND owner_kind = ${owner.kind} AND owner_id = ${owner.id}
                AND (revoked_at IS NULL OR revoked_at > ${at})
                AND (expires_at IS NULL OR expires_at > ${at})
              RETURNING *`
            if (ended.length !== 1) {
              return Option.isNone(yield* find(owner, id))
                ? { _tag: "NotFound" as const }
                : { _tag: "Inactive" as const }
            }
            yield* insertKeyRow(sql, replacement)
            if (extras?.completion) yield* writeCompletion(sql, extras.completion)
            const old = toKey(ended[0]!)
            yield* writeAudit(sql, extras?.audit, { old, replacement })
            return { _tag: "Rotated" as const, old, replacement }
          })
        )
        .pipe(onTaken, orDieSql),
    touch: (id, at, staleBefore) =>
      sql`UPDATE keys SET last_used_at = ${at}
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${staleBefore})`.pipe(
        Effect.asVoid,
        orDieSql
      )
  })
}
