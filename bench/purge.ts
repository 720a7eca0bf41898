/**
 * `npm run bench:purge [-- sqlite|postgres] [--quick]`: what the background purge
 * (core retention/Purge.ts) costs the status read while it deletes a large backlog.
 *
 * For each store (a SQLite file the server opens with its own durability settings: WAL,
 * synchronous = FULL; a fresh schema on the PostgreSQL server the tests use), it seeds
 * 20,000 payments through the store ports (bench/list.ts's data set: the status reads'
 * targets), then, in each of BENCH_PURGE_RUNS runs:
 *   - writes BENCH_PURGE_ROWS rows (default 1,000,000) past every retention straight into
 *     the tables with SQL (bulk inserts are the point here, not the engine's write path):
 *     30% events, 10% finished webhook deliveries with 20% their attempts (two each), 20%
 *     finished idempotency records, 20% expired options no payment was paid with; and the
 *     purge's lease, held by the bench, so the server cannot start the purge yet;
 *   - starts the standalone server (its esbuild bundle, as `npm start` runs it) with
 *     PAY_PURGE_INTERVAL_SECONDS=1, so it asks for the lease every second;
 *   - idle: STATUS_RATE status reads a second (`GET /v1/payments/{id}/status`, open loop:
 *     each sent on its schedule whatever the earlier ones are doing), each answer checked;
 *   - purge: lets go of the lease (the server takes it within a second and purges), and sends
 *     the same status reads at the same rate until `pay_purged_rows_total` on /metrics has
 *     counted every seeded row. The purge runs in WINDOW_MS windows with idle windows between
 *     them (the bench takes the lease back: the server's pass stops at its next batch): on a
 *     machine shared with other work, the purge's cost is what its windows have over the idle
 *     windows beside them, under the same outside load, not over an idle phase minutes before.
 * /metrics is read every METRICS_EVERY_MS in both phases (the purge's progress; the same
 * cost idle). Printed per run: the status read's p50/p95/p99/max in the idle phase, the idle
 * windows and the purge's windows, the p99 ratios, the time spent purging and rows/s, the
 * machine's load average; on PostgreSQL also the sequential scans of the purged tables during
 * the purge (0: every batch was a range of an index). Target (issue 40): p99 in the purge's
 * windows within 2× the idle windows', in every run.
 *
 * Bounded: fixed counts, a cap per phase, a deadline for the run; stops its server and drops
 * its schema whatever happens. `--quick` (or BENCH_PURGE_QUICK=1): 100,000 rows, 2 runs.
 * BENCH_PURGE_READ_WORKER=0 (a diagnosis, not the default server): the SQLite server without
 * its read worker (PAY_SQLITE_READ_WORKER=0, as on Bun), so the purge runs on its thread.
 */
import { loadavg } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { SqlClient } from "@effect/sql"
import type { MerchantId, PartnerId } from "@pay/core"
import * as PgStorage from "@pay/storage-postgres"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect } from "effect"
import { BENCH_API_KEY, statusPath } from "./client.js"
import {
  createMerchants,
  type Dataset,
  MERCHANTS,
  makeDataset,
  percentile,
  seedPostgres,
  seedSqlite,
  startEngine
} from "./list.js"
import { type BenchPostgres, startPostgres } from "./postgres.js"
import {
  describeMachine,
  ROOT,
  runBenchAlone,
  type ServerProcess,
  startServer
} from "./server-process.js"

export type PurgeStore = "sqlite" | "postgres"

/** Status reads a second in both phases: a busy merchant's polling. */
const STATUS_RATE = 50
/** The idle phase: 30 s of status reads. */
const IDLE_READS = 1_500
const WARMUP_READS = 100
/** How often /metrics is read for the purge's progress (in both phases). */
const METRICS_EVERY_MS = 250
/** The payments whose status is read (bench/list.ts's data set, seeded through the ports). */
const PAYMENTS = 20_000
/** The purge phase stops sending past this, done or not. */
const PURGE_CAP_MS = 40 * 60_000
/**
 * While the backlog is purged, the purge runs in windows of this length with windows of no
 * purge between them (the bench takes the lease back), the same status reads throughout: on
 * a machine shared with other work, what the purge costs is what its windows have over the
 * idle windows beside them, under the same outside load.
 */
const WINDOW_MS = 10_000
/** Reads sent this soon after a switch count for neither kind of window (the purge starts
 * within a second of its lease's release, and stops within a batch of losing it). */
const SETTLE_MS = 2_000
const REQUEST_TIMEOUT_MS = 30_000
const DAY = 86_400_000
/** The diagnosis without SQLite's read worker: the purge on the server's own thread. */
const READ_WORKER_OFF = process.env.BENCH_PURGE_READ_WORKER === "0"
/** Target (issue 40): the status p99 while the purge runs, within this multiple of idle's. */
export const TARGET_RATIO = 2

export interface PurgeSettings {
  readonly stores: ReadonlyArray<PurgeStore>
  readonly rows: number
  readonly runs: number
  readonly quick: boolean
  readonly deadlineMs: number
}

const whole = (name: string, fallback: number, min: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be at least ${min}`)
  return value
}

export const purgeSettings = (argv: ReadonlyArray<string> = []): PurgeSettings => {
  const quick = argv.includes("--quick") || process.env.BENCH_PURGE_QUICK === "1"
  const which = argv.find((a) => a === "sqlite" || a === "postgres") as PurgeStore | undefined
  const rows = whole("BENCH_PURGE_ROWS", quick ? 100_000 : 1_000_000, 1_000)
  const runs = whole("BENCH_PURGE_RUNS", quick ? 2 : 3, 1)
  const stores: ReadonlyArray<PurgeStore> = which === undefined ? ["sqlite", "postgres"] : [which]
  // Seeding the payments, then per run: the rows (about 50,000/s), idle reads, the purge.
  const perRun = (rows / 1_000_000) * 120_000 + (IDLE_READS / STATUS_RATE) * 1000 + PURGE_CAP_MS
  return { stores, rows, runs, quick, deadlineMs: stores.length * (120_000 + runs * perRun) }
}

export interface Latency {
  readonly n: number
  readonly p50Ms: number
  readonly p95Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

const latency = (samples: ReadonlyArray<number>): Latency => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN
  }
}

/** How many old rows of each table one run writes. */
export const rowPlan = (rows: number) => {
  const events = Math.round(rows * 0.3)
  const deliveries = Math.round(rows * 0.1)
  const attempts = 2 * deliveries
  const keys = Math.round(rows * 0.2)
  const options = rows - events - deliveries - attempts - keys
  return { events, deliveries, attempts, keys, options }
}
type RowPlan = ReturnType<typeof rowPlan>

export interface PurgeRun {
  readonly seeded: RowPlan & { readonly seconds: number }
  /** The machine's 1-minute load average as each phase ended (other work on a shared machine). */
  readonly loadAverage: { readonly idle: number; readonly purge: number }
  /** The idle phase before the purge. */
  readonly idle: Latency & { readonly failed: number }
  /** The idle windows between the purge's. */
  readonly idleWindows: Latency & { readonly failed: number }
  /** The purge's windows. */
  readonly purge: Latency & { readonly failed: number }
  readonly windows: number
  /** Time in the purge's windows, until every row was counted. */
  readonly purgeSeconds: number
  /** From the first release of the lease to the last row counted, idle windows included. */
  readonly wallSeconds: number
  readonly purgedRows: number
  readonly purgedByTable: Readonly<Record<string, number>>
  /** PostgreSQL: sequential scans of the purged tables while the purge ran. */
  readonly seqScans?: Readonly<Record<string, number>>
}

export interface PurgeStoreResult {
  readonly store: PurgeStore
  readonly runs: ReadonlyArray<PurgeRun>
  readonly met: boolean
}

export interface PurgeResult {
  readonly machine: {
    readonly cpu: string
    readonly cores: number
    readonly node: string
    readonly loadAverageAtStart: number
  }
  readonly settings: Omit<PurgeSettings, "deadlineMs" | "stores"> & {
    readonly statusPerSecond: number
    readonly idleReads: number
    readonly payments: number
    readonly sqliteReadWorker: boolean
  }
  readonly postgres?: BenchPostgres["server"]
  readonly stores: ReadonlyArray<PurgeStoreResult>
}

// --- Seeding the old rows with SQL

/** Older than every default retention (events 90 days, deliveries 30, keys 7, options 1). */
const OLD_MS = 400 * DAY
/** The lease the bench holds until it lets the server purge: far in the future. */
const HELD_UNTIL = Date.UTC(2100, 0, 1)
/** Payloads of a realistic size: an event's snapshot, a stored idempotent answer. */
const EVENT_DATA = JSON.stringify({
  id: "pay_0000000000000000000000",
  status: "succeeded",
  amount: { unit: "iso4217/USD", value: "1050" },
  tokenAmount: { asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
  merchantId: "mrch_00000000000000000000",
  referenceId: "ORDER-000000",
  createdAt: "2026-01-01T00:00:00.000Z",
  padding: "x".repeat(120)
})
const KEY_BODY = JSON.stringify({ payment: JSON.parse(EVENT_DATA), padding: "y".repeat(200) })
const FINGERPRINT = "ab".repeat(32)
const BUYER = "eip155:8453:0x00000000000000000000000000000000000000b0"
const USDC = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const pad = (i: number, width = 16) => String(i).padStart(width, "0")

/** SQLite: one transaction per table, prepared statements (times in ms, as the stores keep them). */
const seedOldSqlite = (
  filename: string,
  plan: RowPlan,
  run: number,
  partnerId: string,
  paymentIds: ReadonlyArray<string>,
  now: number
) => {
  const db = SqliteStorage.openConnection(filename)
  const old = now - OLD_MS
  const id = (prefix: string, i: number) => `${prefix}_r${run}_${pad(i)}`
  try {
    const event = db.prepare(`INSERT INTO events (id, partner_id, type, payment_id, merchant_id,
      data, created_at) VALUES (?, ?, 'payment.succeeded', NULL, NULL, ?, ?)`)
    db.transaction(() => {
      for (let i = 0; i < plan.events; i++) event.run(id("evt", i), partnerId, EVENT_DATA, old + i)
    })
    const delivery = db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq,
      payment_id, state, attempts, next_attempt_at, created_at)
      VALUES (?, ?, ?, NULL, 'delivered', 2, ?, ?)`)
    const attempt = db.prepare(`INSERT INTO webhook_attempts (endpoint_id, event_id, attempted_at,
      duration_ms, response_status, response_body, error) VALUES (?, ?, ?, 40, 200, 'ok', NULL)`)
    db.transaction(() => {
      for (let i = 0; i < plan.deliveries; i++) {
        const endpoint = `whep_bench_${i % 10}`
        delivery.run(endpoint, id("evt", i), i, old + i, old + i)
        attempt.run(endpoint, id("evt", i), old + i)
        attempt.run(endpoint, id("evt", i), old + i + 1)
      }
    })
    const key = db.prepare(`INSERT INTO idempotency_keys (partner_id, route, key, fingerprint,
      claim_token, locked_at, created_at, response_status, response_body)
      VALUES (?, 'POST /v1/payments', ?, ?, 'bench', ?, ?, 201, ?)`)
    db.transaction(() => {
      for (let i = 0; i < plan.keys; i++) {
        key.run(partnerId, id("key", i), FINGERPRINT, old + i, old + i, KEY_BODY)
      }
    })
    const option = db.prepare(`INSERT INTO payment_options (id, payment_id, account, asset, value,
      auth_from, auth_to, valid_after, valid_before, nonce, expires_at, quoted, collect_data,
      created_at) VALUES (?, ?, ?, ?, '10500000', ?, ?, '0', ?, ?, ?, 1, 0, ?)`)
    db.transaction(() => {
      for (let i = 0; i < plan.options; i++) {
        option.run(
          `opt_${run}${pad(i, 19)}`,
          paymentIds[i % paymentIds.length]!,
          BUYER,
          USDC,
          "0x00000000000000000000000000000000000000b0",
          "0x00000000000000000000000000000000000000c0",
          String(Math.floor((old + i) / 1000)),
          `0x${pad(i, 64)}`,
          old + i,
          old + i - 120_000
        )
      }
    })
    db.prepare(`INSERT INTO leases (name, holder, held_until) VALUES ('purge', 'bench', ?)
      ON CONFLICT (name) DO UPDATE SET holder = 'bench', held_until = excluded.held_until`).run(
      HELD_UNTIL
    )
  } finally {
    db.close()
  }
}

const sqliteIds = (filename: string) => {
  const db = SqliteStorage.openConnection(filename)
  try {
    const partner = db.prepare("SELECT id FROM partners LIMIT 1").get() as { id: string }
    // Payments never `processing`: their expired options are the purge's to delete.
    const payments = db
      .prepare("SELECT id FROM payments WHERE status <> 'processing' LIMIT 1000")
      .all() as Array<{ id: string }>
    return { partnerId: partner.id, paymentIds: payments.map((p) => p.id) }
  } finally {
    db.close()
  }
}

const releaseSqlite = (filename: string) => {
  const db = SqliteStorage.openConnection(filename)
  try {
    db.prepare("UPDATE leases SET held_until = 0 WHERE name = 'purge' AND holder = 'bench'").run()
  } finally {
    db.close()
  }
}

/** The bench takes the purge's lease back (the server's pass stops at its next extension). */
const holdSqlite = (filename: string) => {
  const db = SqliteStorage.openConnection(filename)
  try {
    db.prepare("UPDATE leases SET holder = 'bench', held_until = ? WHERE name = 'purge'").run(
      HELD_UNTIL
    )
  } finally {
    db.close()
  }
}

/** PostgreSQL: an `INSERT … SELECT … FROM generate_series` per table, on the server. */
const onPostgres = <A>(
  url: string,
  body: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>
) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, body).pipe(
      Effect.provide(PgStorage.clientLayer({ url, maxConnections: 1 })),
      Effect.scoped
    )
  )

const seedOldPostgres = (url: string, plan: RowPlan, run: number, now: number) =>
  onPostgres(url, (sql) =>
    Effect.gen(function* () {
      const old = new Date(now - OLD_MS).toISOString()
      const at = (i: string) => `$1::timestamptz + (${i}) * interval '1 millisecond'`
      const id = (prefix: string, i: string) =>
        `'${prefix}_r${run}_' || lpad((${i})::text, 16, '0')`
      const [partner] = yield* sql<{ readonly id: string }>`SELECT id FROM partners LIMIT 1`
      yield* sql.unsafe(
        `INSERT INTO events (id, partner_id, type, payment_id, merchant_id, data, created_at)
        SELECT ${id("evt", "i")}, $2, 'payment.succeeded', NULL, NULL, $3, ${at("i")}
        FROM generate_series(0, $4::int - 1) i`,
        [old, partner!.id, EVENT_DATA, plan.events]
      )
      yield* sql.unsafe(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, payment_id, state,
          attempts, next_attempt_at, created_at)
        SELECT 'whep_bench_' || (i % 10), ${id("evt", "i")}, i, NULL, 'delivered', 2, ${at("i")},
          ${at("i")}
        FROM generate_series(0, $2::int - 1) i`,
        [old, plan.deliveries]
      )
      yield* sql.unsafe(
        `INSERT INTO webhook_attempts (endpoint_id, event_id, attempted_at, duration_ms,
          response_status, response_body, error)
        SELECT 'whep_bench_' || ((i / 2) % 10), ${id("evt", "i / 2")}, ${at("i")}, 40, 200, 'ok',
          NULL
        FROM generate_series(0, $2::int - 1) i`,
        [old, plan.attempts]
      )
      yield* sql.unsafe(
        `INSERT INTO idempotency_keys (partner_id, route, key, fingerprint, claim_token,
          locked_at, created_at, response_status, response_body)
        SELECT $2, 'POST /v1/payments', ${id("key", "i")}, $3, 'bench', ${at("i")}, ${at("i")},
          201, $4
        FROM generate_series(0, $5::int - 1) i`,
        [old, partner!.id, FINGERPRINT, KEY_BODY, plan.keys]
      )
      yield* sql.unsafe(
        `WITH p AS (
          SELECT array_agg(id) AS ids FROM (
            SELECT id FROM payments WHERE status <> 'processing' LIMIT 1000) x
        )
        INSERT INTO payment_options (id, payment_id, account, asset, value, auth_from, auth_to,
          valid_after, valid_before, nonce, expires_at, quoted, collect_data, created_at)
        SELECT 'opt_${run}' || lpad(i::text, 19, '0'), p.ids[1 + i % cardinality(p.ids)], $2, $3,
          10500000, '0x00000000000000000000000000000000000000b0',
          '0x00000000000000000000000000000000000000c0', 0, 1700000000 + i,
          '0x' || lpad(i::text, 64, '0'), ${at("i")}, true, false, ${at("i")}
        FROM p, generate_series(0, $4::int - 1) i`,
        [old, BUYER, USDC, plan.options]
      )
      yield* sql`INSERT INTO leases (name, holder, held_until)
        VALUES ('purge', 'bench', ${new Date(HELD_UNTIL)})
        ON CONFLICT (name) DO UPDATE SET holder = 'bench', held_until = excluded.held_until`
      // What autovacuum does to tables that grew this much: planner statistics.
      for (const table of [
        "events",
        "webhook_deliveries",
        "webhook_attempts",
        "idempotency_keys",
        "payment_options"
      ]) {
        yield* sql.unsafe(`VACUUM ANALYZE ${table}`)
      }
    })
  )

const PURGED_TABLES = [
  "events",
  "webhook_deliveries",
  "webhook_attempts",
  "idempotency_keys",
  "payment_options"
]

const seqScansPostgres = (url: string) =>
  onPostgres(url, (sql) =>
    Effect.map(
      sql.unsafe<{ readonly relname: string; readonly seq_scan: string }>(
        `SELECT relname, seq_scan FROM pg_stat_user_tables
        WHERE schemaname = current_schema() AND relname = ANY($1)`,
        [PURGED_TABLES]
      ),
      (rows) => Object.fromEntries(rows.map((r) => [r.relname, Number(r.seq_scan)]))
    )
  )

const holdPostgres = (url: string) =>
  onPostgres(url, (sql) =>
    Effect.asVoid(sql`UPDATE leases SET holder = 'bench', held_until = ${new Date(HELD_UNTIL)}
      WHERE name = 'purge'`)
  )

const releasePostgres = (url: string) =>
  onPostgres(url, (sql) =>
    Effect.asVoid(sql`UPDATE leases SET held_until = to_timestamp(0)
      WHERE name = 'purge' AND holder = 'bench'`)
  )

// --- HTTP

const headers = { "Api-Key": BENCH_API_KEY }

interface StatusTarget {
  readonly id: string
  readonly merchantId: MerchantId
  readonly status: string
}

/** Payments spread over the data set, each with the status it was seeded with. */
const statusTargets = (data: Dataset, merchants: ReadonlyArray<MerchantId>, count: number) =>
  Array.from({ length: count }, (_, i): StatusTarget => {
    const k = Math.floor(((i * 0.618_033_988_75) % 1) * data.count)
    const seeded = data.payment(k, "" as PartnerId, merchants)
    return {
      id: seeded.payment.id,
      merchantId: seeded.payment.merchantId,
      status: seeded.succeedAt === undefined ? seeded.payment.status : "succeeded"
    }
  })

/** The purge's counter on /metrics, by table. */
const purgedSoFar = async (url: string): Promise<Record<string, number>> => {
  const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })
  const text = await response.text()
  const found: Record<string, number> = {}
  for (const match of text.matchAll(/^pay_purged_rows_total\{table="([a-z_]+)"\} (\d+)/gm)) {
    found[match[1]!] = Number(match[2])
  }
  return found
}
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0)

/**
 * Status reads at STATUS_RATE (open loop) until `count` are sent or `stop()` says so, while
 * /metrics is read every METRICS_EVERY_MS; the latencies, failures, and the counter's readings.
 */
const statusPhase = async (
  url: string,
  targets: ReadonlyArray<StatusTarget>,
  options: { readonly count: number; readonly capMs: number; readonly offset: number },
  stop: (purged: Record<string, number>) => boolean = () => false
) => {
  const samples: Array<number> = []
  let failed = 0
  let done = false
  const readings: Array<{ readonly at: number; readonly purged: Record<string, number> }> = []
  const poller = (async () => {
    while (!done) {
      try {
        const purged = await purgedSoFar(url)
        readings.push({ at: performance.now(), purged })
        if (stop(purged)) done = true
      } catch (error) {
        console.error(`    /metrics failed: ${String(error)}`)
      }
      if (!done) await sleep(METRICS_EVERY_MS)
    }
  })()
  const started = performance.now()
  const pending: Array<Promise<void>> = []
  for (let i = 0; i < options.count && !done; i++) {
    const due = started + (i * 1000) / STATUS_RATE
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    if (performance.now() - started > options.capMs) break
    const target = targets[(options.offset + i) % targets.length]!
    pending.push(
      (async () => {
        const sent = performance.now()
        try {
          const response = await fetch(`${url}${statusPath(target.id)}`, {
            headers: { ...headers, "Merchant-Id": target.merchantId },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
          })
          const text = await response.text()
          const ms = performance.now() - sent
          const body = JSON.parse(text) as { status?: string }
          if (response.status !== 200 || body.status !== target.status) {
            throw new Error(`status of ${target.id}: ${response.status} ${text}`)
          }
          samples.push(ms)
        } catch (error) {
          failed++
          if (failed <= 3) console.error(`    status read failed: ${String(error)}`)
        }
      })()
    )
  }
  done = true
  await Promise.all([...pending, poller])
  return { latency: { ...latency(samples), failed }, readings }
}

type WindowKind = "idle" | "purge"

/**
 * Status reads at STATUS_RATE (open loop) while the purge runs in WINDOW_MS windows with idle
 * windows between them, until /metrics has counted `rows`; each read counted for the window
 * it was sent in (none in the SETTLE_MS after a switch).
 */
const interleavedPhase = async (
  url: string,
  targets: ReadonlyArray<StatusTarget>,
  rows: number,
  lease: { readonly release: () => Promise<void>; readonly hold: () => Promise<void> }
) => {
  const samples: Record<WindowKind, Array<number>> = { idle: [], purge: [] }
  const failed: Record<WindowKind, number> = { idle: 0, purge: 0 }
  let kind: WindowKind = "purge"
  let switchedAt = performance.now()
  let done = false
  let doneAt = 0
  let purging = 0
  let windows = 1
  let last: Record<string, number> = {}
  const started = performance.now()
  await lease.release()
  switchedAt = performance.now()
  const poller = (async () => {
    while (!done) {
      try {
        last = await purgedSoFar(url)
        if (sum(last) >= rows) {
          done = true
          doneAt = performance.now()
        }
      } catch (error) {
        console.error(`    /metrics failed: ${String(error)}`)
      }
      if (!done) await sleep(METRICS_EVERY_MS)
    }
  })()
  const switcher = (async () => {
    while (!done) {
      // In short sleeps, so the end of the purge ends the window at once.
      while (!done && performance.now() < switchedAt + WINDOW_MS) await sleep(50)
      if (done) break
      const now = performance.now()
      if (kind === "purge") {
        purging += now - switchedAt
        await lease.hold()
        kind = "idle"
      } else {
        await lease.release()
        kind = "purge"
        windows++
      }
      switchedAt = performance.now()
    }
    if (kind === "purge") purging += (doneAt || performance.now()) - switchedAt
  })()
  const pending: Array<Promise<void>> = []
  for (let i = 0; !done; i++) {
    const due = started + (i * 1000) / STATUS_RATE
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    if (performance.now() - started > PURGE_CAP_MS) break
    const counted: WindowKind | undefined =
      performance.now() - switchedAt < SETTLE_MS ? undefined : kind
    const target = targets[i % targets.length]!
    pending.push(
      (async () => {
        const sent = performance.now()
        try {
          const response = await fetch(`${url}${statusPath(target.id)}`, {
            headers: { ...headers, "Merchant-Id": target.merchantId },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
          })
          const text = await response.text()
          const ms = performance.now() - sent
          const body = JSON.parse(text) as { status?: string }
          if (response.status !== 200 || body.status !== target.status) {
            throw new Error(`status of ${target.id}: ${response.status} ${text}`)
          }
          if (counted !== undefined) samples[counted].push(ms)
        } catch (error) {
          if (counted !== undefined) failed[counted]++
          console.error(`    status read failed: ${String(error)}`)
        }
      })()
    )
  }
  done = true
  await Promise.all([...pending, poller, switcher])
  return {
    idle: { ...latency(samples.idle), failed: failed.idle },
    purge: { ...latency(samples.purge), failed: failed.purge },
    purged: last,
    windows,
    purgeSeconds: purging / 1000,
    wallSeconds: ((doneAt || performance.now()) - started) / 1000
  }
}

const startPurgingEngine = (database: string) =>
  startServer({
    name: "engine",
    command: process.execPath,
    args: ["--enable-source-maps", "examples/standalone/dist/main.mjs"],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: database,
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
      PAY_PURGE_INTERVAL_SECONDS: "1",
      ...(READ_WORKER_OFF ? { PAY_SQLITE_READ_WORKER: "0" } : {})
    },
    startTimeoutMs: 120_000
  })

const measureStore = async (
  store: PurgeStore,
  settings: PurgeSettings,
  dir: string,
  postgres: () => Promise<BenchPostgres>
): Promise<PurgeStoreResult> => {
  const now = Date.now()
  const database = store === "sqlite" ? join(dir, "purge.sqlite") : (await postgres()).urls.purge!
  let server: ServerProcess | undefined
  try {
    // The first start migrates the empty database and makes the partner with the bench key.
    server = await startEngine(database)
    const merchants = await createMerchants(server.url, MERCHANTS)
    await server.stop()
    server = undefined
    console.log(`  ${store}: seeding ${PAYMENTS.toLocaleString("en-US")} payments (ports)…`)
    const data = makeDataset(PAYMENTS, now)
    await Effect.runPromise<unknown, unknown>(
      store === "sqlite"
        ? seedSqlite(database, data, merchants)
        : seedPostgres(database, data, merchants)
    )
    const targets = statusTargets(data, merchants, 2_000)
    const plan = rowPlan(settings.rows)
    const runs: Array<PurgeRun> = []
    for (let run = 1; run <= settings.runs; run++) {
      const label = `  ${store} run ${run}/${settings.runs}`
      console.log(`${label}: writing ${settings.rows.toLocaleString("en-US")} old rows (SQL)…`)
      const seedStarted = performance.now()
      if (store === "sqlite") {
        const { partnerId, paymentIds } = sqliteIds(database)
        seedOldSqlite(database, plan, run, partnerId, paymentIds, Date.now())
      } else {
        await seedOldPostgres(database, plan, run, Date.now())
      }
      const seedSeconds = (performance.now() - seedStarted) / 1000
      server = await startPurgingEngine(database)
      const url = server.url
      await statusPhase(url, targets, { count: WARMUP_READS, capMs: 60_000, offset: 500 })
      console.log(`${label}: idle, ${IDLE_READS} status reads at ${STATUS_RATE}/s…`)
      const idle = await statusPhase(url, targets, {
        count: IDLE_READS,
        capMs: 120_000,
        offset: 0
      })
      const idleLoad = loadavg()[0] ?? 0
      if (sum(idle.readings.at(-1)?.purged ?? {}) !== 0) {
        throw new Error("the purge ran before the bench let go of its lease")
      }
      const scansBefore = store === "postgres" ? await seqScansPostgres(database) : undefined
      console.log(
        `${label}: purging in ${WINDOW_MS / 1000} s windows between idle ones, the same ` +
          "status reads until every row is counted…"
      )
      const purge = await interleavedPhase(url, targets, settings.rows, {
        release: () =>
          store === "sqlite" ? Promise.resolve(releaseSqlite(database)) : releasePostgres(database),
        hold: () =>
          store === "sqlite" ? Promise.resolve(holdSqlite(database)) : holdPostgres(database)
      })
      const purgeLoad = loadavg()[0] ?? 0
      const scansAfter = store === "postgres" ? await seqScansPostgres(database) : undefined
      if (sum(purge.purged) < settings.rows) {
        throw new Error(`the purge counted ${sum(purge.purged)} of ${settings.rows} rows in time`)
      }
      await server.stop()
      server = undefined
      runs.push({
        seeded: { ...plan, seconds: seedSeconds },
        loadAverage: { idle: idleLoad, purge: purgeLoad },
        idle: idle.latency,
        idleWindows: purge.idle,
        purge: purge.purge,
        windows: purge.windows,
        purgeSeconds: purge.purgeSeconds,
        wallSeconds: purge.wallSeconds,
        purgedRows: sum(purge.purged),
        purgedByTable: purge.purged,
        ...(scansBefore === undefined || scansAfter === undefined
          ? {}
          : {
              seqScans: Object.fromEntries(
                PURGED_TABLES.map((t) => [t, (scansAfter[t] ?? 0) - (scansBefore[t] ?? 0)])
              )
            })
      })
      const r = runs.at(-1)!
      console.log(
        `${label}: p99 ${r.idle.p99Ms.toFixed(2)} ms idle before, ` +
          `${r.idleWindows.p99Ms.toFixed(2)} ms in the idle windows, ` +
          `${r.purge.p99Ms.toFixed(2)} ms purging (×${(r.purge.p99Ms / r.idleWindows.p99Ms).toFixed(2)}); ` +
          `${r.purgedRows.toLocaleString("en-US")} rows in ${r.purgeSeconds.toFixed(1)} s of purging`
      )
    }
    const met = runs.every(
      (r) =>
        r.idleWindows.failed === 0 &&
        r.purge.failed === 0 &&
        r.purge.p99Ms <= TARGET_RATIO * r.idleWindows.p99Ms
    )
    return { store, runs, met }
  } finally {
    await server?.stop()
  }
}

export const measurePurge = async (dir: string, settings: PurgeSettings): Promise<PurgeResult> => {
  const { execFileSync } = await import("node:child_process")
  execFileSync(process.execPath, ["examples/build.mjs", "main"], { cwd: ROOT, stdio: "inherit" })
  const machine = describeMachine()
  let postgres: Promise<BenchPostgres> | undefined
  const stores: Array<PurgeStoreResult> = []
  try {
    for (const store of settings.stores) {
      stores.push(
        await measureStore(store, settings, dir, () => {
          postgres ??= startPostgres(["purge"])
          return postgres
        })
      )
    }
    const pg = await postgres
    return {
      machine,
      settings: {
        rows: settings.rows,
        runs: settings.runs,
        quick: settings.quick,
        statusPerSecond: STATUS_RATE,
        idleReads: IDLE_READS,
        payments: PAYMENTS,
        sqliteReadWorker: !READ_WORKER_OFF
      },
      ...(pg === undefined ? {} : { postgres: pg.server }),
      stores
    }
  } finally {
    await postgres?.then(
      (pg) => pg.close(),
      () => undefined
    )
  }
}

export const formatPurge = (result: PurgeResult): ReadonlyArray<string> => {
  const n = (x: number, digits = 1) =>
    Number.isNaN(x)
      ? "-"
      : x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const range = (values: ReadonlyArray<number>, digits = 1) => {
    const low = n(Math.min(...values), digits)
    const high = n(Math.max(...values), digits)
    return low === high ? low : `${low}–${high}`
  }
  const s = result.settings
  const plan = rowPlan(s.rows)
  const lines = [
    "",
    `Purge under load: GET /v1/payments/{id}/status at ${s.statusPerSecond}/s (open loop), ` +
      `idle (${s.idleReads} reads), then in ${WINDOW_MS / 1000} s windows of purge and of ` +
      `none in turn while the purge deletes ${n(s.rows, 0)} old rows ` +
      `(${n(plan.events, 0)} events, ${n(plan.deliveries, 0)} webhook deliveries and ` +
      `${n(plan.attempts, 0)} attempts, ${n(plan.keys, 0)} idempotency records, ` +
      `${n(plan.options, 0)} options), until all are counted; ${s.runs} runs, ` +
      `${n(s.payments, 0)} payments read`,
    `  machine: ${result.machine.cpu}, ${result.machine.cores} cores, Node ${result.machine.node}, ` +
      `load average ${n(result.machine.loadAverageAtStart, 2)} at start`,
    ...(result.postgres === undefined
      ? []
      : [
          `  PostgreSQL ${result.postgres.version} (synchronous_commit ${result.postgres.synchronousCommit}, fsync ${result.postgres.fsync})`
        ]),
    "  baseline: the same server's status reads at the same rate in the idle windows between " +
      "the purge's (and, for reference, in an idle phase just before)",
    ...(s.sqliteReadWorker
      ? []
      : [
          "  SQLite without its read worker (PAY_SQLITE_READ_WORKER=0): the purge on the server's thread"
        ])
  ]
  const row = (label: string, l: Latency & { readonly failed: number }) =>
    `    ${label.padEnd(20)}${String(l.n).padStart(7)}${n(l.p50Ms, 2).padStart(10)}` +
    `${n(l.p95Ms, 2).padStart(10)}${n(l.p99Ms, 2).padStart(10)}${n(l.maxMs, 2).padStart(10)}` +
    `${String(l.failed).padStart(8)}`
  for (const store of result.stores) {
    lines.push(
      "",
      `  ${store.store}`,
      `    ${"status read".padEnd(20)}${"n".padStart(7)}${"p50 ms".padStart(10)}` +
        `${"p95 ms".padStart(10)}${"p99 ms".padStart(10)}${"max ms".padStart(10)}` +
        `${"failed".padStart(8)}`
    )
    store.runs.forEach((run, i) => {
      lines.push(
        `    run ${i + 1}/${store.runs.length} (rows written in ${n(run.seeded.seconds)} s; ` +
          `load average ${n(run.loadAverage.idle, 2)} after idle, ${n(run.loadAverage.purge, 2)} ` +
          "after the purge)",
        row("idle, before", run.idle),
        row("idle windows", run.idleWindows),
        row("purge windows", run.purge),
        `      p99 purging/idle windows ×${n(run.purge.p99Ms / run.idleWindows.p99Ms, 2)} ` +
          `(/idle before ×${n(run.purge.p99Ms / run.idle.p99Ms, 2)}); purge: ` +
          `${n(run.purgedRows, 0)} rows in ${n(run.purgeSeconds)} s of purging over ` +
          `${run.windows} windows (${n(run.purgedRows / run.purgeSeconds, 0)} rows/s; ` +
          `${n(run.wallSeconds)} s with the idle windows): ` +
          Object.entries(run.purgedByTable)
            .filter(([, count]) => count > 0)
            .map(([table, count]) => `${table} ${n(count, 0)}`)
            .join(", "),
        ...(run.seqScans === undefined
          ? []
          : [
              `      sequential scans of the purged tables meanwhile: ${Object.entries(run.seqScans)
                .map(([table, count]) => `${table} ${count}`)
                .join(", ")}`
            ])
      )
    })
    const ratios = store.runs.map((r) => r.purge.p99Ms / r.idleWindows.p99Ms)
    lines.push(
      `    across the runs (min–max): p99 ${range(
        store.runs.map((r) => r.idleWindows.p99Ms),
        2
      )} ms in the idle windows, ${range(
        store.runs.map((r) => r.purge.p99Ms),
        2
      )} ms in the purge's, ×${range(ratios, 2)}; ` +
        `(idle before: ${range(
          store.runs.map((r) => r.idle.p99Ms),
          2
        )} ms); purge ${range(store.runs.map((r) => r.purgeSeconds))} s, ` +
        `${range(
          store.runs.map((r) => r.purgedRows / r.purgeSeconds),
          0
        )} rows/s`,
      `    target: status p99 in the purge's windows within ${TARGET_RATIO}× the idle windows' ` +
        `in every run: ${store.met ? "PASS" : "MISSED"}`
    )
  }
  return lines
}

runBenchAlone(import.meta.url, {
  name: "purge",
  title: "Purge under load",
  deadlineMs: purgeSettings(process.argv.slice(2)).deadlineMs,
  measure: (dir) => measurePurge(dir, purgeSettings(process.argv.slice(2))),
  report: (purge) => ({ purge }),
  file: "purge",
  format: formatPurge
})
