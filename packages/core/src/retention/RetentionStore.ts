/**
 * The storage port of the purge (Purge.ts): bounded deletes of the records
 * that only grow (events, webhook deliveries with their attempts, the audit
 * trail), and the lease that lets one instance purge at a time. The features
 * whose tables hold data a request still reads purge through their own
 * stores (`GatewayStore.purgeOptions`, `.purgeCollectedData`,
 * `IdempotencyStore.purge`).
 *
 * Every purge deletes at most `limit` rows, found by a range of an index (not
 * a scan), in one short statement: the count tells whether another batch is
 * due (fewer than `limit`: none is left). A row another instance deleted
 * first is simply not deleted again.
 */
import { Context, type Effect } from "effect"

/** What one batch of the webhook purge deleted: the deliveries and all their attempts. */
export interface DeliveriesPurged {
  readonly deliveries: number
  readonly attempts: number
}

export class RetentionStore extends Context.Tag("@pay/core/RetentionStore")<
  RetentionStore,
  {
    /**
     * Deletes up to `limit` events written before `before`, oldest first,
     * except one a delivery still has: a pending one's claim reads its event,
     * and a delivery's record shows its event's type (the webhook purge goes
     * first). The count.
     */
    readonly purgeEvents: (before: Date, limit: number) => Effect.Effect<number>
    /**
     * Deletes up to `limit` deliveries that are over (delivered, or failed for
     * good) whose last attempt was before `before`, and every attempt of each,
     * in one write. A pending delivery (waiting, in flight) is never deleted.
     */
    readonly purgeWebhookDeliveries: (
      before: Date,
      limit: number
    ) => Effect.Effect<DeliveriesPurged>
    /** Deletes up to `limit` audit entries made before `before`, oldest first; the count. */
    readonly purgeAuditTrail: (before: Date, limit: number) => Effect.Effect<number>
    /**
     * Takes the lease `name` for `holder` until `until`, atomically across
     * instances: when no one holds it, its holder's time ran out (at or before
     * `now`), or `holder` holds it already. True when `holder` holds it now.
     */
    readonly takeLease: (
      name: string,
      holder: string,
      now: Date,
      until: Date
    ) => Effect.Effect<boolean>
    /** Moves the end of `holder`'s lease to `until`; false when it is no longer its own. */
    readonly extendLease: (name: string, holder: string, until: Date) => Effect.Effect<boolean>
  }
>() {}
