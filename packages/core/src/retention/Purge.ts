/**
 * The purge: the one background job that keeps the database from growing
 * without bound. A pass visits every record with a retention (RetentionConfig
 * and the gateway's buyer data), each in batches of short bounded deletes,
 * and pauses after each batch for a multiple of the time it took, so the
 * purge never holds the database (nor, where a store runs its deletes on the
 * server's own thread, that thread) for long, nor for most of the time,
 * however large the backlog.
 *
 * Shared across instances: a pass runs under a lease in the database, so one
 * instance purges per interval while the others skip it; the lease is
 * extended as the pass goes, and when its holder dies it runs out and the
 * next instance whose turn comes takes it over. A pass that lost its lease
 * (it stalled past it) stops at its next batch.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { GatewayConfig } from "../gateway/GatewayConfig.js"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import { GatewayStore } from "../payments/PaymentOption.js"
import { countPurged, PURGED_TABLES, type PurgedTable } from "./PurgeMetrics.js"
import { RetentionConfig } from "./RetentionConfig.js"
import { RetentionStore } from "./RetentionStore.js"

/** The lease's name: one row of the database's leases. */
export const PURGE_LEASE = "purge"

/**
 * How the purge paces itself: how many rows a statement deletes, and the
 * pause after a batch. A batch's size follows its time: one that took longer
 * than `targetBatchMs` halves the next (down to `minBatch`), one that took
 * less than half of it grows the next by half (up to `batch`), so a slow
 * store or a busy machine gets shorter batches rather than longer stalls, and
 * a store whose commit has a fixed cost (an fsync) still gets full ones.
 */
export interface PurgePacing {
  /** Rows a batch starts with, and the most it takes. */
  readonly batch: number
  /** The fewest rows a batch shrinks to. */
  readonly minBatch: number
  readonly targetBatchMs: number
  /** The pause after a full batch that took `batchMs`, before the next. */
  readonly pauseAfter: (batchMs: number) => Duration.Duration
}

/**
 * Batches of up to 1,000 rows of about 20 ms at most, each followed by a
 * pause of four times its own length (at least 20 ms): the purge takes at
 * most a fifth of the database's time, in short slices (bench/purge.ts
 * measures what that costs the status read; docs/benchmarks.md#purge-under-load).
 */
export const DEFAULT_PACING: PurgePacing = {
  batch: 1000,
  minBatch: 100,
  targetBatchMs: 20,
  pauseAfter: (batchMs) => Duration.millis(Math.max(20, 4 * batchMs))
}

/** The next batch's size, from how long the last one took. */
export const nextBatch = (pacing: PurgePacing, size: number, tookMs: number): number =>
  tookMs > pacing.targetBatchMs
    ? Math.max(pacing.minBatch, Math.floor(size / 2))
    : tookMs < pacing.targetBatchMs / 2
      ? Math.min(pacing.batch, Math.ceil(size * 1.5))
      : size

export type PurgeCounts = Record<PurgedTable, number>

export interface PurgePassResult {
  readonly counts: PurgeCounts
  /** False when the pass stopped early, its lease lost (the rest waits for the next pass). */
  readonly complete: boolean
}

const noCounts = (): PurgeCounts =>
  Object.fromEntries(PURGED_TABLES.map((t) => [t, 0])) as PurgeCounts

/**
 * One pass over every table, to the end of each backlog. `keepLease` runs
 * between batches: false stops the pass.
 */
export const purgePass = (
  pacing: PurgePacing = DEFAULT_PACING,
  keepLease: Effect.Effect<boolean> = Effect.succeed(true)
) =>
  Effect.gen(function* () {
    const gateway = yield* GatewayStore
    const idempotency = yield* IdempotencyStore
    const store = yield* RetentionStore
    const retention = yield* RetentionConfig
    const { buyerDataRetentionMs } = yield* GatewayConfig
    const now = yield* Clock.currentTimeMillis
    const before = (ms: number) => new Date(now - ms)
    const counts = noCounts()
    let size = pacing.batch

    type Batch = { readonly progress: number; readonly deleted: Partial<PurgeCounts> }
    /**
     * Runs `step` until it reports less progress than the batch it was given;
     * each batch's deletes counted as they happen. False when the lease was lost.
     */
    const drain = (step: (limit: number) => Effect.Effect<Batch>) =>
      Effect.gen(function* () {
        for (;;) {
          const limit = size
          const started = yield* Clock.currentTimeNanos
          const { progress, deleted } = yield* step(limit)
          const tookMs = Number((yield* Clock.currentTimeNanos) - started) / 1e6
          for (const [table, n] of Object.entries(deleted) as Array<[PurgedTable, number]>) {
            counts[table] += n
            if (n > 0) countPurged(table, n)
          }
          if (progress < limit) return true
          size = nextBatch(pacing, limit, tookMs)
          if (!(yield* keepLease)) return false
          const pause = pacing.pauseAfter(tookMs)
          yield* Duration.toMillis(pause) > 0 ? Effect.sleep(pause) : Effect.yieldNow()
        }
      })

    const count = (table: PurgedTable) => (n: number) => ({
      progress: n,
      deleted: { [table]: n }
    })
    const steps: ReadonlyArray<(limit: number) => Effect.Effect<Batch>> = [
      (limit) =>
        Effect.map(
          gateway.purgeCollectedData(before(buyerDataRetentionMs), limit),
          count("collected_data")
        ),
      (limit) =>
        Effect.map(gateway.purgeOptions(before(retention.expiredOptionsMs), limit), (r) => ({
          progress: r.deleted + r.kept,
          deleted: { payment_options: r.deleted }
        })),
      (limit) =>
        Effect.map(
          idempotency.purge(before(retention.idempotencyKeysMs), limit),
          count("idempotency_keys")
        ),
      // Deliveries before events: an event goes once no delivery waits to send it.
      (limit) =>
        Effect.map(
          store.purgeWebhookDeliveries(before(retention.webhookDeliveriesMs), limit),
          (r) => ({
            progress: r.deliveries,
            deleted: { webhook_deliveries: r.deliveries, webhook_attempts: r.attempts }
          })
        ),
      // An event outlives its deliveries' records: past the longer of the two retentions,
      // only an event redelivered late is still held by one, so batches stay range reads.
      (limit) =>
        Effect.map(
          store.purgeEvents(
            before(Math.max(retention.eventsMs, retention.webhookDeliveriesMs)),
            limit
          ),
          count("events")
        ),
      ...(retention.auditTrailMs === undefined
        ? []
        : [
            (limit: number) =>
              Effect.map(
                store.purgeAuditTrail(before(retention.auditTrailMs!), limit),
                count("audit_log")
              )
          ])
    ]
    for (const step of steps) {
      if (!(yield* drain(step))) return { counts, complete: false } satisfies PurgePassResult
    }
    return { counts, complete: true } satisfies PurgePassResult
  })

/** Tells this engine's lease apart from another instance's. */
const newHolder = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) =>
    b.toString(16).padStart(2, "0")
  ).join("")

/**
 * A pass now and then every `retention.purgeEveryMs`, for as long as the
 * scope lives, each only if this instance takes the lease: held for the
 * interval, extended while the pass runs. One log line per pass it runs.
 */
export const purgeForever = (pacing: PurgePacing = DEFAULT_PACING) =>
  Effect.gen(function* () {
    const store = yield* RetentionStore
    const { purgeEveryMs } = yield* RetentionConfig
    const holder = newHolder()
    const once = Effect.gen(function* () {
      const startedAt = yield* Clock.currentTimeMillis
      let until = startedAt + purgeEveryMs
      const taken = yield* store.takeLease(
        PURGE_LEASE,
        holder,
        new Date(startedAt),
        new Date(until)
      )
      if (!taken) {
        yield* Effect.logDebug("purge pass skipped: another instance holds it")
        return
      }
      // Extended once half of it is gone: a write every half interval, not every batch.
      const keepLease = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (until - now > purgeEveryMs / 2) return true
        until = now + purgeEveryMs
        return yield* store.extendLease(PURGE_LEASE, holder, new Date(until))
      })
      const { counts, complete } = yield* purgePass(pacing, keepLease)
      const durationMs = (yield* Clock.currentTimeMillis) - startedAt
      // A pass that found nothing is the common case (every interval, on every quiet
      // deployment): a debug line, not an info line an operator has to read past.
      const purged = Object.values(counts).some((n) => n > 0)
      yield* (purged ? Effect.logInfo : Effect.logDebug)("purge pass", {
        ...counts,
        durationMs,
        complete
      })
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("purge pass failed", cause)))
    return yield* Effect.repeat(once, Schedule.spaced(Duration.millis(purgeEveryMs)))
  })
