/**
 * The storage port for reading the audit trail. Entries are written by the
 * stores whose changes they record, inside those changes' transactions (an
 * `AuditLog` argument, as `Outbox` for events); each storage package exports
 * its own helper for that (`insertAuditEntries`).
 */
import { Context, type Effect } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import type { AuditEntry, AuditEntryId } from "./AuditEntry.js"

export interface AuditQuery {
  /** Only this partner's entries; every partner's when absent. */
  readonly partnerId?: PartnerId | undefined
  /** Keyset: only entries written before this one (newest first). */
  readonly before?: AuditEntryId | undefined
  readonly limit: number
}

export class AuditStore extends Context.Tag("@pay/core/AuditStore")<
  AuditStore,
  {
    /** Newest first, in the order they were written. */
    readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEntry>>
  }
>() {}
