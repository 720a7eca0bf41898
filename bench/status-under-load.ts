/**
 * `npm run bench:status-load [-- sqlite|postgres] [--quick]`: the status read a merchant
 * polls, `GET /v1/payments/{id}/status` (no `maxPollMs`: the plain read, not the long-poll),
 * while other clients of the same server run the heaviest listings.
 *
 * Seeds 200,000 payments of one partner (bench/list.ts's data set and seeding, through the
 * store ports) on a SQLite file and on a fresh schema of the PostgreSQL server the tests use,
 * starts the standalone server on it (its esbuild bundle, as `npm start` runs it, over
 * loopback), and then, in each of BENCH_STATUS_LOAD_RUNS runs:
 *   idle: STATUS_RATE status reads a second, open loop (each sent on its schedule, whatever
 *     the earlier ones are doing, so a stalled server shows in the figures rather than
 *     slowing the sender), of payments spread over the data set, each answer checked;
 *   loaded: the same while LOADERS clients each loop, one request after another, over the
 *     heaviest `GET /v1/payments` shapes of bench/list.ts's results: whole-account lists
 *     (by date, by amount), broad filters (a network, a token, a reference substring that
 *     matches a large share), each with its statistics, and pages deep behind a cursor;
 *   diagnosis (not the target): the same load sent to a second engine process on the same
 *     database, the status reads still to the first; what sharing one process (one thread:
 *     better-sqlite3 runs each query synchronously on it) with the listings costs shows as
 *     the difference from the loaded phase.
 * The baseline, in the same runs and on the same schedule: the store's own status read in
 * this process, the statement the engine's store runs (one read by primary key) on the same
 * database through the same driver and connection settings (SQLite: the engine's own opener,
 * WAL, synchronous = FULL; PostgreSQL: one `pg` connection, the statement prepared, as the
 * engine's store prepares it), then the owner check the route makes; no HTTP, no engine.
 * So the engine's figure over the baseline's is what HTTP and the engine add, idle and
 * under load. Target (issue 20): status p99 under load below 50 ms.
 *
 * Bounded: fixed request counts, a cap per phase and a deadline for the run; stops its
 * server and drops its schema whatever happens. `--quick` (or BENCH_STATUS_LOAD_QUICK=1):
 * 20,000 payments and fewer requests, for a smoke run. BENCH_STATUS_LOAD_PAYMENTS,
 * BENCH_STATUS_LOAD_REQUESTS (status reads per phase), BENCH_STATUS_LOAD_RUNS override.
 */
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { MerchantId, PartnerId } from "@pay/core"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect } from "effect"
import pg from "pg"
import { BENCH_API_KEY, statusPath } from "./client.js"
import {
  createMerchants,
  type Dataset,
  makeDataset,
  percentile,
  type SeedTotals,
  seedPostgres,
  seedSqlite,
  startEngine,
  TOKENS
} from "./list.js"
import { type BenchPostgres, startPostgres } from "./postgres.js"
import { describeMachine, ROOT, runBenchAlone, type ServerProcess } from "./server-process.js"

export type StatusLoadStore = "sqlite" | "postgres"

export interface StatusLoadSettings {
  readonly stores: ReadonlyArray<StatusLoadStore>
  readonly payments: number
  /** Status reads in each phase (idle, loaded) of a run. */
  readonly statusRequests: number
  readonly runs: number
  readonly quick: boolean
  readonly deadlineMs: number
}

/** Status reads a second, engine and baseline each: a busy merchant's polling, and more. */
const STATUS_RATE = 50
/** The clients running the heavy listings, as the issue asks. */
const LOADERS = 4
/** The heavy shapes' page size: the largest a client may ask for (ListQuery.ts). */
const PAGE = 200
/** How deep the cursor pages are: this many pages walked to find each cursor. */
const DEEP_PAGES = 10
/** A phase's status reads take count / STATUS_RATE s; past this it stops sending. */
const PHASE_CAP_MS = 120_000
/** A loader's requests in one phase, at most (it stops when the status reads are done). */
const LOADER_REQUESTS_CAP = 5_000
const REQUEST_TIMEOUT_MS = 30_000
const WARMUP_STATUS = 100
/** Issue 20's target for the status read's p99 while the listings run. */
export const TARGET_P99_MS = 50

const whole = (name: string, fallback: number, min: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be at least ${min}`)
  return value
}

export const statusLoadSettings = (
  argv: ReadonlyArray<string> = [],
  forRun = false
): StatusLoadSettings => {
  const quick = argv.includes("--quick") || process.env.BENCH_STATUS_LOAD_QUICK === "1"
  const which = argv.find((a) => a === "sqlite" || a === "postgres") as StatusLoadStore | undefined
  const payments = whole("BENCH_STATUS_LOAD_PAYMENTS", quick ? 20_000 : 200_000, 1_000)
  const statusRequests = whole("BENCH_STATUS_LOAD_REQUESTS", quick ? 250 : 1_000, 10)
  const runs = whole("BENCH_STATUS_LOAD_RUNS", forRun || !quick ? 3 : 2, 1)
  const stores: ReadonlyArray<StatusLoadStore> =
    which === undefined ? ["sqlite", "postgres"] : [which]
  // Seeding runs at about 2,000 payments/s on the shared 2-core machine (bench/list.ts);
  // each of the three phases of a run is its status reads at STATUS_RATE, capped; warm-ups
  // and deep cursors besides.
  const perStore =
    120_000 + (payments / 1_000) * 1_000 + runs * 3 * (PHASE_CAP_MS + REQUEST_TIMEOUT_MS)
  return {
    stores,
    payments,
    statusRequests,
    runs,
    quick,
    deadlineMs: stores.length * perStore
  }
}

export interface Latency {
  readonly n: number
  readonly p50Ms: number
  readonly p95Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

export interface PhaseFigures {
  /** The engine's status reads over HTTP. */
  readonly engine: Latency
  /** The store's own status read (the baseline), on the same schedule. */
  readonly baseline: Latency
  /** Status reads that failed or timed out (a missed target whatever the percentiles). */
  readonly failed: number
  readonly seconds: number
}

export interface LoadFigures {
  readonly requests: number
  readonly failed: number
  /** Each heavy shape's latency while it ran alongside the others. */
  readonly shapes: ReadonlyArray<{ readonly name: string } & Latency>
}

export interface StatusLoadRun {
  readonly idle: PhaseFigures
  readonly loaded: PhaseFigures & { readonly load: LoadFigures }
  /**
   * A diagnosis, not the target: the same load sent to a second engine process on the same
   * database, the status reads still to the first. What is left is what the database and the
   * machine's cores cost the status read; the difference from `loaded` is what sharing the
   * status read's process (its thread, its event loop) with the listings costs.
   */
  readonly loadedElsewhere: PhaseFigures & { readonly load: LoadFigures }
}

export interface StatusLoadStoreResult {
  readonly store: StatusLoadStore
  readonly payments: number
  readonly seedSeconds: number
  /** The heavy shapes, each alone before any load: its latency and its share of payments. */
  readonly shapes: ReadonlyArray<{
    readonly name: string
    readonly matches: number
    readonly aloneMs: number
    /** The same with one row a page: about the queries' own time, with little to render. */
    readonly oneRowMs: number
  }>
  readonly runs: ReadonlyArray<StatusLoadRun>
  /** Every run's loaded p99 under TARGET_P99_MS, with no failed read. */
  readonly met: boolean
}

export interface StatusLoadResult {
  readonly machine: {
    readonly cpu: string
    readonly cores: number
    readonly node: string
    readonly loadAverageAtStart: number
  }
  readonly settings: Omit<StatusLoadSettings, "deadlineMs" | "stores"> & {
    readonly statusPerSecond: number
    readonly loaders: number
    readonly pageSize: number
    readonly deepPages: number
  }
  readonly stores: ReadonlyArray<StatusLoadStoreResult>
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

const listHeaders = { "Api-Key": BENCH_API_KEY }

/** One status to read: the payment, its merchant, and the status it was seeded with. */
interface StatusTarget {
  readonly id: string
  readonly merchantId: MerchantId
  readonly status: string
}

/** Payments spread over the whole data set (old and recent), each with its seeded status. */
const statusTargets = (
  data: Dataset,
  merchants: ReadonlyArray<MerchantId>,
  count: number
): ReadonlyArray<StatusTarget> =>
  Array.from({ length: count }, (_, i) => {
    const k = Math.floor(((i * 0.618_033_988_75) % 1) * data.count)
    const seeded = data.payment(k, "" as PartnerId, merchants)
    return {
      id: seeded.payment.id,
      merchantId: seeded.payment.merchantId,
      status: seeded.succeedAt === undefined ? seeded.payment.status : "succeeded"
    }
  })

/** The store's own status read: what the engine's store runs for the route, and the owner check. */
interface BaselineRead {
  readonly read: (target: StatusTarget) => Promise<void>
  readonly close: () => Promise<void>
}

/** The engine's store's statement (SqlitePaymentStore.ts, PgPaymentStore.ts). */
const STATUS_COLUMNS =
  "id, partner_id, merchant_id, status, expires_at, failure_code, token_asset, token_value, tx_id"

const checkRow = (row: unknown, target: StatusTarget, partnerId: string) => {
  const r = row as { partner_id: string; merchant_id: string; status: string } | undefined
  if (r === undefined || r.partner_id !== partnerId || r.merchant_id !== target.merchantId) {
    throw new Error(`baseline: payment ${target.id} not found for its merchant`)
  }
  if (r.status !== target.status) {
    throw new Error(`baseline: payment ${target.id} is ${r.status}, seeded ${target.status}`)
  }
}

/** The partner of the seeded merchants, which every status read checks the payment against. */
const PARTNER_SQL = "SELECT partner_id FROM merchants WHERE id = "

const sqliteBaseline = (filename: string, merchantId: MerchantId): BaselineRead => {
  // The engine's own opener: better-sqlite3 with its pragmas (WAL, synchronous = FULL).
  const db = SqliteStorage.openConnection(filename)
  const partnerId = (db.prepare(`${PARTNER_SQL}?`).get(merchantId) as { partner_id: string })
    .partner_id
  const statement = db.prepare(`SELECT ${STATUS_COLUMNS} FROM payments WHERE id = ?`)
  return {
    read: async (target) => checkRow(statement.get(target.id), target, partnerId),
    close: async () => db.close()
  }
}

const postgresBaseline = async (url: string, merchantId: MerchantId): Promise<BaselineRead> => {
  const client = new pg.Client({ connectionString: url, application_name: "pay-bench-status" })
  await client.connect()
  const partner = await client.query<{ partner_id: string }>(`${PARTNER_SQL}$1`, [merchantId])
  const partnerId = partner.rows[0]!.partner_id
  const query = {
    name: "bench_payment_status",
    text: `SELECT ${STATUS_COLUMNS} FROM payments WHERE id = $1`
  }
  return {
    read: async (target) => {
      const result = await client.query({ ...query, values: [target.id] })
      checkRow(result.rows[0], target, partnerId)
    },
    close: () => client.end()
  }
}

/** A heavy listing: a `GET /v1/payments` query string. */
interface Shape {
  readonly name: string
  readonly query: string
  readonly matches: number
}

const fetchText = async (url: string, headers: Record<string, string>, signal?: AbortSignal) => {
  const response = await fetch(url, {
    headers,
    signal: signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`)
  return text
}

/**
 * The heaviest listings of bench/list.ts's results, all on the whole account (every merchant,
 * every day) with their statistics, at the largest page; and two of them deep behind a cursor
 * (a cursor page's statistics are computed again, over every match).
 */
const heavyShapes = async (url: string, data: Dataset): Promise<ReadonlyArray<Shape>> => {
  const share = (selects: (k: number) => boolean) => data.expected(selects).rows
  const reference = "ORDER-1"
  const base: ReadonlyArray<Shape> = [
    { name: "whole account", query: "", matches: data.count },
    { name: "whole account, sortBy=amount", query: "sortBy=amount", matches: data.count },
    {
      name: `referenceId=${reference}`,
      query: `referenceId=${encodeURIComponent(reference)}`,
      matches: share((k) => `order-${k}`.includes(reference.toLowerCase()))
    },
    {
      name: "network=eip155:1",
      query: "network=eip155:1",
      matches: share((k) => data.paidTokenOf(k)?.startsWith("eip155:1/") === true)
    },
    {
      name: "asset=USDC on Base",
      query: `asset=${encodeURIComponent(TOKENS[0]!)}`,
      matches: share((k) => data.paidTokenOf(k) === TOKENS[0])
    }
  ]
  const deep: Array<Shape> = []
  for (const shape of [base[0]!, base[2]!]) {
    let cursor: string | null = null
    for (let page = 1; page <= DEEP_PAGES; page++) {
      const query = [shape.query, `limit=${PAGE}`, cursor && `cursor=${encodeURIComponent(cursor)}`]
        .filter(Boolean)
        .join("&")
      const body = JSON.parse(await fetchText(`${url}/v1/payments?${query}`, listHeaders)) as {
        nextCursor: string | null
      }
      cursor = body.nextCursor
      if (cursor === null) break
    }
    if (cursor === null) continue
    deep.push({
      name: `${shape.name}, page ${DEEP_PAGES + 1} (cursor)`,
      query: [shape.query, `cursor=${encodeURIComponent(cursor)}`].filter(Boolean).join("&"),
      matches: shape.matches
    })
  }
  return [...base, ...deep]
}

const shapeUrl = (url: string, shape: Shape, limit = PAGE) =>
  `${url}/v1/payments?${[shape.query, `limit=${limit}`].filter(Boolean).join("&")}`

/** Sends `count` tasks on a fixed schedule (open loop), until the cap; waits for them all. */
const openLoop = async (
  count: number,
  perSecond: number,
  capMs: number,
  task: (i: number) => Promise<void>
) => {
  const started = performance.now()
  const pending: Array<Promise<void>> = []
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / perSecond
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    if (performance.now() - started > capMs) break
    pending.push(task(i))
  }
  await Promise.all(pending)
  return (performance.now() - started) / 1000
}

/** One phase's status reads, engine and baseline on the same schedule. */
const measureStatus = async (
  url: string,
  targets: ReadonlyArray<StatusTarget>,
  count: number,
  baseline: BaselineRead,
  offset: number
): Promise<PhaseFigures> => {
  const engine: Array<number> = []
  const store: Array<number> = []
  let failed = 0
  const seconds = await openLoop(count, STATUS_RATE, PHASE_CAP_MS, async (i) => {
    const target = targets[(offset + i) % targets.length]!
    const readStore = async () => {
      const started = performance.now()
      await baseline.read(target)
      store.push(performance.now() - started)
    }
    const readEngine = async () => {
      const started = performance.now()
      try {
        const text = await fetchText(`${url}${statusPath(target.id)}`, {
          ...listHeaders,
          "Merchant-Id": target.merchantId
        })
        const ms = performance.now() - started
        const body = JSON.parse(text) as { status?: string }
        if (body.status !== target.status) {
          throw new Error(`status of ${target.id}: ${text}, seeded ${target.status}`)
        }
        engine.push(ms)
      } catch (error) {
        failed++
        if (failed <= 3) console.error(`    status read failed: ${String(error)}`)
      }
    }
    await Promise.all([readStore(), readEngine()])
  })
  return { engine: latency(engine), baseline: latency(store), failed, seconds }
}

/** LOADERS clients looping over the heavy shapes (each from its own), until `stop`. */
const runLoad = (url: string, shapes: ReadonlyArray<Shape>) => {
  const controller = new AbortController()
  let stopped = false
  let failed = 0
  const samples = new Map<string, Array<number>>(shapes.map((s) => [s.name, []]))
  const loader = async (c: number) => {
    for (let i = 0; !stopped && i < LOADER_REQUESTS_CAP; i++) {
      const shape = shapes[(c * 2 + i) % shapes.length]!
      const started = performance.now()
      try {
        await fetchText(shapeUrl(url, shape), listHeaders, controller.signal)
        samples.get(shape.name)!.push(performance.now() - started)
      } catch (error) {
        if (stopped) return
        failed++
        if (failed <= 3) console.error(`    listing failed: ${String(error)}`)
        await sleep(50)
      }
    }
  }
  const running = Promise.all(Array.from({ length: LOADERS }, (_, c) => loader(c)))
  return {
    stop: async (): Promise<LoadFigures> => {
      stopped = true
      controller.abort()
      await running
      const all = [...samples.values()]
      return {
        requests: all.reduce((sum, s) => sum + s.length, 0),
        failed,
        shapes: shapes.map((s) => ({ name: s.name, ...latency(samples.get(s.name)!) }))
      }
    }
  }
}

const measureStore = async (
  store: StatusLoadStore,
  settings: StatusLoadSettings,
  dir: string,
  postgres: () => Promise<BenchPostgres>
): Promise<StatusLoadStoreResult> => {
  const now = Date.now()
  const database =
    store === "sqlite" ? join(dir, "status-load.sqlite") : (await postgres()).urls["status-load"]!
  let server: ServerProcess | undefined
  let second: ServerProcess | undefined
  let baseline: BaselineRead | undefined
  try {
    // The first start migrates the empty database and makes the partner with the bench key.
    server = await startEngine(database)
    const merchants = await createMerchants(server.url, 200)
    await server.stop()
    server = undefined

    console.log(`  seeding ${settings.payments.toLocaleString("en-US")} payments on ${store}…`)
    const data = makeDataset(settings.payments, now)
    const seedStarted = performance.now()
    await Effect.runPromise<SeedTotals, unknown>(
      store === "sqlite"
        ? seedSqlite(database, data, merchants)
        : seedPostgres(database, data, merchants)
    )
    const seedSeconds = (performance.now() - seedStarted) / 1000

    server = await startEngine(database)
    const url = server.url
    const targets = statusTargets(data, merchants, 2_000)
    baseline =
      store === "sqlite"
        ? sqliteBaseline(database, merchants[0]!)
        : await postgresBaseline(database, merchants[0]!)

    console.log("  finding the deep cursors, timing each heavy listing alone…")
    const shapes = await heavyShapes(url, data)
    const alone: Array<StatusLoadStoreResult["shapes"][number]> = []
    const timeAlone = async (shape: Shape, limit: number) => {
      await fetchText(shapeUrl(url, shape, limit), listHeaders)
      const times: Array<number> = []
      for (let i = 0; i < 3; i++) {
        const started = performance.now()
        await fetchText(shapeUrl(url, shape, limit), listHeaders)
        times.push(performance.now() - started)
      }
      return latency(times).p50Ms
    }
    for (const shape of shapes) {
      alone.push({
        name: shape.name,
        matches: shape.matches,
        aloneMs: await timeAlone(shape, PAGE),
        oneRowMs: await timeAlone(shape, 1)
      })
    }
    // Warm-up: every status path once and the statements prepared, unmeasured.
    await measureStatus(url, targets, WARMUP_STATUS, baseline, 1_000)
    second = await startEngine(database)
    for (const shape of shapes) await fetchText(shapeUrl(second.url, shape), listHeaders)

    /** Status reads to `statusUrl` while the loaders run against `loadUrl`. */
    const underLoad = async (statusUrl: string, loadUrl: string) => {
      const load = runLoad(loadUrl, shapes)
      // Every loader's first request under way before the first measured read.
      await sleep(1_000)
      const figures = await measureStatus(statusUrl, targets, settings.statusRequests, baseline!, 0)
      return { ...figures, load: await load.stop() }
    }

    const runs: Array<StatusLoadRun> = []
    for (let run = 1; run <= settings.runs; run++) {
      console.log(`  run ${run}/${settings.runs}: idle…`)
      const idle = await measureStatus(url, targets, settings.statusRequests, baseline, 0)
      console.log(`  run ${run}/${settings.runs}: under ${LOADERS} listing clients…`)
      const loaded = await underLoad(url, url)
      console.log(`  run ${run}/${settings.runs}: the same load on a second engine process…`)
      const loadedElsewhere = await underLoad(url, second.url)
      runs.push({ idle, loaded, loadedElsewhere })
    }
    const met = runs.every((r) => r.loaded.failed === 0 && r.loaded.engine.p99Ms < TARGET_P99_MS)
    return { store, payments: settings.payments, seedSeconds, shapes: alone, runs, met }
  } finally {
    await baseline?.close()
    await second?.stop()
    await server?.stop()
  }
}

export const measureStatusUnderLoad = async (
  dir: string,
  settings: StatusLoadSettings
): Promise<StatusLoadResult> => {
  const { execFileSync } = await import("node:child_process")
  execFileSync(process.execPath, ["examples/build.mjs", "main"], { cwd: ROOT, stdio: "inherit" })
  const machine = describeMachine()
  let postgres: Promise<BenchPostgres> | undefined
  const stores: Array<StatusLoadStoreResult> = []
  try {
    for (const store of settings.stores) {
      stores.push(
        await measureStore(store, settings, dir, () => {
          postgres ??= startPostgres(["status-load"])
          return postgres
        })
      )
    }
  } finally {
    await postgres?.then(
      (pg) => pg.close(),
      () => undefined
    )
  }
  return {
    machine,
    settings: {
      payments: settings.payments,
      statusRequests: settings.statusRequests,
      runs: settings.runs,
      quick: settings.quick,
      statusPerSecond: STATUS_RATE,
      loaders: LOADERS,
      pageSize: PAGE,
      deepPages: DEEP_PAGES
    },
    stores
  }
}

/** The targets for `npm run bench`'s summary: one per store. */
export const statusLoadTargets = (result: StatusLoadResult): Record<string, boolean> =>
  Object.fromEntries(
    result.stores.map((s) => [
      `status p99 under listing load on ${s.store === "sqlite" ? "SQLite" : "PostgreSQL"}`,
      s.met
    ])
  )

export const formatStatusUnderLoad = (result: StatusLoadResult): ReadonlyArray<string> => {
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
  const lines = [
    "",
    `Status under listing load: GET /v1/payments/{id}/status at ${s.statusPerSecond}/s (open ` +
      `loop), ${s.statusRequests} reads a phase, idle then beside ${s.loaders} clients looping ` +
      `the heaviest GET /v1/payments (limit ${s.pageSize}, with statistics); ${s.runs} runs`,
    `  machine: ${result.machine.cpu}, ${result.machine.cores} cores, Node ${result.machine.node}, ` +
      `load average ${n(result.machine.loadAverageAtStart, 2)} at start`,
    "  baseline: the store's status read in the bench process (the engine store's statement, " +
      "one read by primary key, same driver and settings), same schedule; no HTTP, no engine"
  ]
  const row = (label: string, l: Latency) =>
    `    ${label.padEnd(24)}${String(l.n).padStart(6)}${n(l.p50Ms, 2).padStart(10)}` +
    `${n(l.p95Ms, 2).padStart(10)}${n(l.p99Ms, 2).padStart(10)}${n(l.maxMs, 2).padStart(10)}`
  for (const store of result.stores) {
    lines.push(
      "",
      `  ${store.store}: ${store.payments.toLocaleString("en-US")} payments, seeded in ` +
        `${n(store.seedSeconds)} s`,
      `    ${"heavy listing (alone, p50 of 3)".padEnd(52)}${"matches".padStart(10)}` +
        `${`${s.pageSize} rows ms`.padStart(14)}${"1 row ms".padStart(10)}`
    )
    for (const shape of store.shapes) {
      lines.push(
        `    ${shape.name.padEnd(52)}${shape.matches.toLocaleString("en-US").padStart(10)}` +
          `${n(shape.aloneMs).padStart(14)}${n(shape.oneRowMs).padStart(10)}`
      )
    }
    lines.push(
      `    ${"status read".padEnd(24)}${"n".padStart(6)}${"p50 ms".padStart(10)}` +
        `${"p95 ms".padStart(10)}${"p99 ms".padStart(10)}${"max ms".padStart(10)}`
    )
    store.runs.forEach((run, i) => {
      lines.push(
        `    run ${i + 1}/${store.runs.length}`,
        row("engine, idle", run.idle.engine),
        row("baseline, idle", run.idle.baseline),
        row("engine, under load", run.loaded.engine),
        row("baseline, under load", run.loaded.baseline),
        `      listings answered meanwhile: ${run.loaded.load.requests}` +
          (run.loaded.load.failed > 0 ? `, ${run.loaded.load.failed} failed` : "") +
          `; status reads failed: ${run.idle.failed} idle, ${run.loaded.failed} under load`
      )
      for (const shape of run.loaded.load.shapes) {
        lines.push(
          `      ${shape.name.padEnd(50)}${String(shape.n).padStart(5)} × p50 ` +
            `${n(shape.p50Ms).padStart(8)} ms, max ${n(shape.maxMs).padStart(8)} ms`
        )
      }
      const elsewhere = run.loadedElsewhere
      lines.push(
        "      diagnosis, the same load on a second engine process (same database):",
        row("engine, load elsewhere", elsewhere.engine),
        row("baseline, load elsewhere", elsewhere.baseline),
        `      listings answered meanwhile: ${elsewhere.load.requests}` +
          (elsewhere.load.failed > 0 ? `, ${elsewhere.load.failed} failed` : "") +
          `; status reads failed: ${elsewhere.failed}`
      )
    })
    const loaded = store.runs.map((r) => r.loaded.engine.p99Ms)
    const idle = store.runs.map((r) => r.idle.engine.p99Ms)
    lines.push(
      `    across the runs (min–max): engine p99 ${range(idle)} ms idle, ${range(loaded)} ms ` +
        `under load, loaded/idle ×${range(
          store.runs.map((r) => r.loaded.engine.p99Ms / r.idle.engine.p99Ms),
          1
        )}; baseline p99 ${range(
          store.runs.map((r) => r.idle.baseline.p99Ms),
          2
        )} ms idle, ` +
        `${range(
          store.runs.map((r) => r.loaded.baseline.p99Ms),
          2
        )} ms under load; engine/baseline p99 under load ×${range(
          store.runs.map((r) => r.loaded.engine.p99Ms / r.loaded.baseline.p99Ms),
          1
        )}`,
      `    diagnosis: engine p99 with the listings on a second process ${range(
        store.runs.map((r) => r.loadedElsewhere.engine.p99Ms)
      )} ms (not the target: one process serves both in a deployment)`,
      `    target: status p99 under load < ${TARGET_P99_MS} ms in every run: ` +
        (store.met ? "PASS" : "MISSED")
    )
  }
  return lines
}

runBenchAlone(import.meta.url, {
  name: "status-load",
  title: "Status under listing load",
  deadlineMs: statusLoadSettings(process.argv.slice(2)).deadlineMs,
  measure: (dir) => measureStatusUnderLoad(dir, statusLoadSettings(process.argv.slice(2))),
  report: (statusUnderLoad) => ({ statusUnderLoad }),
  file: "status-under-load",
  format: formatStatusUnderLoad
})
