/**
 * API keys on SQLite (migrations 0017, 0027 for scopes): one table for partners' and wallet
 * apps' keys. A revocation that must leave the owner another key is one
 * UPDATE whose WHERE clause is that rule: a write statement takes SQLite's
 * write lock before it reads, so two of them (in this process or another)
 * cannot both see the other's key still active.
 */
import {
  type ApiKeyId,
  ApiKeyLookupTaken,
  type AuditLog,
  type IdempotencyCompletion,
  type KeyOwner,
  KeyRecord,
  KeyStore,
  scopesFromText,
  scopesToText
} from "@pay/core"
import { Effect, Option } from "effect"
import type { GroupCommit } from "./GroupCommit.js"
import type { SqliteConnection } from "./SqliteDatabase.js"
import { isUniqueViolation } from "./SqliteErrors.js"

interface KeyRow {
  readonly id: string
  readonly owner_kind: string
  readonly owner_id: string
  readonly name: string | null
  readonly lookup_id: string | null
  readonly hash: string
  readonly created_at: number
  readonly expires_at: number | null
  readonly revoked_at: number | null
  readonly last_used_at: number | null
  readonly rotated_to: string | null
  /** Comma-separated (migration 0027). */
  readonly scopes: string
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms))

// SQLite's own mapping (PgKeyStore.ts has its twin): times are ms integers here, Date there.
const toKey = (r: KeyRow) =>
  new KeyRecord({
    id: r.id as ApiKeyId,
    ownerKind: r.owner_kind as KeyRecord["ownerKind"],
    ownerId: r.owner_id,
    name: r.name,
    lookupId: r.lookup_id,
    hash: r.hash,
    createdAt: new Date(r.created_at),
    expiresAt: date(r.expires_at),
    revokedAt: date(r.revoked_at),
    lastUsedAt: date(r.last_used_at),
    rotatedTo: r.rotated_to as ApiKeyId | null,
    scopes: scopesFromText(r.scopes)
  })

/** Active at `?`: neither revoked nor expired by then. */
const ACTIVE = "(revoked_at IS NULL OR revoked_at > ?) AND (expires_at IS NULL OR expires_at > ?)"

export const makeSqliteKeyStore = (
  db: SqliteConnection,
  /** Where a key's last use goes, the one write of every request (GroupCommit.ts). */
  writes: GroupCommit,
  /** Writes an idempotent completion inside the caller's transaction (SqliteStores.ts). */
  complete: (completion: IdempotencyCompletion | undefined) => void,
  /** Writes a change's audit entries inside the caller's transaction (SqliteAuditStore.ts). */
  audit: <A>(log: AuditLog<A> | undefined, changed: A) => void
) => {
  const sql = {
    insert: db.prepare(`INSERT INTO keys (id, owner_kind, owner_id, name, lookup_id, hash,
      created_at, expires_at, revoked_at, last_used_at, rotated_to, scopes)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    byLookupId: db.prepare("SELECT * FROM keys WHERE lookup_id = ?"),
    byHash: db.prepare("SELECT * FROM keys WHERE hash = ?"),
    byId: db.prepare("SELECT * FROM keys WHERE id = ? AND owner_kind = ? AND owner_id = ?"),
    list: db.prepare(`SELECT * FROM keys WHERE owner_kind = ? AND owner_id = ?
      ORDER BY created_at DESC, id DESC`),
    revoke: db.prepare(`UPDATE keys SET revoked_at = ?
      WHERE id = ? AND owner_kind = ? AND owner_id = ? AND (revoked_at IS NULL OR revoked_at > ?)
        AND (? = 0 OR EXISTS (SELECT 1 FROM keys other
          WHERE other.owner_kind = keys.owner_kind AND other.owner_id = keys.owner_id
            AND other.id <> keys.id AND other.revoked_at IS NULL
            AND (other.expires_at IS NULL OR other.expires_at > ?)))`),
    endRotated: db.prepare(`UPDATE keys
      SET revoked_at = min(coalesce(revoked_at, ?), ?), rotated_to = ?
      WHERE id = ? AND owner_kind = ? AND owner_id = ? AND ${ACTIVE}`),
    touch: db.prepare(`UPDATE keys SET last_used_at = ?
      WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`)
  }

  const find = (owner: KeyOwner, id: string) =>
    Option.map(
      Option.fromNullable(sql.byId.get(id, owner.kind, owner.id) as KeyRow | undefined),
      toKey
    )

  /** Inside the caller's transaction; throws on a taken lookup id or hash. */
  const insertRow = (k: KeyRecord) => {
    sql.insert.run(
      k.id,
      k.ownerKind,
      k.ownerId,
      k.name,
      k.lookupId,
      k.hash,
      k.createdAt.getTime(),
      k.expiresAt?.getTime() ?? null,
      k.revokedAt?.getTime() ?? null,
      k.lastUsedAt?.getTime() ?? null,
      k.rotatedTo,
      scopesToText(k.scopes)
    )
  }

  /** `write` in a transaction; a unique violation (a taken lookup id or hash) is ApiKeyLookupTaken. */
  const transactKeys = <A>(write: () => A) =>
    Effect.suspend(() => {
      try {
        return Effect.succeed(db.transaction(write))
      } catch (error) {
        if (isUniqueViolation(error)) return Effect.fail(new ApiKeyLookupTaken())
        throw error
      }
    })

  const store = KeyStore.of({
    insert: (key, extras) =>
      transactKeys(() => {
        insertRow(key)
        complete(extras?.completion)
        audit(extras?.audit, key)
      }),
    findByLookupId: (lookupId) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(sql.byLookupId.get(lookupId) as KeyRow | undefined), toKey)
      ),
    findByHash: (hash) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(sql.byHash.get(hash) as KeyRow | undefined), toKey)
      ),
    find: (owner, id) => Effect.sync(() => find(owner, id)),
    list: (owner) =>
      Effect.sync(() => (sql.list.all(owner.kind, owner.id) as Array<KeyRow>).map(toKey)),
    revoke: (owner, id, at, options) =>
      Effect.sync(() =>
        db.transaction(() => {
          const ms = at.getTime()
          const written = sql.revoke.run(
            ms,
            id,
            owner.kind,
            owner.id,
            ms,
            options.keepOneActive ? 1 : 0,
            ms
          )
          const key = find(owner, id)
          if (Option.isNone(key)) return { _tag: "NotFound" as const }
          if (Number(written.changes) === 1) {
            complete(options.completion)
            audit(options.audit, key.value)
            return { _tag: "Revoked" as const, key: key.value }
          }
          const revokedAt = key.value.revokedAt
          return revokedAt !== null && revokedAt <= at
            ? { _tag: "AlreadyRevoked" as const, key: key.value }
            : { _tag: "LastActiveKey" as const }
        })
      ),
    rotate: (owner, id, replacement, oldEndsAt, at, extras) =>
      transactKeys(() => {
        const ms = at.getTime()
        const ends = oldEndsAt.getTime()
        const ended = sql.endRotated.run(
          ends,
          ends,
          replacement.id,
          id,
          owner.kind,
          owner.id,
          ms,
          ms
        )
        if (Number(ended.changes) !== 1) {
          return Option.isNone(find(owner, id))
            ? { _tag: "NotFound" as const }
            : { _tag: "Inactive" as const }
        }
        insertRow(replacement)
        complete(extras?.completion)
        const old = Option.getOrThrow(find(owner, id))
        audit(extras?.audit, { old, replacement })
        return { _tag: "Rotated" as const, old, replacement }
      }),
    touch: (id, at, staleBefore) =>
      writes.write(() => {
        sql.touch.run(at.getTime(), id, staleBefore.getTime())
      })
  })

  return { store, insertRow }
}
