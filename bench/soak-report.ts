/**
 * The soak bench's arithmetic and its verdict (bench/soak.ts): a minute's figures, the RSS
 * growth and slope from minute 5 to the end, each route's p99 early against late, and the
 * table. Pure: no clock, no process, so the verdict reads the same figures the table prints.
 *
 * Both comparisons read 3-minute windows, minutes 3-5 against the last 3, because single
 * minutes on a shared 2-core machine swing more than the thresholds (seen in 6-minute runs):
 * - RSS: the lowest VmRSS read (every second) in each window. Read at a random point of
 *   the garbage collector's cycle, the engine's RSS moved by up to 90 MB between minutes
 *   (305 to 556 MB), and right after a full collection by up to 100 MB (V8 gives the freed
 *   pages back later); the lowest read of three minutes is where the collections bring it
 *   back to, which is what a leak raises.
 * - p99: the median of the three minutes' p99s, so that one minute the machine stalled
 *   decides nothing.
 */

/** Nearest rank, as the rest of the bench reports percentiles; NaN for no values. */
export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

const known = (values: ReadonlyArray<number>) => values.filter((v) => !Number.isNaN(v))

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = known(values).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The lowest and the highest of the reads (NaN ones left out); NaN for none. */
export const floor = (values: ReadonlyArray<number>): number =>
  known(values).length === 0 ? Number.NaN : Math.min(...known(values))
export const peak = (values: ReadonlyArray<number>): number =>
  known(values).length === 0 ? Number.NaN : Math.max(...known(values))

/** Least-squares slope of y over x. */
export const slope = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  if (n < 2) return Number.NaN
  const mx = points.reduce((s, [x]) => s + x, 0) / n
  const my = points.reduce((s, [, y]) => s + y, 0) / n
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  return sxy / sxx
}

/** One route's requests that ended in one minute. */
export interface RouteMinute {
  readonly count: number
  readonly errors: number
  readonly p50: number
  readonly p99: number
}

/** One minute of the run (its row in the table). */
export interface Minute {
  /** 1-based: minute k covers the run's (k-1)th to kth minute. */
  readonly minute: number
  /** The engine's VmRSS read from /proc every second through the minute: the lowest read. */
  readonly rssBytes: number
  /** The highest read. */
  readonly rssPeakBytes: number
  /** Its heap used right after the last full collection it made by the minute's end
   * (soak-probe.mjs): about what it holds live; the previous minute's when it made none. */
  readonly heapUsedBytes: number
  /** Its heap as reserved at the same moment (used, free and fragmented). */
  readonly heapTotalBytes: number
  /** Full collections in the minute, and the longest one's pause. */
  readonly majorGcs: number
  readonly majorGcMaxMs: number
  /** The engine's own `pay_process_resident_memory_bytes` and `pay_process_heap_used_bytes`
   * (/metrics, every second), the minute's medians. */
  readonly metricsRssBytes: number
  readonly metricsHeapBytes: number
  /** The engine's CPU time over the minute, in % of one core. */
  readonly cpuPercent: number
  /** The engine's event-loop delay over the minute (bench/soak-probe.mjs), p99 and max. */
  readonly loopDelayP99Ms: number
  readonly loopDelayMaxMs: number
  /** This process's own event-loop delay p99 (the client's stalls land in every time). */
  readonly benchLoopDelayP99Ms: number
  /** The chain process's VmRSS at the minute's end (its EVM grows with every block). */
  readonly chainRssBytes: number
  /** The machine's 1-minute load average at the minute's end (2 cores, shared). */
  readonly load: number
  /** Requests the engine answered in the minute. */
  readonly requests: number
  readonly routes: Readonly<Record<string, RouteMinute>>
}

export interface Thresholds {
  /** RSS growth from minute 5 to the end that fails the run, in percent. */
  readonly rssGrowthPercent: number
  /** A judged route's late p99 over its early p99 that fails the run. */
  readonly p99Ratio: number
}

export const THRESHOLDS: Thresholds = { rssGrowthPercent: 10, p99Ratio: 2 }
/** The early window, ending at minute 5 (after start-up, JIT and caches). */
export const EARLY_MINUTES = [3, 4, 5] as const
const RSS_FROM_MINUTE = 5
/** The late window: the last 3 minutes. */
export const LATE_MINUTE_COUNT = 3
/** The fewest minutes a verdict can be drawn from (minute 5 and three after it). */
export const MIN_JUDGED_MINUTES = 6

export interface RouteJudgement {
  readonly route: string
  readonly earlyP99: number
  readonly lateP99: number
  readonly ratio: number
  /** A route shown beside the judged ones (the chain's time, the reference server). */
  readonly judged: boolean
  readonly failed: boolean
}

export interface Judgement {
  /** The lowest RSS read in minutes 3-5, and in the last 3 minutes. */
  readonly rssFromBytes: number
  readonly rssEndBytes: number
  readonly growthPercent: number
  /** MB a minute, least squares over each minute's lowest read, minute 5 to the end. */
  readonly slopeMbPerMinute: number
  readonly heapFromBytes: number
  readonly heapEndBytes: number
  readonly heapSlopeMbPerMinute: number
  readonly rssFailed: boolean
  readonly routes: ReadonlyArray<RouteJudgement>
}

const MB = 1024 * 1024

/** The verdict on `minutes` (at least MIN_JUDGED_MINUTES) for the `judged` routes; `shown`
 * ones get their ratio too, and never fail the run. */
export const judge = (
  minutes: ReadonlyArray<Minute>,
  judged: ReadonlyArray<string>,
  shown: ReadonlyArray<string>,
  thresholds: Thresholds = THRESHOLDS
): Judgement => {
  if (minutes.length < MIN_JUDGED_MINUTES) {
    throw new Error(`a verdict needs ${MIN_JUDGED_MINUTES} minutes, not ${minutes.length}`)
  }
  const early = minutes.filter((m) => (EARLY_MINUTES as ReadonlyArray<number>).includes(m.minute))
  const late = minutes.slice(-LATE_MINUTE_COUNT)
  const tail = minutes.slice(RSS_FROM_MINUTE - 1)
  const rssFromBytes = floor(early.map((m) => m.rssBytes))
  const rssEndBytes = floor(late.map((m) => m.rssBytes))
  const growthPercent = ((rssEndBytes - rssFromBytes) / rssFromBytes) * 100
  const p99s = (window: ReadonlyArray<Minute>, route: string) =>
    median(window.map((m) => m.routes[route]?.p99 ?? Number.NaN))
  const compare = (route: string, isJudged: boolean): RouteJudgement => {
    const earlyP99 = p99s(early, route)
    const lateP99 = p99s(late, route)
    const ratio = lateP99 / earlyP99
    // A judged route with no figure in either window fails: it stopped answering, or never did.
    return {
      route,
      earlyP99,
      lateP99,
      ratio,
      judged: isJudged,
      failed: isJudged && !(ratio < thresholds.p99Ratio)
    }
  }
  return {
    rssFromBytes,
    rssEndBytes,
    growthPercent,
    slopeMbPerMinute: slope(tail.map((m) => [m.minute, m.rssBytes / MB])),
    heapFromBytes: minutes[RSS_FROM_MINUTE - 1]!.heapUsedBytes,
    heapEndBytes: minutes.at(-1)!.heapUsedBytes,
    heapSlopeMbPerMinute: slope(tail.map((m) => [m.minute, m.heapUsedBytes / MB])),
    rssFailed: !(growthPercent <= thresholds.rssGrowthPercent),
    routes: [...judged.map((r) => compare(r, true)), ...shown.map((r) => compare(r, false))]
  }
}

const mb = (bytes: number) => (Number.isNaN(bytes) ? "-" : (bytes / MB).toFixed(1))
const ms = (value: number) =>
  Number.isNaN(value) ? "-" : value >= 100 ? value.toFixed(0) : value.toFixed(1)

/** What the table's resource columns are, printed above it. */
export const COLUMNS = [
  "rss, peak   the engine's VmRSS (MB) read from /proc every second: the minute's lowest read",
  "            (judged over 3-minute windows) and its highest",
  "heap, htot  its heap used and reserved (MB) right after the last full collection it made by",
  "            the minute's end; gcs: its full collections in the minute, gc ms: the longest pause",
  "m.rss, m.heap  the engine's own /metrics gauges, read every second: medians (MB)",
  "cpu %       the engine's CPU time over the minute, in % of one core",
  "eld99, eldmax  the engine's event-loop delay over the minute (ms; a bench preload)",
  "bench       this process's event-loop delay p99 (ms)    chain  the chain process's VmRSS (MB)",
  "load        1-minute load average (2 cores, shared)    reqs   the engine's answers in the minute"
]

/** Each column: its header, its width, and how a minute fills it. */
const RESOURCE_COLUMNS: ReadonlyArray<readonly [string, number, (m: Minute) => string]> = [
  ["min", 3, (m) => String(m.minute)],
  ["rss", 6, (m) => mb(m.rssBytes)],
  ["peak", 6, (m) => mb(m.rssPeakBytes)],
  ["heap", 6, (m) => mb(m.heapUsedBytes)],
  ["htot", 6, (m) => mb(m.heapTotalBytes)],
  ["gcs", 3, (m) => String(m.majorGcs)],
  ["gc ms", 5, (m) => (m.majorGcs === 0 ? "-" : m.majorGcMaxMs.toFixed(0))],
  ["m.rss", 6, (m) => mb(m.metricsRssBytes)],
  ["m.heap", 6, (m) => mb(m.metricsHeapBytes)],
  ["cpu %", 5, (m) => m.cpuPercent.toFixed(0)],
  ["eld99", 5, (m) => ms(m.loopDelayP99Ms)],
  ["eldmax", 6, (m) => ms(m.loopDelayMaxMs)],
  ["bench", 5, (m) => ms(m.benchLoopDelayP99Ms)],
  ["chain", 6, (m) => mb(m.chainRssBytes)],
  ["load", 5, (m) => m.load.toFixed(2)],
  ["reqs", 5, (m) => String(m.requests)]
]

const width = (route: string) => Math.max(6, route.length)

/** The table's header: the resource columns, then each route's p99 (ms) by its short name. */
export const tableHeader = (routes: ReadonlyArray<string>): string =>
  [
    ...RESOURCE_COLUMNS.map(([name, w]) => name.padStart(w)),
    ...routes.map((r) => r.padStart(width(r)))
  ].join(" ")

export const tableRow = (m: Minute, routes: ReadonlyArray<string>): string =>
  [
    ...RESOURCE_COLUMNS.map(([, w, fill]) => fill(m).padStart(w)),
    ...routes.map((r) => {
      const figure = m.routes[r]
      const errors = figure !== undefined && figure.errors > 0 ? `!${figure.errors}` : ""
      const p99 = figure === undefined || figure.count === 0 ? "-" : ms(figure.p99)
      return `${p99}${errors}`.padStart(width(r))
    })
  ].join(" ")

/** The verdict's lines: RSS, heap, each route early against late. */
export const formatJudgement = (j: Judgement, thresholds: Thresholds = THRESHOLDS) => [
  `RSS (the lowest read of minutes ${EARLY_MINUTES.join("-")} against the lowest of the last ` +
    `${LATE_MINUTE_COUNT}): ${mb(j.rssFromBytes)} MB -> ${mb(j.rssEndBytes)} MB, ` +
    `${j.growthPercent >= 0 ? "+" : ""}${j.growthPercent.toFixed(1)} % (limit +${thresholds.rssGrowthPercent} %); ` +
    `slope ${j.slopeMbPerMinute.toFixed(2)} MB/min (least squares over each minute's lowest, ` +
    `minute ${RSS_FROM_MINUTE} to the end)${j.rssFailed ? "  <- FAIL" : ""}`,
  `heap used after full collections: ${mb(j.heapFromBytes)} MB at minute ${RSS_FROM_MINUTE}, ` +
    `${mb(j.heapEndBytes)} MB at the end; slope ${j.heapSlopeMbPerMinute.toFixed(2)} MB/min (not judged)`,
  `p99 (ms), the median of minutes ${EARLY_MINUTES.join("-")} against the median of the last ` +
    `${LATE_MINUTE_COUNT} minutes (fails at ${thresholds.p99Ratio}x):`,
  ...j.routes.map(
    (r) =>
      `  ${r.route.padEnd(8)} ${ms(r.earlyP99).padStart(7)} -> ${ms(r.lateP99).padStart(7)}  ` +
      `x${Number.isNaN(r.ratio) ? "-" : r.ratio.toFixed(2)}` +
      (r.failed ? "  <- FAIL" : r.judged ? "" : "  (not judged)")
  )
]
