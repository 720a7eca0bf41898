/**
 * The test engine (@pay/testing's `createTestEngine`) against the standalone server: the
 * time to create and pay payments one at a time, as a platform's unit tests would, in
 * each; a speed-up ratio, no target. Both sides do the same per payment: the partner's
 * `POST /v1/payments` (the same body and headers, an Idempotency-Key each), then a wallet
 * paying it through the gateway (options, fetch, an EIP-712 signature made in this
 * process, confirm) until the payment is `succeeded` ("paid" means that on both sides).
 *
 * - In this process: `createTestEngine()` (in-memory stores, the scripted chain, the clock
 *   the test moves), a partner, a merchant with a settlement destination, then
 *   BENCH_TEST_ENGINE_PAYMENTS payments (1,000), each created through `engine.fetch` and
 *   paid with `engine.pay(id)` (a new buyer key each, minted the amount by the scripted
 *   chain, as a test calls it).
 * - The standalone server as `npm start` runs it (its bundle on plain node) in sandbox mode
 *   on a SQLite file, the EVM in its process (wallet.ts's server, shop and wallet flow):
 *   BENCH_TEST_ENGINE_SERVER_PAYMENTS payments (200, fewer than the test engine's: the
 *   per-payment times are compared), over HTTP/1.1 keep-alive on loopback, the wallet's
 *   status long-poll ending at `succeeded`; its buyers funded by the sandbox faucet
 *   beforehand (not timed).
 *
 * Each side pays WARMUP payments first (not timed) on the same engine. BENCH_TEST_ENGINE_RUNS
 * runs (3), which side goes first alternating, a fresh engine and a fresh server each run;
 * the ratio is of two figures of the same run, and the report quotes the range across runs.
 * Before the runs, the test engine's start: `createTestEngine()` from the call to resolved,
 * BENCH_TEST_ENGINE_STARTS times (20) in this process after one warm-up start, and the first
 * (cold) call in BENCH_TEST_ENGINE_COLD fresh node processes (5) loading @pay/testing
 * bundled by esbuild.
 *
 * Part of `npm run bench`; `npm run bench:test-engine` runs it alone and writes
 * bench/results/test-engine.json. Bounded in time; it stops its servers whatever happens.
 */
import { randomUUID } from "node:crypto"
import { loadavg } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { createTestEngine, type TestEngine } from "@pay/testing"
import { build } from "esbuild"
import { BUNDLES, ROOT, runBenchAlone, type ServerProcess, spawnTracked } from "./server-process.js"
import {
  buildWalletServer,
  fundedBuyers,
  startWalletServer,
  walletPays,
  walletShop
} from "./wallet.js"
import {
  type Buyer,
  envInteger,
  expectStatus,
  httpClient,
  MS_PER_TICK,
  type Percentiles,
  percentiles,
  withinDeadline
} from "./wallet-support.js"

export interface TestEngineSettings {
  readonly runs: number
  /** Payments created and paid by the test engine in each run. */
  readonly payments: number
  /** Payments created and paid through the standalone server in each run. */
  readonly serverPayments: number
  /** Payments paid first on each side, not timed. */
  readonly warmup: number
  /** createTestEngine() calls timed in this process, after one not timed. */
  readonly starts: number
  /** Fresh processes, each timing its first createTestEngine() call. */
  readonly coldProcesses: number
  readonly deadlineMs: number
}

/** One side's run: its start, its setup, and its payments one at a time. */
export interface SideRun {
  readonly payments: number
  /** The test engine: createTestEngine() called to resolved; the server: spawn to listening. */
  readonly startMs: number
  /** The partner, merchant and settlement destination (the server: its wallet app and the
   * funded buyers too). */
  readonly setupMs: number
  /** The timed payments' wall time. */
  readonly loopMs: number
  /** loopMs / payments. */
  readonly perPaymentMs: number
  /** Each payment, create and pay, and the two apart. */
  readonly ms: {
    readonly each: Percentiles
    readonly create: Percentiles
    readonly pay: Percentiles
  }
  /** The mean per payment over each tenth of the timed payments, in order. */
  readonly tenthsMs: ReadonlyArray<number>
  /** This process's CPU time per payment (for the test engine, all of it). */
  readonly cpuMsPerPayment: number
  /** The server process's CPU time per payment (all its threads); absent for the test engine. */
  readonly serverCpuMsPerPayment?: number
}

export interface TestEngineRun {
  readonly first: "test engine" | "server"
  readonly testEngine: SideRun
  readonly server: SideRun
  /** The server's per-payment time over the test engine's: how many times faster it is. */
  readonly speedUp: number
}

export interface Spread {
  readonly ms: ReadonlyArray<number>
  readonly min: number
  readonly median: number
  readonly max: number
}

export interface TestEngineResult {
  readonly settings: TestEngineSettings
  readonly machine: { readonly node: string; readonly loadAverageAtStart: number }
  readonly start: {
    /** The first createTestEngine() of this process, before the timed starts (cold JIT;
     * the modules already loaded). */
    readonly warmupMs: number
    /** The timed starts in this process. */
    readonly inProcess: Spread
    /** Fresh processes: the bundle's import, the first call and a second call after it. */
    readonly fresh: {
      readonly processStartToImportMs: Spread
      readonly importMs: Spread
      readonly firstMs: Spread
      readonly secondMs: Spread
    }
  }
  readonly runs: ReadonlyArray<TestEngineRun>
}

const MERCHANT_WALLET = "0x000000000000000000000000000000000000dEaD"
const PAYMENT_BUNDLE = `${BUNDLES}/pay-testing.mjs`

const spread = (ms: ReadonlyArray<number>): Spread => {
  const sorted = [...ms].sort((a, b) => a - b)
  const mid = sorted.length / 2
  return {
    ms,
    min: sorted[0] ?? Number.NaN,
    median:
      sorted.length % 2 === 1
        ? sorted[Math.floor(mid)]!
        : ((sorted[mid - 1] ?? Number.NaN) + (sorted[mid] ?? Number.NaN)) / 2,
    max: sorted.at(-1) ?? Number.NaN
  }
}

/** The payment each side creates: the same body, the same headers. */
const paymentBody = (n: number) => ({
  referenceId: `order-${n}`,
  amount: { value: "1250", unit: "iso4217/USD" }
})

const tenths = (values: ReadonlyArray<number>): Array<number> => {
  const out: Array<number> = []
  for (let t = 0; t < 10; t++) {
    const slice = values.slice(
      Math.floor((t * values.length) / 10),
      Math.floor(((t + 1) * values.length) / 10)
    )
    if (slice.length > 0) out.push(slice.reduce((sum, x) => sum + x, 0) / slice.length)
  }
  return out
}

/** Times `count` payments, each `payOne(n)` returning its create and pay times. */
const timedPayments = async (
  count: number,
  warmup: number,
  payOne: (n: number) => Promise<{ readonly create: number; readonly pay: number }>,
  serverCpuTicks?: () => number
) => {
  for (let i = 0; i < warmup; i++) await payOne(1_000_000 + i)
  const create: Array<number> = []
  const pay: Array<number> = []
  const ticks = serverCpuTicks?.()
  const cpu = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < count; i++) {
    const times = await payOne(i)
    create.push(times.create)
    pay.push(times.pay)
  }
  const loopMs = performance.now() - start
  const used = process.cpuUsage(cpu)
  const each = create.map((c, i) => c + pay[i]!)
  return {
    payments: count,
    loopMs,
    perPaymentMs: loopMs / count,
    ms: { each: percentiles(each), create: percentiles(create), pay: percentiles(pay) },
    tenthsMs: tenths(each),
    cpuMsPerPayment: (used.user + used.system) / 1000 / count,
    ...(serverCpuTicks === undefined || ticks === undefined
      ? {}
      : { serverCpuMsPerPayment: ((serverCpuTicks() - ticks) * MS_PER_TICK) / count })
  }
}

/** The partner API over the engine's own fetch, as @pay/testing's own tests call it. */
const partnerApi =
  (engine: TestEngine, apiKey: string) =>
  async (
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ) => {
    const response = await engine.fetch(
      new Request(`http://pay.test${path}`, {
        method,
        headers: {
          "api-key": apiKey,
          ...(method === "GET" ? {} : { "idempotency-key": randomUUID() }),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    return {
      status: response.status,
      // biome-ignore lint/suspicious/noExplicitAny: the engine's JSON, checked where it is read
      body: (text === "" ? undefined : JSON.parse(text)) as any
    }
  }

const expect201 = (what: string, answer: { readonly status: number; readonly body: unknown }) => {
  if (answer.status !== 201) {
    throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  }
}

/** The test engine in this process: start, a shop, then the payments. */
const testEngineRun = async (settings: TestEngineSettings): Promise<SideRun> => {
  const called = performance.now()
  const engine = await createTestEngine()
  const started = performance.now()
  try {
    const partner = await engine.partners.create({ name: "Bench platform" })
    const api = partnerApi(engine, partner.apiKey)
    const merchant = await api("POST", "/v1/merchants", {
      merchantName: "Bench Shop",
      merchantEmail: "bench@shop.example"
    })
    expect201("POST /v1/merchants", merchant)
    const merchantId: string = merchant.body.merchant.id
    expect201(
      "POST /v1/merchants/{id}/settlements/crypto",
      await api("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
        settlements: [
          {
            asset: engine.network.usdc,
            destination: `${engine.network.chainId}:${MERCHANT_WALLET}`
          }
        ]
      })
    )
    const setupDone = performance.now()
    const timed = await timedPayments(settings.payments, settings.warmup, async (n) => {
      const a = performance.now()
      const created = await api("POST", "/v1/payments", paymentBody(n), {
        "merchant-id": merchantId
      })
      expect201("POST /v1/payments", created)
      const b = performance.now()
      const paid = await engine.pay(created.body.paymentId)
      if (paid.status !== "succeeded") {
        throw new Error(`test engine: payment ${paid.paymentId} ended ${paid.status}`)
      }
      return { create: b - a, pay: performance.now() - b }
    })
    return { startMs: started - called, setupMs: setupDone - started, ...timed }
  } finally {
    await engine.close()
  }
}

/** The standalone server on SQLite with the sandbox chain: start, a shop, the payments. */
const serverRun = async (
  dir: string,
  run: number,
  settings: TestEngineSettings,
  started: Array<ServerProcess>
): Promise<SideRun> => {
  const database = join(dir, `test-engine-server-${run}.sqlite`)
  const called = performance.now()
  const server = await startWalletServer(`engine-sandbox-${run}`, database, started)
  const listening = performance.now()
  const http = httpClient(server.url)
  try {
    const shop = await walletShop(server, http, database)
    const buyers: Array<Buyer> = await fundedBuyers(http, settings.warmup + settings.serverPayments)
    const setupDone = performance.now()
    let next = 0
    const timed = await timedPayments(
      settings.serverPayments,
      settings.warmup,
      async (n) => {
        const a = performance.now()
        const created = await expectStatus(
          http.call("POST", "/v1/payments", {
            headers: { ...shop.partnerHeaders, "Idempotency-Key": randomUUID() },
            body: paymentBody(n)
          }),
          "POST /v1/payments",
          201
        )
        const b = performance.now()
        await walletPays(http, shop.walletHeaders, created.paymentId, buyers[next++]!)
        return { create: b - a, pay: performance.now() - b }
      },
      () => server.cpuTicks()
    )
    return { startMs: listening - called, setupMs: setupDone - listening, ...timed }
  } finally {
    http.close()
    await server.stop()
  }
}

/** createTestEngine() from the call to resolved, each engine closed before the next. */
const startOnce = async (): Promise<number> => {
  const called = performance.now()
  const engine = await createTestEngine()
  const ms = performance.now() - called
  await engine.close()
  return ms
}

/** A fresh node process: the bundle's import, then two createTestEngine() calls, timed. */
const FRESH_PROCESS = `
const bundle = process.env.BENCH_TEST_ENGINE_BUNDLE
const t0 = performance.now()
const { createTestEngine } = await import(bundle)
const t1 = performance.now()
const first = await createTestEngine()
const t2 = performance.now()
await first.close()
const t3 = performance.now()
const second = await createTestEngine()
const t4 = performance.now()
await second.close()
console.log(JSON.stringify({ processStartToImportMs: t0, importMs: t1 - t0, firstMs: t2 - t1, secondMs: t4 - t3 }))
process.exit(0)
`

interface FreshStart {
  readonly processStartToImportMs: number
  readonly importMs: number
  readonly firstMs: number
  readonly secondMs: number
}

const freshStart = async (): Promise<FreshStart> => {
  const { child, exited } = spawnTracked(
    process.execPath,
    ["--input-type=module", "-e", FRESH_PROCESS],
    {
      ...process.env,
      BENCH_TEST_ENGINE_BUNDLE: pathToFileURL(join(ROOT, PAYMENT_BUNDLE)).href
    }
  )
  let out = ""
  let err = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8")
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8")
  })
  await exited
  const line = out.trim().split("\n").at(-1) ?? ""
  if (child.exitCode !== 0 || !line.startsWith("{")) {
    throw new Error(`a fresh process's start failed (${child.exitCode}): ${err}${out}`)
  }
  return JSON.parse(line) as FreshStart
}

/** @pay/testing from its sources, with its dependencies, in one ESM file for plain node. */
const bundleTestEngine = () =>
  build({
    absWorkingDir: ROOT,
    entryPoints: ["packages/testing/src/index.ts"],
    outfile: PAYMENT_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@pay/source"],
    // The few CommonJS dependencies require Node's modules.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })

const log = (line: string) => console.log(`  ${line}`)

const measure = async (
  dir: string,
  settings: TestEngineSettings,
  started: Array<ServerProcess>
): Promise<TestEngineResult> => {
  const machine = { node: process.version, loadAverageAtStart: loadavg()[0] ?? 0 }
  buildWalletServer()
  await bundleTestEngine()

  log(`the test engine's start: ${settings.coldProcesses} fresh processes…`)
  const fresh: Array<FreshStart> = []
  for (let i = 0; i < settings.coldProcesses; i++) fresh.push(await freshStart())
  log(`the test engine's start: 1 + ${settings.starts} in this process…`)
  const warmupMs = await startOnce()
  const inProcess: Array<number> = []
  for (let i = 0; i < settings.starts; i++) inProcess.push(await startOnce())

  const runs: Array<TestEngineRun> = []
  for (let run = 1; run <= settings.runs; run++) {
    const engineFirst = run % 2 === 1
    const side = async (which: "test engine" | "server") => {
      log(
        `run ${run}/${settings.runs}: ${which === "test engine" ? `the test engine, ${settings.payments}` : `the server, ${settings.serverPayments}`} payments…`
      )
      return which === "test engine"
        ? testEngineRun(settings)
        : serverRun(dir, run, settings, started)
    }
    const a = await side(engineFirst ? "test engine" : "server")
    const b = await side(engineFirst ? "server" : "test engine")
    const testEngine = engineFirst ? a : b
    const server = engineFirst ? b : a
    runs.push({
      first: engineFirst ? "test engine" : "server",
      testEngine,
      server,
      speedUp: server.perPaymentMs / testEngine.perPaymentMs
    })
  }
  return {
    settings,
    machine,
    start: {
      warmupMs,
      inProcess: spread(inProcess),
      fresh: {
        processStartToImportMs: spread(fresh.map((f) => f.processStartToImportMs)),
        importMs: spread(fresh.map((f) => f.importMs)),
        firstMs: spread(fresh.map((f) => f.firstMs)),
        secondMs: spread(fresh.map((f) => f.secondMs))
      }
    },
    runs
  }
}

/** The test engine against the server, within `settings.deadlineMs`; servers stopped either way. */
export const measureTestEngine = (
  dir: string,
  settings: TestEngineSettings,
  started: Array<ServerProcess>
): Promise<TestEngineResult> =>
  withinDeadline(measure(dir, settings, started), settings.deadlineMs, "the test engine bench")

/** The settings from the environment (BENCH_TEST_ENGINE_*), the deadline grown to fit them. */
export const testEngineSettings = (): TestEngineSettings => {
  const runs = envInteger("BENCH_TEST_ENGINE_RUNS", 3, 1)
  const payments = envInteger("BENCH_TEST_ENGINE_PAYMENTS", 1_000, 1)
  const serverPayments = envInteger("BENCH_TEST_ENGINE_SERVER_PAYMENTS", 200, 1)
  const starts = envInteger("BENCH_TEST_ENGINE_STARTS", 20, 1)
  const coldProcesses = envInteger("BENCH_TEST_ENGINE_COLD", 5, 1)
  const warmup = 10
  return {
    runs,
    payments,
    serverPayments,
    warmup,
    starts,
    coldProcesses,
    // The builds, then 10 s a fresh start and 2 s a start in process at most; each run 100 ms
    // a test engine payment and 250 ms a server payment at most, a minute for the server's
    // start and setup.
    deadlineMs:
      120_000 +
      coldProcesses * 10_000 +
      starts * 2_000 +
      runs * ((warmup + payments) * 100 + 60_000 + (warmup + serverPayments) * 250)
  }
}

/** The report's section. */
export const formatTestEngine = (r: TestEngineResult): Array<string> => {
  const n = (x: number, digits = 1) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const range = (values: ReadonlyArray<number>, digits = 1) => {
    const low = Math.min(...values)
    const high = Math.max(...values)
    return n(low, digits) === n(high, digits)
      ? n(low, digits)
      : `${n(low, digits)}–${n(high, digits)}`
  }
  const s = r.settings
  const st = r.start
  const fewer = s.serverPayments !== s.payments
  const runs = r.runs
  const p = (x: Percentiles) => `${n(x.p50)} / ${n(x.p95)} / ${n(x.max)}`
  const lines = [
    "",
    `The test engine (createTestEngine, @pay/testing) against the standalone server: create and ` +
      `pay, one payment at a time, ${s.runs} runs, which goes first alternating`,
    `  test engine: in this process, ${n(s.payments, 0)} payments a run, each POST /v1/payments ` +
      "through engine.fetch then engine.pay(id) (a new buyer key, minted by the scripted chain)",
    `  server: npm start's bundle on plain node, the sandbox chain in its process, SQLite; ` +
      `${n(s.serverPayments, 0)} payments a run${fewer ? " (FEWER than the test engine's: the per-payment times are compared)" : ""}, ` +
      "each POST /v1/payments then a wallet over HTTP (options, fetch, sign, confirm, status long-poll); " +
      "buyers funded by the faucet beforehand, not timed",
    `  "paid": the payment reached succeeded, on both; ${s.warmup} payments first on each side, ` +
      `not timed; load average ${n(r.machine.loadAverageAtStart, 2)} at start, Node ${r.machine.node}`,
    "",
    `  ${"run".padEnd(6)}${"side".padEnd(13)}${"payments".padStart(9)}${"loop s".padStart(9)}` +
      `${"ms/payment".padStart(12)}  ${"each p50 / p95 / max".padEnd(24)}` +
      `${"create p50".padStart(11)}${"pay p50".padStart(9)}${"CPU ms/pmt".padStart(12)}`
  ]
  runs.forEach((run, i) => {
    const row = (label: string, side: SideRun, first: boolean) =>
      `  ${(first ? `${i + 1}/${runs.length}` : "").padEnd(6)}${label.padEnd(13)}` +
      `${n(side.payments, 0).padStart(9)}${n(side.loopMs / 1000).padStart(9)}` +
      `${n(side.perPaymentMs, 2).padStart(12)}  ${p(side.ms.each).padEnd(24)}` +
      `${n(side.ms.create.p50, 2).padStart(11)}${n(side.ms.pay.p50, 2).padStart(9)}` +
      `${(side.serverCpuMsPerPayment === undefined ? n(side.cpuMsPerPayment) : `${n(side.serverCpuMsPerPayment)}+${n(side.cpuMsPerPayment)}`).padStart(12)}`
    const [x, y] =
      run.first === "test engine"
        ? ([
            ["test engine", run.testEngine],
            ["server", run.server]
          ] as const)
        : ([
            ["server", run.server],
            ["test engine", run.testEngine]
          ] as const)
    lines.push(
      row(x[0], x[1], true),
      row(y[0], y[1], false),
      `  ${"".padEnd(6)}speed-up (server ms/payment over the test engine's): ×${n(run.speedUp, 2)}`
    )
  })
  const te = runs.map((run) => run.testEngine)
  const sv = runs.map((run) => run.server)
  lines.push(
    "",
    `  Across the ${runs.length} runs (min–max):`,
    `    per payment: test engine ${range(
      te.map((x) => x.perPaymentMs),
      2
    )} ms, server ` +
      `${range(
        sv.map((x) => x.perPaymentMs),
        2
      )} ms; speed-up ×${range(
        runs.map((run) => run.speedUp),
        2
      )} (the server's time over the test engine's, each run's own pair)`,
    `    ${n(s.payments, 0)} payments in the test engine: ${range(te.map((x) => x.loopMs / 1000))} s ` +
      `(measured); through the server: ${n(s.serverPayments, 0)} took ` +
      `${range(sv.map((x) => x.loopMs / 1000))} s` +
      (fewer
        ? `, ${range(sv.map((x) => (x.perPaymentMs * s.payments) / 1000))} s for ${n(s.payments, 0)} at that rate (extrapolated)`
        : ""),
    `    start and setup: createTestEngine() ${range(te.map((x) => x.startMs))} ms + shop ` +
      `${range(te.map((x) => x.setupMs))} ms; the server's spawn to listening ` +
      `${range(sv.map((x) => x.startMs))} ms + shop, wallet app and ` +
      `${n(s.warmup + s.serverPayments, 0)} funded buyers ${range(
        sv.map((x) => x.setupMs),
        0
      )} ms`,
    `    CPU per payment: test engine ${range(te.map((x) => x.cpuMsPerPayment))} ms (this process, ` +
      `all of it); server ${range(sv.map((x) => x.serverCpuMsPerPayment ?? Number.NaN))} ms ` +
      `(its process) + ${range(sv.map((x) => x.cpuMsPerPayment))} ms (this process: HTTP client, signing)`,
    `    test engine per payment, mean over each tenth of the run: ` +
      te.map((x) => x.tenthsMs.map((t) => n(t)).join(" ")).join(" | "),
    "",
    `  The test engine's start, createTestEngine() called to resolved:`,
    `    in this process, ${st.inProcess.ms.length} starts after one warm-up (${n(st.warmupMs)} ms): ` +
      `median ${n(st.inProcess.median)} ms, ${n(st.inProcess.min)}–${n(st.inProcess.max)} ms`,
    `    in ${st.fresh.firstMs.ms.length} fresh node processes (@pay/testing bundled by esbuild, ` +
      `plain node): the first call median ${n(st.fresh.firstMs.median)} ms ` +
      `(${n(st.fresh.firstMs.min)}–${n(st.fresh.firstMs.max)}), a second call ` +
      `${n(st.fresh.secondMs.median)} ms (${n(st.fresh.secondMs.min)}–${n(st.fresh.secondMs.max)}); ` +
      `before them, the bundle's import ${n(st.fresh.importMs.median)} ms ` +
      `(${n(st.fresh.importMs.min)}–${n(st.fresh.importMs.max)}) after node's own start ` +
      `${n(st.fresh.processStartToImportMs.median)} ms`
  )
  return lines
}

runBenchAlone(import.meta.url, {
  name: "test-engine",
  title: "The test engine against the standalone server",
  deadlineMs: testEngineSettings().deadlineMs + 30_000,
  measure: (dir) => measureTestEngine(dir, testEngineSettings(), []),
  report: (testEngine) => ({ date: new Date().toISOString(), testEngine }),
  file: "test-engine",
  format: formatTestEngine
})
