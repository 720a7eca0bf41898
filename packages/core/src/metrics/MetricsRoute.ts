/**
 * `GET /metrics`: every metric of the process in the Prometheus text format.
 * The levels (held long-polls, the chain job queue, memory) are read at the
 * scrape, the counts and timings kept as they happen (EngineMetrics.ts). It
 * shows counts, durations and levels only: no id, key, address or amount.
 */
import { Clock, Duration, Effect, Metric } from "effect"
import type * as MetricPair from "effect/MetricPair"
import { Chain } from "../chain/Chain.js"
import { StorageProbe } from "../health/StorageProbe.js"
import { publicRoute } from "../http/Route.js"
import { PAYMENT_STATUSES } from "../payments/Payment.js"
import { PaymentEvents } from "../payments/PaymentEvents.js"
import { countPurged, PURGED_TABLES } from "../retention/PurgeMetrics.js"
import {
  chainJobOldestDueAge,
  chainJobsActive,
  chainJobsDue,
  chainJobsStuck,
  countPaymentStatus,
  countRpcError,
  databaseUp,
  heldLongPolls,
  processHeapUsed,
  processResidentMemory,
  processUptime
} from "./EngineMetrics.js"
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "./Prometheus.js"

/** A scrape must answer even when the database does not: its read gives up after this. */
const QUEUE_READ_TIMEOUT = Duration.seconds(2)

/** The levels, read now into their gauges. */
const readLevels = Effect.gen(function* () {
  // Every series of the bounded counters there from the first scrape, at 0: a series that
  // appears at its first count loses that count to `increase()` and `rate()`.
  for (const status of PAYMENT_STATUSES) countPaymentStatus(status, 0)
  for (const network of (yield* Chain).networks) countRpcError(network.chainId, 0)
  for (const table of PURGED_TABLES) countPurged(table, 0)
  const events = yield* PaymentEvents
  const probe = yield* StorageProbe
  const now = yield* Clock.currentTimeMillis
  heldLongPolls.unsafeUpdate(yield* events.held, [])
  const queue = yield* probe
    .chainJobQueue(new Date(now))
    .pipe(Effect.timeoutOption(QUEUE_READ_TIMEOUT), Effect.option)
  if (queue._tag === "Some" && queue.value._tag === "Some") {
    const q = queue.value.value
    chainJobsActive.unsafeUpdate(q.active, [])
    chainJobsDue.unsafeUpdate(q.due, [])
    chainJobsStuck.unsafeUpdate(q.stuck, [])
    chainJobOldestDueAge.unsafeUpdate(
      q.oldestDueAt === null ? 0 : Math.max(0, (now - q.oldestDueAt.getTime()) / 1000),
      []
    )
    databaseUp.unsafeUpdate(1, [])
  } else {
    databaseUp.unsafeUpdate(0, [])
  }
  // Node and Bun have `process`; another runtime reports no process levels.
  const proc = (globalThis as { process?: NodeJS.Process }).process
  if (proc !== undefined) {
    processUptime.unsafeUpdate(proc.uptime(), [])
    const memory = proc.memoryUsage()
    processResidentMemory.unsafeUpdate(memory.rss, [])
    processHeapUsed.unsafeUpdate(memory.heapUsed, [])
  }
})

/**
 * The engine's own metrics only: the registry also holds Effect's runtime
 * metrics (`effect_fiber_*`, on by default), whose `effect_fiber_active` is a
 * counter that goes down, which Prometheus would read as resets, and an
 * embedder's, which are theirs to expose (`renderPrometheus`).
 */
const isEngineMetric = (pair: MetricPair.MetricPair.Untyped) =>
  pair.metricKey.name.startsWith("pay_")

export const metricsRoute = publicRoute("GET", "/metrics", () =>
  Effect.zipRight(
    readLevels,
    Effect.map(Metric.snapshot, (pairs) => ({
      status: 200,
      body: renderPrometheus(pairs.filter(isEngineMetric)),
      contentType: PROMETHEUS_CONTENT_TYPE
    }))
  )
)
