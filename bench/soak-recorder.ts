/**
 * What the soak bench's traffic (soak-traffic.ts) records: each route's times for the minute
 * under way, its failures (the first 20 kept word for word), and a count of every outcome
 * (payments created, cancelled, settled, refunded…), so that the report counts records
 * rather than trusting a happy path.
 */
import { percentile, type RouteMinute } from "./soak-report.js"

/** Each route's times for the minute under way, and every outcome of the run. */
export class Recorder {
  private times = new Map<string, Array<number>>()
  private errors = new Map<string, number>()
  readonly totalErrors = new Map<string, number>()
  readonly firstErrors: Array<string> = []
  readonly counts = new Map<string, number>()

  record(route: string, ms: number) {
    const list = this.times.get(route) ?? []
    list.push(ms)
    this.times.set(route, list)
  }

  fail(route: string, message: string) {
    this.errors.set(route, (this.errors.get(route) ?? 0) + 1)
    this.totalErrors.set(route, (this.totalErrors.get(route) ?? 0) + 1)
    if (this.firstErrors.length < 20) this.firstErrors.push(`${route}: ${message}`)
  }

  count(what: string, by = 1) {
    this.counts.set(what, (this.counts.get(what) ?? 0) + by)
  }

  /** The minute's figures per route; starts the next minute. */
  take(): Record<string, RouteMinute> {
    const out: Record<string, RouteMinute> = {}
    for (const route of new Set([...this.times.keys(), ...this.errors.keys()])) {
      const times = this.times.get(route) ?? []
      out[route] = {
        count: times.length,
        errors: this.errors.get(route) ?? 0,
        p50: percentile(times, 50),
        p99: percentile(times, 99)
      }
    }
    this.times = new Map()
    this.errors = new Map()
    return out
  }
}
