/**
 * The audit trail on PostgreSQL (core audit/AuditEntry.ts).
 * `insertAuditEntries` runs inside the transaction of the change it records:
 * call it inside the change's `sql.withTransaction`, after its own
 * statements, so that a change that fails rolls back with its entries.
 * `writeAudit` is the same for a store write's `AuditLog`. The read lists
 * entries newest first in the order written.
 */
import type { SqlClient } from "@effect/sql"
import {
  type AuditAction,
  type AuditActor,
  AuditEntry,
  type AuditEntryId,
  type AuditLog,
  AuditStore,
  auditValueFromJson,
  auditValueToJson,
  type PartnerId
} from "@pay/core"
import { Effect } from "effect"
import { orDieSql } from "./PgErrors.js"

export interface AuditRow {
  readonly id: string
  readonly at: Date
  readonly partner_id: string
  readonly actor_kind: string
  readonly actor_key_id: string | null
  readonly action: string
  readonly subject: string
  readonly merchant_id: string | null
  readonly before_value: string | null
  readonly after_value: string | null
}

const actorOf = (r: AuditRow): AuditActor =>
  r.actor_kind === "api_key"
    ? r.actor_key_id === null
      ? { kind: "api_key" }
      : { kind: "api_key", keyId: r.actor_key_id }
    : ({ kind: r.actor_kind } as AuditActor)

export const toAuditEntry = (r: AuditRow) =>
  new AuditEntry({
    id: r.id as AuditEntryId,
    at: r.at,
    partnerId: r.partner_id as PartnerId,
    actor: actorOf(r),
    action: r.action as AuditAction,
    subject: r.subject,
    merchantId: r.merchant_id,
    before: auditValueFromJson(r.before_value),
    after: auditValueFromJson(r.after_value)
  })

/** Inside the caller's transaction: the entries, as they are. */
export const insertAuditEntries = (sql: SqlClient.SqlClient, entries: ReadonlyArray<AuditEntry>) =>
  entries.length === 0
    ? Effect.void
    : Effect.asVoid(
        sql`INSERT INTO audit_log ${sql.insert(
          entries.map((e) => ({
            id: e.id,
            at: e.at,
            partner_id: e.partnerId,
            actor_kind: e.actor.kind,
            actor_key_id: e.actor.kind === "api_key" ? (e.actor.keyId ?? null) : null,
            action: e.action,
            subject: e.subject,
            merchant_id: e.merchantId,
            before_value: auditValueToJson(e.before),
            after_value: auditValueToJson(e.after)
          }))
        )}`
      )

/** Inside the caller's transaction: the entries `log` makes of what the change changed. */
export const writeAudit = <A>(
  sql: SqlClient.SqlClient,
  log: AuditLog<A> | undefined,
  changed: A
) => (log === undefined ? Effect.void : insertAuditEntries(sql, log(changed)))

export const makePgAuditStore = (sql: SqlClient.SqlClient) =>
  AuditStore.of({
    list: (q) => {
      const filter = sql.and([
        ...(q.partnerId === undefined ? [] : [sql`partner_id = ${q.partnerId}`]),
        ...(q.before === undefined
          ? []
          : [sql`seq < (SELECT seq FROM audit_log WHERE id = ${q.before})`])
      ])
      return sql<AuditRow>`SELECT * FROM audit_log WHERE ${filter}
        ORDER BY seq DESC LIMIT ${q.limit}`.pipe(
        Effect.map((rows) => rows.map(toAuditEntry)),
        orDieSql
      )
    }
  })
