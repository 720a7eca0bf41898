/**
 * The audit trail on SQLite (core audit/AuditEntry.ts). `insertAuditEntries`
 * is synchronous and runs inside the transaction of the change it records:
 * call it inside `db.transaction(() => …)` or a group-commit write's body
 * (GroupCommit.ts), after the change's own statements, so that a change that
 * throws rolls back with its entries. `audit` is the same for a store write's
 * `AuditLog`. The read lists entries newest first in the order written.
 */
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
import type { SqliteConnection } from "./SqliteDatabase.js"

export interface AuditRow {
  readonly id: string
  readonly at: number
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
    at: new Date(r.at),
    partnerId: r.partner_id as PartnerId,
    actor: actorOf(r),
    action: r.action as AuditAction,
    subject: r.subject,
    merchantId: r.merchant_id,
    before: auditValueFromJson(r.before_value),
    after: auditValueFromJson(r.after_value)
  })

export interface SqliteAuditLog {
  readonly store: typeof AuditStore.Service
  /** Inside the caller's transaction: the entries, as they are. */
  readonly insertAuditEntries: (entries: ReadonlyArray<AuditEntry>) => void
  /** Inside the caller's transaction: the entries `log` makes of what the change changed. */
  readonly audit: <A>(log: AuditLog<A> | undefined, changed: A) => void
}

export const makeSqliteAuditLog = (db: SqliteConnection): SqliteAuditLog => {
  const insert = db.prepare(`INSERT INTO audit_log (id, at, partner_id, actor_kind, actor_key_id,
      action, subject, merchant_id, before_value, after_value)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  // Plain `?` only (better-sqlite3 and bun:sqlite read numbered ones differently). An unknown
  // `before` id finds nothing, as in the events' list.
  const page = db.prepare(`SELECT * FROM audit_log
    WHERE (? IS NULL OR partner_id = ?)
      AND (? IS NULL OR seq < (SELECT seq FROM audit_log WHERE id = ?))
    ORDER BY seq DESC LIMIT ?`)

  const insertAuditEntries = (entries: ReadonlyArray<AuditEntry>) => {
    for (const e of entries) {
      insert.run(
        e.id,
        e.at.getTime(),
        e.partnerId,
        e.actor.kind,
        e.actor.kind === "api_key" ? (e.actor.keyId ?? null) : null,
        e.action,
        e.subject,
        e.merchantId,
        auditValueToJson(e.before),
        auditValueToJson(e.after)
      )
    }
  }

  const store = AuditStore.of({
    list: (q) =>
      Effect.sync(() => {
        const partner = q.partnerId ?? null
        const before = q.before ?? null
        const rows = page.all(partner, partner, before, before, q.limit) as Array<AuditRow>
        return rows.map(toAuditEntry)
      })
  })

  return {
    store,
    insertAuditEntries,
    audit: (log, changed) => {
      if (log) insertAuditEntries(log(changed))
    }
  }
}
