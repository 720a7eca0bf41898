/**
 * The engine's metrics, on Effect's `Metric` module. Effect keeps metrics in
 * one registry per process, so these are the process's: an embedder running
 * two engines in one process sees their sum (a deployment runs one a
 * process). Labels are few and bounded (route templates, status codes,
 * payment statuses, configured networks): never an id, a key or an amount.
 */
import { Metric, MetricBoundaries, MetricLabel } from "effect"
import type { RequestObserver } from "../http/RequestOutcome.js"

/** Requests answered, by method, route template and status. */
export const httpRequests = Metric.counter("pay_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

/** Long-polls are held up to 30 s (120 s at most), so the buckets reach past it. */
export const httpRequestDuration = Metric.histogram(
  "pay_http_request_duration_seconds",
  MetricBoundaries.fromIterable([
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120
  ]),
  "Time from a request's arrival to its answer, by method, route template and status"
)

/**
 * Payments that entered each status in this process (a created payment counts
 * in its first status). Counted where the status is written, not read back
 * per scrape: how many payments are in a status now would be a GROUP BY
 * over the whole payments table on every scrape (it has no status index, and
 * one kept up to date by triggers would be a hot row every instance writes).
 * Summed over instances, `increase()` gives how many payments reached a
 * status in a window, which is what a dashboard or an alert asks.
 */
export const paymentTransitions = Metric.counter("pay_payment_transitions_total", {
  description: "Payments that entered each status (created ones in their first), in this process",
  incremental: true
})

/** A call to a network's RPC that failed (no answer, or an error that is not the token's). */
export const rpcErrors = Metric.counter("pay_rpc_errors_total", {
  description: "Failed calls to a network's RPC, by network (CAIP-2)",
  incremental: true
})

/** Read at each scrape from the long-poll waiters (PaymentEvents.held). */
export const heldLongPolls = Metric.gauge("pay_long_polls_held", {
  description: "Status long-polls held now, waiting for a change"
})

/** Read at each scrape from the chain job store, through its index of active jobs. */
export const chainJobsActive = Metric.gauge("pay_chain_jobs_active", {
  description: "Active chain jobs (collect, settle): waiting, being worked on or retrying later"
})

export const chainJobsDue = Metric.gauge("pay_chain_jobs_due", {
  description: "Active chain jobs whose time to run has come"
})

export const chainJobOldestDueAge = Metric.gauge("pay_chain_job_oldest_due_age_seconds", {
  description:
    "How long the longest-due active chain job has been due, a failing one since its first failure (0 when none is)"
})

export const chainJobsStuck = Metric.gauge("pay_chain_jobs_stuck", {
  description: "Active chain jobs marked stuck: failing past the bound (jobs.stuckAfterSeconds)"
})

export const databaseUp = Metric.gauge("pay_database_up", {
  description: "1 when the last scrape's read of the chain job queue answered, else 0"
})

export const processUptime = Metric.gauge("pay_process_uptime_seconds", {
  description: "Seconds since the process started"
})

export const processResidentMemory = Metric.gauge("pay_process_resident_memory_bytes", {
  description: "Resident set size of the process"
})

export const processHeapUsed = Metric.gauge("pay_process_heap_used_bytes", {
  description: "JavaScript heap in use"
})

/** Each counter update's labels, made once per combination: the request path stays cheap. */
const labelCache = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()

const labels = (key: string, make: () => ReadonlyArray<MetricLabel.MetricLabel>) => {
  let found = labelCache.get(key)
  if (found === undefined) {
    found = make()
    labelCache.set(key, found)
  }
  return found
}

/** What a request that matched no route (404, 405) is counted under. */
export const UNMATCHED_ROUTE = "unmatched"

/**
 * Counts and times each answered request. The method is one the routes know or
 * "other": a client's made-up method must not make a series of its own.
 */
export const requestMetrics: RequestObserver = (outcome) => {
  const method = KNOWN_METHODS.has(outcome.method) ? outcome.method : "other"
  const route = outcome.route ?? UNMATCHED_ROUTE
  const tags = labels(`${method} ${outcome.status} ${route}`, () => [
    MetricLabel.make("method", method),
    MetricLabel.make("route", route),
    MetricLabel.make("status", String(outcome.status))
  ])
  httpRequests.unsafeUpdate(1, tags)
  httpRequestDuration.unsafeUpdate(outcome.durationMs / 1000, tags)
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** `count` payments entered `status`. */
export const countPaymentStatus = (status: string, count = 1) =>
  paymentTransitions.unsafeUpdate(
    count,
    labels(`payment ${status}`, () => [MetricLabel.make("status", status)])
  )

/** `count` failed RPC calls to `chainId`, a configured network's CAIP-2 id. */
export const countRpcError = (chainId: string, count = 1) =>
  rpcErrors.unsafeUpdate(
    count,
    labels(`rpc ${chainId}`, () => [MetricLabel.make("network", chainId)])
  )
