/**
 * `npm run bench`: the standalone engine and a bare baseline, each in its own process on
 * loopback, under the same load in the same run, on SQLite and on PostgreSQL, and on Bun
 * (the engine as `npm run start:bun` runs it against baseline-bun-server.ts, on SQLite),
 * with each server's CPU time per request; prints the report and writes it to
 * bench/results/latest.json; first, on a machine with nothing else of the bench running,
 * the wallet flow on the sandbox chain (bench/wallet.ts), then the cold start on both
 * runtimes (bench/cold-start.ts), then merchants created with a logo (bench/logos.ts), then
 * webhook delivery (bench/webhooks.ts), then the status read beside the heaviest listings
 * on 200,000 payments (bench/status-under-load.ts; BENCH_STATUS_LOAD_QUICK=1 for 20,000),
 * then the test engine (@pay/testing) against the standalone server, create and pay one
 * payment at a time, and the test engine's start (bench/test-engine.ts; BENCH_TEST_ENGINE_*).
 * Bounded in time, and it stops its servers and drops its PostgreSQL schemas whatever
 * happens. BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_LONG_POLLS, BENCH_COLD_RUNS,
 * BENCH_LOGO_*, BENCH_WALLET_* and BENCH_TEST_ENGINE_* shorten it for a quick look; BENCH_ROUTE_RUNS (3) is how
 * many times the payment routes are measured, each run every server in turn, and the
 * report quotes the range across them; BENCH_ONLY=routes measures only the payment routes
 * and the long-polls, BENCH_ONLY=longpoll only the long-polls (bench/longpoll.ts, also
 * `npm run bench:longpoll`; BENCH_LONGPOLL_RUNS, BENCH_LONGPOLL_HEAP);
 * PAY_TEST_PG picks the PostgreSQL server as for the tests (see bench/postgres.ts).
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import {
  BENCH_API_KEY,
  BENCH_PAY_CONFIG,
  cancelPayment,
  createMerchant,
  createPayment,
  inParallel,
  paymentBody,
  paymentHeaders,
  paymentStatus,
  statusPath,
  type Target
} from "./client.js"
import {
  type ColdStartResult,
  coldStartSettings,
  formatColdStart,
  measureColdStart
} from "./cold-start.js"
import { type LoadResult, type LoadSettings, measureLoad } from "./load.js"
import { formatLogos, type LogoBenchResult, logoSettings, measureLogos } from "./logos.js"
import {
  formatLongPolls,
  type LongPollBenchResult,
  longPollSettings,
  longPollTargets,
  measureLongPolls
} from "./longpoll.js"
import { type BenchPostgres, startPostgres } from "./postgres.js"
import {
  BUN,
  killAllNow,
  MS_PER_TICK,
  ROOT,
  type ServerProcess,
  startServer,
  TSX
} from "./server-process.js"
import {
  formatStatusUnderLoad,
  measureStatusUnderLoad,
  type StatusLoadResult,
  statusLoadSettings,
  statusLoadTargets
} from "./status-under-load.js"
import {
  formatTestEngine,
  measureTestEngine,
  type TestEngineResult,
  testEngineSettings
} from "./test-engine.js"
import {
  formatWallet,
  measureWallet,
  type WalletResult,
  walletSettings,
  walletThroughputMet
} from "./wallet.js"
import {
  formatWebhooks,
  measureWebhooks,
  type WebhookBenchResult,
  webhookSettings
} from "./webhooks.js"

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`)
  return value
}

const load: LoadSettings = {
  connections: 50,
  warmupSeconds: envNumber("BENCH_WARMUP_SECONDS", 2),
  seconds: envNumber("BENCH_SECONDS", 10)
}
const ROUTE_RUNS = envNumber("BENCH_ROUTE_RUNS", 3)
const ROUTES_ONLY = process.env.BENCH_ONLY === "routes"
const LONG_POLLS_ONLY = process.env.BENCH_ONLY === "longpoll"
const longPolls = longPollSettings()
const wallet = walletSettings()
const coldStart = coldStartSettings()
const logos = logoSettings()
const webhooks = webhookSettings()
const statusLoad = statusLoadSettings([], true)
const testEngine = testEngineSettings()
const STATUS_PAYMENTS = 1_000
/** Each route on six servers: the baseline and the engine, on SQLite and on PostgreSQL on
 * Node, and on SQLite on Bun. */
const LOAD_RUNS = ROUTE_RUNS * 2 * 6
/** The load runs, plus time for the rest (builds, starts, setup) and the wallet flows', the
 * cold starts', the logos', the webhooks', the long-polls' and the test engine's own
 * deadlines. */
const RUN_DEADLINE_MS =
  240_000 +
  longPolls.deadlineMs +
  LOAD_RUNS * (load.warmupSeconds + load.seconds) * 1_000 +
  wallet.deadlineMs +
  coldStart.deadlineMs +
  logos.deadlineMs +
  webhooks.deadlineMs +
  statusLoad.deadlineMs +
  testEngine.deadlineMs
/** The engine's pool on PostgreSQL (its default, packages/storage-postgres/src/layer.ts); the
 * PostgreSQL baseline gets as many connections. */
const PG_POOL_SIZE = 10
const BASELINE_MERCHANT_ID = "mrch_0000000000baseline00"
const RESULTS = fileURLToPath(new URL("./results/", import.meta.url))

/** A load's figures, and the server's CPU time (user + system, all its threads) per request
 * over the measured run. */
type Measured = LoadResult & { readonly cpuMsPerRequest: number }

interface Comparison {
  readonly route: string
  readonly baseline: Measured
  readonly engine: Measured
  /** engine / baseline, both on SQLite. */
  readonly ratio: number
  /** The engine's CPU time per request over the baseline's. */
  readonly cpuRatio: number
  readonly target: number
  readonly met: boolean
  readonly postgres: {
    readonly baseline: Measured
    readonly engine: Measured
    /** engine / baseline, both on PostgreSQL. */
    readonly ratio: number
    readonly target: number
    readonly cpuRatio: number
    readonly met: boolean
    /** The engine on PostgreSQL against the baseline on SQLite. */
    readonly ratioToSqliteBaseline: number
  }
  /** Both on Bun, SQLite. */
  readonly bun: {
    readonly baseline: Measured
    readonly engine: Measured
    /** engine / baseline, both on Bun. */
    readonly ratio: number
    readonly cpuRatio: number
    /** The engine on Bun against the engine on Node (throughput). */
    readonly engineToNodeEngine: number
    /** The Bun baseline against the Node baseline (throughput). */
    readonly baselineToNodeBaseline: number
  }
}

/** A server under test and its process (for its CPU time). */
interface Running {
  readonly target: Target
  readonly process: ServerProcess
}

/** The servers under test, in the order each route measures them. */
interface Servers {
  readonly baseline: Running
  readonly engine: Running
  readonly baselineBun: Running
  readonly engineBun: Running
  readonly baselinePg: Running
  readonly enginePg: Running
}

const machine = () => ({
  cpu: /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown",
  cores: cpus().length,
  memoryBytes: totalmem(),
  node: process.version,
  bun: execFileSync(BUN, ["--version"], { encoding: "utf8" }).trim(),
  // Other work on the machine skews both servers' figures: this says how busy it was.
  loadAverageAtStart: loadavg()[0] ?? 0
})

const compare = async (
  route: string,
  /** Issue 17's targets: on SQLite, and on PostgreSQL. */
  { target, targetPg }: { readonly target: number; readonly targetPg: number },
  method: "GET" | "POST",
  servers: Servers,
  next: (server: Target) => () => { readonly path: string; readonly body?: string }
): Promise<Comparison> => {
  const measure = async ({ target: server, process: serverProcess }: Running) => {
    console.log(`  ${route} on ${server.name}…`)
    const spec = {
      name: `${route} on ${server.name}`,
      url: server.url,
      method,
      headers: paymentHeaders(server),
      next: next(server)
    }
    // The warm-up on its own, so that the CPU time read around the measured run is its alone.
    if (load.warmupSeconds > 0) {
      await measureLoad(spec, { ...load, warmupSeconds: 0, seconds: load.warmupSeconds })
    }
    const ticks = serverProcess.cpuTicks()
    const result = await measureLoad(spec, { ...load, warmupSeconds: 0 })
    const cpuMs = (serverProcess.cpuTicks() - ticks) * MS_PER_TICK
    return { ...result, cpuMsPerRequest: cpuMs / result.requests }
  }
  // Each runtime's baseline then its engine, Node and Bun on SQLite side by side in time.
  const baseline = await measure(servers.baseline)
  const engine = await measure(servers.engine)
  const baselineBun = await measure(servers.baselineBun)
  const engineBun = await measure(servers.engineBun)
  const baselinePg = await measure(servers.baselinePg)
  const enginePg = await measure(servers.enginePg)
  const ratio = engine.requestsPerSecond / baseline.requestsPerSecond
  const ratioPg = enginePg.requestsPerSecond / baselinePg.requestsPerSecond
  return {
    route,
    baseline,
    engine,
    ratio,
    cpuRatio: engine.cpuMsPerRequest / baseline.cpuMsPerRequest,
    target,
    met: ratio >= target,
    postgres: {
      baseline: baselinePg,
      engine: enginePg,
      ratio: ratioPg,
      cpuRatio: enginePg.cpuMsPerRequest / baselinePg.cpuMsPerRequest,
      target: targetPg,
      met: ratioPg >= targetPg,
      ratioToSqliteBaseline: enginePg.requestsPerSecond / baseline.requestsPerSecond
    },
    bun: {
      baseline: baselineBun,
      engine: engineBun,
      ratio: engineBun.requestsPerSecond / baselineBun.requestsPerSecond,
      cpuRatio: engineBun.cpuMsPerRequest / baselineBun.cpuMsPerRequest,
      engineToNodeEngine: engineBun.requestsPerSecond / engine.requestsPerSecond,
      baselineToNodeBaseline: baselineBun.requestsPerSecond / baseline.requestsPerSecond
    }
  }
}

const bench = async (dir: string, postgres: BenchPostgres, started: Array<ServerProcess>) => {
  const baselineServer = await startServer({
    name: "baseline",
    command: TSX,
    args: ["bench/baseline-server.ts"],
    env: {
      PORT: "0",
      BASELINE_DATABASE: join(dir, "baseline.sqlite"),
      BASELINE_API_KEY: BENCH_API_KEY,
      BASELINE_MERCHANT_ID
    }
  })
  started.push(baselineServer)
  // The engine runs as `npm start` runs it: its esbuild bundle on plain node, no loader; on
  // Bun as `npm run start:bun` runs it, its own bundle (bun:sqlite, Bun.serve).
  execFileSync(process.execPath, ["examples/build.mjs", "main", "main-bun"], {
    cwd: ROOT,
    stdio: "inherit"
  })
  // As deployed: networks from a PAY_CONFIG (no sandbox EVM in the process; these routes never
  // reach the chain, so the RPC need not answer). The wallet flow above measures the sandbox.
  const payConfig = join(dir, "pay-config.json")
  writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
  const engineServer = await startServer({
    name: "engine",
    command: process.execPath,
    args: ["--enable-source-maps", "examples/standalone/dist/main.mjs"],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: join(dir, "bench.sqlite"),
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
      PAY_CONFIG: payConfig
    }
  })
  started.push(engineServer)
  const baselineBunServer = await startServer({
    name: "baseline-bun",
    command: BUN,
    args: ["bench/baseline-bun-server.ts"],
    env: {
      PORT: "0",
      BASELINE_DATABASE: join(dir, "baseline-bun.sqlite"),
      BASELINE_API_KEY: BENCH_API_KEY,
      BASELINE_MERCHANT_ID
    }
  })
  started.push(baselineBunServer)
  const engineBunServer = await startServer({
    name: "engine-bun",
    command: BUN,
    args: ["examples/standalone/dist/main.bun.mjs"],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: join(dir, "bench-bun.sqlite"),
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
      PAY_CONFIG: payConfig
    }
  })
  started.push(engineBunServer)
  const baselinePgServer = await startServer({
    name: "baseline-pg",
    command: TSX,
    args: ["bench/baseline-pg-server.ts"],
    env: {
      PORT: "0",
      BASELINE_DATABASE: postgres.urls.baseline!,
      BASELINE_POOL_SIZE: String(PG_POOL_SIZE),
      BASELINE_API_KEY: BENCH_API_KEY,
      BASELINE_MERCHANT_ID
    }
  })
  started.push(baselinePgServer)
  const enginePgServer = await startServer({
    name: "engine-pg",
    command: process.execPath,
    args: ["--enable-source-maps", "examples/standalone/dist/main.mjs"],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: postgres.urls.engine!,
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
      PAY_CONFIG: payConfig
    }
  })
  started.push(enginePgServer)

  const baselineOn = (server: ServerProcess): Running => ({
    target: { name: server.name, url: server.url, merchantId: BASELINE_MERCHANT_ID },
    process: server
  })
  const engineOn = async (server: ServerProcess): Promise<Running> => ({
    target: {
      name: server.name,
      url: server.url,
      merchantId: await createMerchant(server.name, server.url)
    },
    process: server
  })
  const servers: Servers = {
    baseline: baselineOn(baselineServer),
    engine: await engineOn(engineServer),
    baselineBun: baselineOn(baselineBunServer),
    engineBun: await engineOn(engineBunServer),
    baselinePg: baselineOn(baselinePgServer),
    enginePg: await engineOn(enginePgServer)
  }
  const all = Object.values(servers).map((server) => server.target)
  const engine = servers.engine.target
  // Every route once before any load, so a missing one fails in seconds, not minutes.
  for (const server of all) {
    await paymentStatus(server, await createPayment(server, 0))
  }
  for (const server of [engine, servers.engineBun.target, servers.enginePg.target]) {
    await cancelPayment(server, await createPayment(server, 1))
  }

  let created = 0
  const statusIds = new Map<string, Array<string>>()
  for (const server of all) {
    statusIds.set(
      server.name,
      await inParallel(STATUS_PAYMENTS, 50, (i) => createPayment(server, 100_000 + i))
    )
  }
  // Each run measures every route on every server in turn: a ratio is always of two
  // figures taken minutes apart at most, and the runs show how far the machine moves them.
  const runs: Array<ReadonlyArray<Comparison>> = []
  for (let run = 1; run <= ROUTE_RUNS; run++) {
    console.log(`Measuring, run ${run}/${ROUTE_RUNS}:`)
    const create = await compare(
      "POST /v1/payments",
      { target: 1.0, targetPg: 0.7 },
      "POST",
      servers,
      () => () => ({
        path: "/v1/payments",
        body: paymentBody(created++)
      })
    )
    const status = await compare(
      "GET /v1/payments/{id}/status",
      { target: 0.8, targetPg: 0.7 },
      "GET",
      servers,
      (server) => {
        const ids = statusIds.get(server.name)!
        let i = 0
        return () => ({ path: statusPath(ids[i++ % ids.length]!) })
      }
    )
    runs.push([create, status])
  }

  return runs
}

/** The PostgreSQL server the run used, for the report. */
const describePostgres = (postgres: BenchPostgres) => ({
  kind: postgres.kind,
  ...postgres.server,
  poolSize: PG_POOL_SIZE
})

const format = (report: {
  readonly date: string
  readonly machine: ReturnType<typeof machine>
  readonly postgres: ReturnType<typeof describePostgres>
  readonly runs: ReadonlyArray<ReadonlyArray<Comparison>>
  readonly longPolls: LongPollBenchResult | undefined
  readonly wallet: WalletResult | undefined
  readonly coldStart: ColdStartResult | undefined
  readonly logos: LogoBenchResult | undefined
  readonly webhooks: WebhookBenchResult | undefined
  readonly statusUnderLoad: StatusLoadResult | undefined
  readonly testEngine: TestEngineResult | undefined
  readonly targets: Readonly<Record<string, boolean>>
}) => {
  const n = (x: number, digits = 0) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const verdict = (met: boolean) => (met ? "met" : "MISSED")
  const m = report.machine
  const pg = report.postgres
  const row = (route: string, server: string, r: Measured) =>
    `${route.padEnd(30)}${server.padEnd(13)}${n(r.requestsPerSecond).padStart(9)}` +
    `${n(r.latencyMs.p50).padStart(9)}${n(r.latencyMs.p90).padStart(9)}` +
    `${n(r.latencyMs.p99).padStart(9)}${n(r.cpuMsPerRequest, 3).padStart(12)}`
  const lines = [
    "",
    `Pay engine bench, ${report.date}`,
    `Machine: ${m.cpu}, ${m.cores} cores, ${n(m.memoryBytes / 2 ** 30, 1)} GiB, Node ${m.node}, ` +
      `Bun ${m.bun}, load average ${n(m.loadAverageAtStart, 2)} at start`,
    `Load: autocannon, ${load.connections} connections, ${load.warmupSeconds} s warm-up + ` +
      `${load.seconds} s measured, on the same machine over loopback`,
    `SQLite: a file in ${tmpdir()}, WAL, synchronous = FULL (engine and baseline)`,
    `PostgreSQL (-pg): ${pg.kind} server ${pg.version} at ${pg.url}, ` +
      `synchronous_commit ${pg.synchronousCommit}, fsync ${pg.fsync}, a schema each; ` +
      `pools of ${pg.poolSize} connections (the engine's default, the baseline's the same)`,
    "Bun (-bun): the engine as npm run start:bun runs it (bun:sqlite, Bun.serve), the baseline " +
      "on Bun.serve + bun:sqlite (bench/baseline-bun-server.ts), SQLite as above",
    "CPU ms/req: the server process's user + system time (all its threads) over the measured " +
      "run, per request answered",
    "",
    `${"route".padEnd(30)}${"server".padEnd(13)}${"req/s".padStart(9)}` +
      `${"p50 ms".padStart(9)}${"p90 ms".padStart(9)}${"p99 ms".padStart(9)}` +
      `${"CPU ms/req".padStart(12)}`
  ]
  const indent = "".padEnd(30)
  report.runs.forEach((comparisons, i) => {
    lines.push(`run ${i + 1}/${report.runs.length}`)
    for (const c of comparisons) {
      lines.push(
        row(c.route, "baseline", c.baseline),
        row("", "engine", c.engine),
        row("", "baseline-bun", c.bun.baseline),
        row("", "engine-bun", c.bun.engine),
        row("", "baseline-pg", c.postgres.baseline),
        row("", "engine-pg", c.postgres.engine),
        `${indent}engine/baseline ${n(c.ratio, 2)} (target ≥ ${n(c.target, 2)}); ` +
          `CPU per request ×${n(c.cpuRatio, 2)} the baseline's`,
        `${indent}engine-bun/baseline-bun ${n(c.bun.ratio, 2)} (not counted against the ` +
          `target); CPU per request ×${n(c.bun.cpuRatio, 2)} the baseline's`,
        `${indent}engine-bun/engine ${n(c.bun.engineToNodeEngine, 2)}, ` +
          `baseline-bun/baseline ${n(c.bun.baselineToNodeBaseline, 2)} (Bun over Node)`,
        `${indent}engine-pg/baseline-pg ${n(c.postgres.ratio, 2)} (target ≥ ${n(c.postgres.target, 2)}); ` +
          `CPU per request ×${n(c.postgres.cpuRatio, 2)} the baseline's`,
        `${indent}engine-pg/baseline ${n(c.postgres.ratioToSqliteBaseline, 2)}`
      )
    }
  })
  // The range across runs; a target is met only if every run met it.
  const range = (values: ReadonlyArray<number>, digits: number) => {
    const low = Math.min(...values)
    const high = Math.max(...values)
    return low.toFixed(digits) === high.toFixed(digits)
      ? n(low, digits)
      : `${n(low, digits)}–${n(high, digits)}`
  }
  lines.push(
    "",
    `Across the ${report.runs.length} runs (min–max; each ratio within its run):`,
    `${"route".padEnd(30)}${"servers".padEnd(28)}${"throughput".padStart(12)}` +
      `${"CPU/request".padStart(14)}  target`
  )
  for (const [k, first] of (report.runs[0] ?? []).entries()) {
    const cs = report.runs.map((run) => run[k]!)
    const line = (
      route: string,
      servers: string,
      ratios: ReadonlyArray<number>,
      cpu: ReadonlyArray<number>,
      target?: { readonly at: number; readonly met: boolean }
    ) =>
      `${route.padEnd(30)}${servers.padEnd(28)}${`×${range(ratios, 2)}`.padStart(12)}` +
      `${`×${range(cpu, 2)}`.padStart(14)}  ` +
      (target === undefined ? "" : `≥ ${n(target.at, 1)}: ${verdict(target.met)}`)
    lines.push(
      line(
        first.route,
        "engine / baseline",
        cs.map((c) => c.ratio),
        cs.map((c) => c.cpuRatio),
        { at: first.target, met: report.targets[first.route] === true }
      ),
      line(
        "",
        "engine-pg / baseline-pg",
        cs.map((c) => c.postgres.ratio),
        cs.map((c) => c.postgres.cpuRatio),
        { at: first.postgres.target, met: report.targets[`${first.route} on PostgreSQL`] === true }
      ),
      line(
        "",
        "engine-bun / baseline-bun",
        cs.map((c) => c.bun.ratio),
        cs.map((c) => c.bun.cpuRatio)
      )
    )
  }
  if (report.longPolls) lines.push(...formatLongPolls(report.longPolls))
  if (report.wallet) lines.push(...formatWallet(report.wallet))
  if (report.coldStart) lines.push(...formatColdStart(report.coldStart))
  if (report.logos) lines.push(...formatLogos(report.logos))
  if (report.webhooks) lines.push(...formatWebhooks(report.webhooks))
  if (report.statusUnderLoad) lines.push(...formatStatusUnderLoad(report.statusUnderLoad))
  if (report.testEngine) lines.push(...formatTestEngine(report.testEngine))
  const verdicts = Object.values(report.targets)
  lines.push("", `Targets met: ${verdicts.filter(Boolean).length} of ${verdicts.length}`, "")
  return lines.join("\n")
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "pay-bench-"))
  const started: Array<ServerProcess> = []
  let postgres: Promise<BenchPostgres> | undefined
  const stopAll = () => Promise.all(started.map((server) => server.stop()))
  // The schemas go once the servers that use them have stopped (or been given up on). A
  // setup that failed has already let go of what it had made.
  const dropSchemas = () =>
    postgres?.then(
      (pg) =>
        pg.close().catch((error: unknown) => {
          console.error(`bench: could not drop its PostgreSQL schemas: ${String(error)}`)
        }),
      () => undefined
    )
  // SIGTERM first so the servers shut down as in production; the exit handler SIGKILLs
  // whatever has not stopped within a few seconds, or had not finished starting.
  const abandon = async (why: string, code: number) => {
    console.error(why)
    await Promise.race([stopAll(), sleep(5_000)])
    killAllNow()
    await Promise.race([dropSchemas(), sleep(10_000)])
    rmSync(dir, { recursive: true, force: true })
    process.exit(code)
  }
  process.on("exit", killAllNow)
  process.on("SIGINT", () => void abandon("bench: interrupted", 130))
  process.on("SIGTERM", () => void abandon("bench: terminated", 143))
  setTimeout(
    () => void abandon(`bench: still running after ${RUN_DEADLINE_MS / 1000} s, stopped`, 1),
    RUN_DEADLINE_MS
  ).unref()

  const date = new Date().toISOString()
  const host = machine()
  try {
    // First, alone on the machine: its own server, stopped when it is done.
    const alone = async <A>(title: string, measure: () => Promise<A>) => {
      if (ROUTES_ONLY || LONG_POLLS_ONLY) return undefined
      console.log(title)
      return measure()
    }
    const walletResult = await alone("Wallet flows:", () => measureWallet(dir, wallet, started))
    // Then, still alone, one server at a time: the cold starts.
    const coldStartResult = await alone("Cold start:", () => measureColdStart(dir, coldStart))
    // Then, still alone, merchants created with a logo: its own two servers, stopped after.
    const logosResult = await alone("Logos:", () => measureLogos(dir, logos))
    // Then, still alone, webhook delivery: its own servers and receiver, stopped after.
    const webhooksResult = await alone("Webhooks:", () => measureWebhooks(dir, webhooks))
    // Then, still alone, the status read beside the heaviest listings: its own seeded
    // databases and servers, stopped after.
    const statusLoadResult = await alone("Status under listing load:", () =>
      measureStatusUnderLoad(dir, statusLoad)
    )
    // Then, still alone, the test engine in this process against the standalone server on
    // the sandbox chain (its own server each run, stopped after); a ratio, no target.
    const testEngineResult = await alone("The test engine against the standalone server:", () =>
      measureTestEngine(dir, testEngine, started)
    )
    if (LONG_POLLS_ONLY) {
      console.log("Long-polls:")
      const result = await measureLongPolls(dir, longPolls)
      const report = { date, machine: host, longPolls: result, targets: longPollTargets(result) }
      mkdirSync(RESULTS, { recursive: true })
      writeFileSync(join(RESULTS, "latest.json"), `${JSON.stringify(report, null, 2)}\n`)
      const m = host
      console.log(
        [
          "",
          `Pay engine bench (long-polls only), ${date}`,
          `Machine: ${m.cpu}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB, ` +
            `Node ${m.node}, load average ${m.loadAverageAtStart.toFixed(2)} at start`,
          ...formatLongPolls(result),
          ""
        ].join("\n")
      )
      console.log("Written to bench/results/latest.json")
      return
    }
    // A throwaway embedded server, where there is no local one, can take a while to start.
    console.log("Setting up PostgreSQL…")
    postgres = startPostgres(["engine", "baseline"])
    const pg = await postgres
    const runs = await bench(dir, pg, started)
    // Then the long-polls, alone: the route servers stopped, its own fresh processes.
    await stopAll()
    console.log("Long-polls:")
    const longPollResult = await measureLongPolls(dir, longPolls)
    const every = (route: string, met: (c: Comparison) => boolean) =>
      runs.every((run) => run.every((c) => c.route !== route || met(c)))
    const routes = (runs[0] ?? []).map((c) => c.route)
    const targets = {
      ...Object.fromEntries(routes.map((r) => [r, every(r, (c) => c.met)])),
      ...Object.fromEntries(
        routes.map((r) => [`${r} on PostgreSQL`, every(r, (c) => c.postgres.met)])
      ),
      ...longPollTargets(longPollResult),
      ...(walletResult === undefined
        ? {}
        : { "wallet confirm throughput": walletThroughputMet(walletResult) }),
      ...(statusLoadResult === undefined ? {} : statusLoadTargets(statusLoadResult))
    }
    const report = {
      date,
      machine: host,
      load,
      postgres: describePostgres(pg),
      runs,
      longPolls: longPollResult,
      wallet: walletResult,
      coldStart: coldStartResult,
      logos: logosResult,
      webhooks: webhooksResult,
      statusUnderLoad: statusLoadResult,
      testEngine: testEngineResult,
      targets
    }
    mkdirSync(RESULTS, { recursive: true })
    writeFileSync(join(RESULTS, "latest.json"), `${JSON.stringify(report, null, 2)}\n`)
    console.log(format(report))
    console.log("Written to bench/results/latest.json")
  } catch (error) {
    for (const server of started) {
      const exit = server.exitStatus()
      if (exit !== undefined) {
        console.error(
          `${server.name} ended early (${exit}); its last output:\n${server.recentOutput()}`
        )
      }
    }
    throw error
  } finally {
    await stopAll()
    await dropSchemas()
    rmSync(dir, { recursive: true, force: true })
  }
}

// Exit explicitly: a failed run may leave sockets open that would keep the process alive.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
