/**
 * Making audit entries for a store write's `AuditLog`, as events are made for
 * its outbox (events/NewEvent.ts): the id and time are drawn before the write
 * (an Effect), the entry is made from what the write changed, inside its
 * transaction (a plain function): `auditStamp` then `auditEntryOf`.
 */
import { Clock, Effect } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import { newId } from "../shared/Ids.js"
import { type AuditAction, type AuditActor, AuditEntry, type AuditEntryId } from "./AuditEntry.js"

export interface AuditStamp {
  readonly id: AuditEntryId
  readonly at: Date
}

/** A new entry id and the time of the change. */
export const auditStamp: Effect.Effect<AuditStamp> = Effect.gen(function* () {
  return {
    id: yield* newId<AuditEntryId>("aud"),
    at: new Date(yield* Clock.currentTimeMillis)
  }
})

/** Several stamps: one per entry a write may make. */
export const auditStamps = (n: number) => Effect.all(Array.from({ length: n }, () => auditStamp))

export interface AuditChange {
  readonly partnerId: PartnerId
  readonly actor: AuditActor
  readonly action: AuditAction
  readonly subject: string
  readonly merchantId?: string | null | undefined
  /** JSON-serialisable, never a secret; null for a creation. */
  readonly before: unknown
  /** JSON-serialisable, never a secret; null for a removal. */
  readonly after: unknown
}

export const auditEntryOf = ({ id, at }: AuditStamp, change: AuditChange): AuditEntry =>
  new AuditEntry({
    id,
    at,
    partnerId: change.partnerId,
    actor: change.actor,
    action: change.action,
    subject: change.subject,
    merchantId: change.merchantId ?? null,
    before: change.before ?? null,
    after: change.after ?? null
  })
