/**
 * Webhook endpoints on PostgreSQL.
 */
import type { SqlClient } from "@effect/sql"
import {
  type PartnerId,
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"
import { writeCompletion } from "./PgIdempotencyStore.js"

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
  readonly previous_secret_expires_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly deleted_at: Date | null
}

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
    previousSecretExpiresAt: r.previous_secret_expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at
  })

const one = (rows: ReadonlyArray<EndpointRow>) =>
  Option.map(Option.fromNullable(rows[0]), toEndpoint)

export const makePgWebhookEndpointStore = (sql: SqlClient.SqlClient) =>
  WebhookEndpointStore.of({
    insert: (e, completion) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO webhook_endpoints ${sql.insert({
              id: e.id,
              partner_id: e.partnerId,
              url: e.url,
              events: e.events === null ? null : JSON.stringify(e.events),
              merchant_id: e.merchantId,
              description: e.description,
              api_version: e.apiVersion,
              status: e.status,
              disabled_reason: e.disabledReason,
              secret: e.secret,
              previous_secret: e.previousSecret,
              previous_secret_expires_at: e.previousSecretExpiresAt,
              created_at: e.createdAt,
              updated_at: e.updatedAt,
              deleted_at: e.deletedAt
            })}`
            if (completion !== undefined) yield* writeCompletion(sql, completion)
          })
        )
        .pipe(orDieSql),
    find: (id) =>
      sql<EndpointRow>`SELECT * FROM webhook_endpoints WHERE id = ${id}`.pipe(
        Effect.map(one),
        orDieSql
      ),
    list: (partnerId) =>
      sql<EndpointRow>`SELECT * FROM webhook_endpoints
        WHERE partner_id = ${partnerId} AND deleted_at IS NULL ORDER BY id DESC`.pipe(
        Effect.map((rows) => rows.map(toEndpoint)),
        orDieSql
      ),
    update: (id, c, at) => {
      const events =
        c.events === undefined ? null : c.events === null ? null : JSON.stringify(c.events)
      return sql<EndpointRow>`UPDATE webhook_endpoints SET
          url = CASE WHEN ${c.url !== undefined}::boolean THEN ${c.url ?? null}::text ELSE url END,
          events = CASE WHEN ${c.events !== undefined}::boolean THEN ${events}::text
            ELSE events END,
          description = CASE WHEN ${c.description !== undefined}::boolean
            THEN ${c.description ?? null}::text ELSE description END,
          status = CASE WHEN ${c.status !== undefined}::boolean THEN ${c.status ?? null}::text
            ELSE status END,
          disabled_reason = CASE WHEN ${c.disabledReason !== undefined}::boolean
            THEN ${c.disabledReason ?? null}::text ELSE disabled_reason END,
          failing_since = CASE WHEN ${c.status === "enabled"}::boolean THEN NULL
            ELSE failing_since END,
          updated_at = ${at}
        WHERE id = ${id} AND deleted_at IS NULL RETURNING *`.pipe(Effect.map(one), orDieSql)
    },
    rotateSecret: (id, rotation, at, completion) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            // The previous secret is the stored one (SET reads the row as it was), not the
            // caller's copy: a re-seal may have rewritten it since (SecretRotation says why).
            const rotated = one(
              yield* sql<EndpointRow>`UPDATE webhook_endpoints SET secret = ${rotation.secret},
                  previous_secret = CASE WHEN ${rotation.previousSecret !== null}::boolean
                    THEN secret ELSE NULL END,
                  previous_secret_expires_at = ${rotation.previousSecretExpiresAt},
                  updated_at = ${at}
                WHERE id = ${id} AND deleted_at IS NULL RETURNING *`
            )
            if (Option.isSome(rotated) && completion !== undefined) {
              yield* writeCompletion(sql, completion)
            }
            return rotated
          })
        )
        .pipe(orDieSql),
    markDeleted: (id, at) =>
      sql<EndpointRow>`UPDATE webhook_endpoints SET deleted_at = coalesce(deleted_at, ${at})
        WHERE id = ${id} RETURNING *`.pipe(Effect.map(one), orDieSql)
  })
