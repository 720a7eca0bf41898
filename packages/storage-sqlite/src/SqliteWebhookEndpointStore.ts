/**
 * Webhook endpoints on SQLite.
 */
import {
  type IdempotencyCompletion,
  type PartnerId,
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "@pay/core"
import { Effect, Option } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"

export interface EndpointRow {
  readonly id: string
  readonly partner_id: string
  readonly url: string
  readonly events: string | null
  readonly merchant_id: string | null
  readonly description: string | null
  readonly api_version: string
  readonly status: string
  readonly disabled_reason: string | null
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: number | null
  readonly created_at: number
  readonly updated_at: number
  readonly deleted_at: number | null
}

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms))

export const toEndpoint = (r: EndpointRow) =>
  new WebhookEndpoint({
    id: r.id as WebhookEndpointId,
    partnerId: r.partner_id as PartnerId,
    url: r.url,
    events: r.events === null ? null : JSON.parse(r.events),
    merchantId: r.merchant_id,
    description: r.description,
    apiVersion: r.api_version as WebhookEndpoint["apiVersion"],
    status: r.status as WebhookEndpoint["status"],
    disabledReason: r.disabled_reason,
    secret: r.secret,
    previousSecret: r.previous_secret,
    previousSecretExpiresAt: dateOrNull(r.previous_secret_expires_at),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    deletedAt: dateOrNull(r.deleted_at)
  })

export const makeSqliteWebhookEndpointStore = (
  db: SqliteConnection,
  /** Records an idempotent response in the caller's transaction. */
  complete: (completion: IdempotencyCompletion | undefined) => void
) => {
  const insert = db.prepare(`INSERT INTO webhook_endpoints (id, partner_id, url, events,
    merchant_id, description, api_version, status, disabled_reason, secret, previous_secret,
    previous_secret_expires_at, created_at, updated_at, deleted_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const byId = db.prepare("SELECT * FROM webhook_endpoints WHERE id = ?")
  const live = db.prepare(`SELECT * FROM webhook_endpoints
    WHERE partner_id = ? AND deleted_at IS NULL ORDER BY id DESC`)
  // Plain `?` only (better-sqlite3 and bun:sqlite read numbered ones differently): each
  // optional change is a flag and its value.
  const update = db.prepare(`UPDATE webhook_endpoints SET
      url = CASE WHEN ? = 1 THEN ? ELSE url END,
      events = CASE WHEN ? = 1 THEN ? ELSE events END,
      description = CASE WHEN ? = 1 THEN ? ELSE description END,
      status = CASE WHEN ? = 1 THEN ? ELSE status END,
      disabled_reason = CASE WHEN ? = 1 THEN ? ELSE disabled_reason END,
      failing_since = CASE WHEN ? = 1 THEN NULL ELSE failing_since END,
      updated_at = ?
    WHERE id = ? AND deleted_at IS NULL`)
  // The previous secret is the stored one (SET reads the row as it was), not the caller's copy:
  // a re-seal may have rewritten it since (SecretRotation says why).
  const rotate = db.prepare(`UPDATE webhook_endpoints SET secret = ?,
      previous_secret = CASE WHEN ? = 1 THEN secret ELSE NULL END,
      previous_secret_expires_at = ?, updated_at = ?
    WHERE id = ? AND deleted_at IS NULL`)
  const remove = db.prepare(
    "UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL"
  )
  const find = (id: string) =>
    Option.map(Option.fromNullable(byId.get(id) as EndpointRow | undefined), toEndpoint)
  const given = <A>(value: A | undefined) => [value === undefined ? 0 : 1, value ?? null] as const

  return WebhookEndpointStore.of({
    insert: (e, completion) =>
      Effect.sync(() =>
        db.transaction(() => {
          insert.run(
            e.id,
            e.partnerId,
            e.url,
            e.events === null ? null : JSON.stringify(e.events),
            e.merchantId,
            e.description,
            e.apiVersion,
            e.status,
            e.disabledReason,
            e.secret,
            e.previousSecret,
            e.previousSecretExpiresAt?.getTime() ?? null,
            e.createdAt.getTime(),
            e.updatedAt.getTime(),
            e.deletedAt?.getTime() ?? null
          )
          complete(completion)
        })
      ),
    find: (id) => Effect.sync(() => find(id)),
    list: (partnerId) =>
      Effect.sync(() => (live.all(partnerId) as Array<EndpointRow>).map(toEndpoint)),
    update: (id, changes, at) =>
      Effect.sync(() => {
        const events =
          changes.events === undefined
            ? undefined
            : changes.events === null
              ? null
              : JSON.stringify(changes.events)
        const { changes: n } = update.run(
          ...given(changes.url),
          changes.events === undefined ? 0 : 1,
          events ?? null,
          changes.description === undefined ? 0 : 1,
          changes.description ?? null,
          ...given(changes.status),
          changes.disabledReason === undefined ? 0 : 1,
          changes.disabledReason ?? null,
          // Enabled again: a run of failures that disabled it starts over.
          changes.status === "enabled" ? 1 : 0,
          at.getTime(),
          id
        )
        return Number(n) === 1 ? find(id) : Option.none()
      }),
    rotateSecret: (id, rotation, at, completion) =>
      Effect.sync(() =>
        db.transaction(() => {
          const { changes: n } = rotate.run(
            rotation.secret,
            rotation.previousSecret === null ? 0 : 1,
            rotation.previousSecretExpiresAt?.getTime() ?? null,
            at.getTime(),
            id
          )
          if (Number(n) !== 1) return Option.none()
          complete(completion)
          return find(id)
        })
      ),
    markDeleted: (id, at) =>
      Effect.sync(() => {
        remove.run(at.getTime(), id)
        return find(id)
      })
  })
}
