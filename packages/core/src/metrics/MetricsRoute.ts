/**
 * `GET /metrics`: every metric of the process in the Prometheus text format.
 * The levels (held long-polls, the chain job queue, memory) are read at the
 * scrape, the counts and timings kept as they happen (EngineMetrics.ts). It
 * shows counts, durations and levels only: no id, key, address or amount.
 */
import { Clock, Duration, Effect, Metric } from "effect"
import { StorageProbe } from "../health/StorageProbe.js"
import { publicRoute } from "../http/Route.js"
import { PaymentEvents } from "../payments/PaymentEvents.js"
import {
  chainJobOldestDueAge,
  chainJobsActive,
  chainJobsDue,
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

export const metricsRoute = publicRoute("GET", "/metrics", () =>
  Effect.zipRight(
    readLevels,
    Effect.map(Metric.snapshot, (pairs) => ({
      status: 200,
      body: renderPrometheus(pairs),
      contentType: PROMETHEUS_CONTENT_TYPE
    }))
  )
)
