/**
 * Scenario 3, many held long-polls: one `GET …/status?maxPollMs=30000` per payment, each on
 * its own connection, all held at once, on the engine (the standalone bundle on SQLite, as
 * `npm start` runs it) and on a bare node:http baseline that only holds the same requests
 * (baseline-longpoll-server.ts), one after the other, each in a fresh process:
 *   one warm-up request on each route (a create, a status, a long-poll woken by a cancel),
 *   forced GCs, VmRSS read (idle); the long-polls opened, the server left until its CPU
 *   time stops moving, forced GCs, VmRSS read (holding); then every payment cancelled,
 *   timing how long each long-poll takes to answer once its cancel's response has arrived.
 * Memory is read inside the server by a bench-only preload (memory-probe.mjs), on SIGUSR2;
 * with BENCH_LONGPOLL_HEAP=1 it also writes heap snapshots, summarised by type here (the
 * snapshots stall the server: that run's wake-up figures are not comparable).
 * The payments are created beforehand by another engine process on the same database, so
 * the measured one starts fresh. Run alone with `npm run bench:longpoll`;
 * BENCH_LONG_POLLS (10,000), BENCH_LONGPOLL_RUNS (3).
 */
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import {
  BENCH_API_KEY,
  BENCH_PAY_CONFIG,
  cancelPayment,
  createMerchant,
  createPayment,
  inParallel,
  paymentStatus,
  statusPath,
  type Target
} from "./client.js"
import { formatDifference, formatSummary, summarise } from "./heap-summary.js"
import { type MemoryRead, memoryProbe, PROBE_NODE_ARGS, probeEnv } from "./memory-probe.js"
import {
  BUNDLES,
  bundleBaselines,
  callersSettings,
  ROOT,
  runBenchAlone,
  type ServerProcess,
  startServer
} from "./server-process.js"

export interface LongPollSettings {
  readonly longPolls: number
  readonly maxPollMs: number
  /** Creates and cancels run this many at a time. */
  readonly concurrency: number
  readonly runs: number
  /** Heap snapshots idle and holding, summarised by type (BENCH_LONGPOLL_HEAP=1). */
  readonly heapSnapshots: boolean
  readonly deadlineMs: number
}

const whole = (name: string, fallback: number, min: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be at least ${min}`)
  return value
}

export const longPollSettings = (): LongPollSettings => {
  const runs = whole("BENCH_LONGPOLL_RUNS", 3, 1)
  const heapSnapshots = process.env.BENCH_LONGPOLL_HEAP === "1"
  return {
    longPolls: whole("BENCH_LONG_POLLS", 10_000, 1),
    maxPollMs: 30_000,
    concurrency: 50,
    runs,
    heapSnapshots,
    deadlineMs: 60_000 + runs * (heapSnapshots ? 400_000 : 180_000)
  }
}

type Kind = "baseline" | "engine"

/** One server's figures in one run. */
export interface LongPollResult {
  readonly kind: Kind
  readonly longPolls: number
  /** Warmed up, forced GCs, before any long-poll. */
  readonly idle: MemoryRead
  /** Holding every long-poll, quiet, forced GCs. */
  readonly holding: MemoryRead
  readonly openSeconds: number
  readonly cancelSeconds: number
  /** From a cancel's response arriving to its long-poll's answer arriving (negative: before). */
  readonly wakeLatencyMs: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly answeredCancelled: number
  /** Answered 200 with another status: let go before their payment was cancelled. */
  readonly answeredEarly: number
  readonly failed: number
  /** The heap by type, idle and holding (BENCH_LONGPOLL_HEAP=1). */
  readonly heap?: ReadonlyArray<string>
}

export interface LongPollRun {
  readonly baseline: LongPollResult
  readonly engine: LongPollResult
}

export interface LongPollBenchResult {
  readonly settings: LongPollSettings
  readonly runs: ReadonlyArray<LongPollRun>
}

interface Poll {
  cancelledAt?: number
  answeredAt?: number
  statusCode?: number
  status?: string
  error?: string
}

// A window of connections being opened rather than all at once: a burst past the server's
// accept queue (511 by default) costs each dropped SYN a one-second retransmit.
const OPENING_AT_ONCE = 100
const MB = 1_000_000
export const MEMORY_TARGET_MB = 100
export const WAKE_TARGET_MS = 100
const ENGINE_DIR = `${BUNDLES}/longpoll-server`
const ENGINE_BUNDLE = `${ENGINE_DIR}/main.mjs`
const BASELINE_BUNDLE = `${BUNDLES}/baseline-longpoll-server.mjs`

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
  Number.NaN

const openPoll = (agent: Agent, target: Target, paymentId: string, maxPollMs: number) => {
  const poll: Poll = {}
  let markSent = () => {}
  const sent = new Promise<void>((done) => {
    markSent = done
  })
  const answered = new Promise<void>((done) => {
    const req = request(target.url + statusPath(paymentId, maxPollMs), {
      agent,
      headers: { "Api-Key": BENCH_API_KEY, "Merchant-Id": target.merchantId }
    })
    req.on("finish", markSent)
    req.on("response", (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        poll.answeredAt = performance.now()
        poll.statusCode = res.statusCode ?? 0
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { status?: unknown }
          poll.status = String(body.status)
        } catch {
          poll.error = "the answer is not JSON"
        }
        markSent()
        done()
      })
    })
    req.on("error", (error) => {
      poll.answeredAt = performance.now()
      poll.error = error.message
      markSent()
      done()
    })
    req.end()
  })
  return { poll, sent, answered }
}

// Held long-polls cost the server nothing once taken in, so a server whose CPU time stops
// growing has read and parked every request we sent.
const waitUntilIdle = async (server: ServerProcess, maxMs: number) => {
  const until = performance.now() + maxMs
  let quietChecks = 0
  let before = server.cpuTicks()
  while (quietChecks < 3 && performance.now() < until) {
    await sleep(250)
    const now = server.cpuTicks()
    quietChecks = now - before <= 2 ? quietChecks + 1 : 0
    before = now
  }
}

/** One warm-up request on each route the scenario uses, the held path included. */
const warmUp = async (target: Target, agent: Agent, id: string, maxPollMs: number) => {
  await paymentStatus(target, id)
  const poll = openPoll(agent, target, id, maxPollMs)
  await poll.sent
  await sleep(200)
  await cancelPayment(target, id)
  await poll.answered
  if (poll.poll.status !== "cancelled") {
    throw new Error(`${target.name}: the warm-up long-poll answered ${JSON.stringify(poll.poll)}`)
  }
}

const scenario = async (
  kind: Kind,
  server: ServerProcess,
  target: Target,
  ids: ReadonlyArray<string>,
  settings: LongPollSettings,
  probeDir: string
): Promise<LongPollResult> => {
  // No keep-alive and no socket cap: every long-poll holds its own connection.
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })
  try {
    const probe = memoryProbe(server, probeDir)
    await warmUp(target, agent, await createPayment(target, 0), settings.maxPollMs)
    await waitUntilIdle(server, 10_000)
    const idle = await probe()

    const openStart = performance.now()
    const polls = new Array<ReturnType<typeof openPoll>>(ids.length)
    await inParallel(ids.length, OPENING_AT_ONCE, (i) => {
      polls[i] = openPoll(agent, target, ids[i]!, settings.maxPollMs)
      return polls[i].sent
    })
    await sleep(1000)
    await waitUntilIdle(server, 15_000)
    const openSeconds = (performance.now() - openStart) / 1000
    const holding = await probe()

    // Cancelled in the order opened, so no long-poll has waited much longer than the opening
    // took when its cancel comes.
    const cancelStart = performance.now()
    await inParallel(ids.length, settings.concurrency, async (i) => {
      await cancelPayment(target, ids[i]!)
      polls[i]!.poll.cancelledAt = performance.now()
    })
    const cancelSeconds = (performance.now() - cancelStart) / 1000
    await Promise.all(polls.map((p) => p.answered))

    const results = polls.map((p) => p.poll)
    const woken = results.filter(
      (p) => p.status === "cancelled" && p.statusCode === 200 && p.cancelledAt !== undefined
    )
    const latencies = woken.map((p) => p.answeredAt! - p.cancelledAt!).sort((a, b) => a - b)
    const failed = results.filter((p) => p.error !== undefined || p.statusCode !== 200)
    const heap =
      idle.snapshot !== undefined && holding.snapshot !== undefined
        ? heapByType(kind, idle.snapshot, holding.snapshot, ids.length)
        : undefined
    return {
      kind,
      longPolls: ids.length,
      idle,
      holding,
      openSeconds,
      cancelSeconds,
      wakeLatencyMs: {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? Number.NaN
      },
      answeredCancelled: woken.length,
      answeredEarly: results.filter((p) => p.statusCode === 200 && p.status !== "cancelled").length,
      failed: failed.length,
      ...(heap === undefined ? {} : { heap })
    }
  } finally {
    agent.destroy()
  }
}

const heapByType = (kind: Kind, idlePath: string, heldPath: string, polls: number) => {
  const idle = summarise(idlePath)
  const held = summarise(heldPath)
  return [
    `Heap by type, ${kind} (V8 heap snapshots after forced GCs; self size and count by type and constructor or function name):`,
    ...formatSummary("idle, warmed up", idle, 20),
    "",
    ...formatSummary(`holding ${polls.toLocaleString("en-US")} long-polls`, held, 20),
    "",
    ...formatDifference(idle, held, 20, polls)
  ]
}

const engineEnv = (database: string, payConfig: string) => ({
  HOST: "127.0.0.1",
  PORT: "0",
  PAY_DATABASE: database,
  PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
  PAY_CONFIG: payConfig
})

/** Another engine process on the same database creates the run's payments, then stops. */
const createPayments = async (
  database: string,
  payConfig: string,
  settings: LongPollSettings,
  merchant?: string
) => {
  const env = engineEnv(database, payConfig)
  const setup = await startServer({
    name: "engine (setup)",
    command: process.execPath,
    args: [ENGINE_BUNDLE],
    env,
    unsetEnv: callersSettings(env)
  })
  try {
    const merchantId = merchant ?? (await createMerchant(setup.name, setup.url))
    const target = { name: setup.name, url: setup.url, merchantId }
    const ids = await inParallel(settings.longPolls, settings.concurrency, (i) =>
      createPayment(target, 1_000_000 + i)
    )
    return { merchantId, ids }
  } finally {
    await setup.stop()
  }
}

const measureOne = async (
  kind: Kind,
  run: number,
  dir: string,
  database: string,
  payConfig: string,
  merchantId: string,
  ids: ReadonlyArray<string>,
  settings: LongPollSettings
): Promise<LongPollResult> => {
  const probeDir = join(dir, `probe-${kind}-${run}`)
  const env =
    kind === "engine"
      ? { ...engineEnv(database, payConfig), ...probeEnv(probeDir, settings.heapSnapshots) }
      : {
          PORT: "0",
          BASELINE_API_KEY: BENCH_API_KEY,
          ...probeEnv(probeDir, settings.heapSnapshots)
        }
  const server = await startServer({
    name: kind,
    command: process.execPath,
    args: [...PROBE_NODE_ARGS, kind === "engine" ? ENGINE_BUNDLE : BASELINE_BUNDLE],
    env,
    unsetEnv: callersSettings(env)
  })
  try {
    const target = { name: kind, url: server.url, merchantId }
    const result = await scenario(kind, server, target, ids, settings, probeDir)
    console.log(`  run ${run}: ${formatResult(result)}`)
    return result
  } finally {
    await server.stop()
  }
}

export const measureLongPolls = async (
  dir: string,
  settings: LongPollSettings
): Promise<LongPollBenchResult> => {
  // The engine's bundle in a folder of this bench's own, so no other bench's or test's run
  // of examples/standalone/dist is overwritten while it runs.
  execFileSync(process.execPath, ["examples/build.mjs", "main", "--outdir", ENGINE_DIR], {
    cwd: ROOT,
    stdio: "inherit"
  })
  await bundleBaselines(["bench/baseline-longpoll-server.ts"], [])
  const payConfig = join(dir, "longpoll-pay-config.json")
  writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
  const database = join(dir, "longpoll.sqlite")
  const runs: Array<LongPollRun> = []
  let merchant: string | undefined
  for (let run = 1; run <= settings.runs; run++) {
    console.log(`  run ${run}/${settings.runs}: creating ${settings.longPolls} payments…`)
    const { merchantId, ids } = await createPayments(database, payConfig, settings, merchant)
    merchant = merchantId
    // The order alternates, so neither server always comes first after the setup.
    const order: ReadonlyArray<Kind> =
      run % 2 === 1 ? ["baseline", "engine"] : ["engine", "baseline"]
    const results: Partial<Record<Kind, LongPollResult>> = {}
    for (const kind of order) {
      results[kind] = await measureOne(
        kind,
        run,
        dir,
        database,
        payConfig,
        merchantId,
        ids,
        settings
      )
    }
    runs.push({ baseline: results.baseline!, engine: results.engine! })
  }
  return { settings, runs }
}

const n = (x: number, digits = 0) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

const delta = (r: LongPollResult) => r.holding.vmRssBytes - r.idle.vmRssBytes

const formatResult = (r: LongPollResult) =>
  `${r.kind.padEnd(9)} VmRSS ${n(r.idle.vmRssBytes / MB)} → ${n(r.holding.vmRssBytes / MB)} MB ` +
  `(+${n(delta(r) / MB, 1)} MB, ${n(delta(r) / r.longPolls)} B/poll; heap used ` +
  `${n(r.idle.heapUsed / MB, 1)} → ${n(r.holding.heapUsed / MB, 1)} MB, ` +
  `${n((r.holding.heapUsed - r.idle.heapUsed) / r.longPolls)} B/poll); opened in ${n(r.openSeconds, 1)} s; ` +
  `wake p50 ${n(r.wakeLatencyMs.p50, 1)} ms, p99 ${n(r.wakeLatencyMs.p99, 1)} ms, ` +
  `max ${n(r.wakeLatencyMs.max, 1)} ms; cancelled ${n(r.answeredCancelled)}, early ` +
  `${n(r.answeredEarly)}, failed ${n(r.failed)}`

/** Issue 18's targets, met only if every run met them. */
export const longPollTargets = (result: LongPollBenchResult) => ({
  "long-poll memory": result.runs.every((r) => delta(r.engine) / MB < MEMORY_TARGET_MB),
  "long-poll wake-up": result.runs.every(
    (r) =>
      r.engine.answeredCancelled === r.engine.longPolls &&
      r.engine.wakeLatencyMs.p99 <= WAKE_TARGET_MS
  )
})

export const formatLongPolls = (result: LongPollBenchResult): Array<string> => {
  const { settings, runs } = result
  const verdict = (met: boolean) => (met ? "met" : "MISSED")
  const met = longPollTargets(result)
  const range = (values: ReadonlyArray<number>, digits: number, unit = "") => {
    const low = Math.min(...values)
    const high = Math.max(...values)
    return low.toFixed(digits) === high.toFixed(digits)
      ? `${n(low, digits)}${unit}`
      : `${n(low, digits)}–${n(high, digits)}${unit}`
  }
  const of = (pick: (r: LongPollRun) => number) => runs.map(pick)
  const lines = [
    "",
    `Long-polls: ${n(settings.longPolls)} held at once on GET …/status?maxPollMs=${settings.maxPollMs}, ` +
      "each on its own connection, on the engine (standalone bundle, SQLite) and on a bare " +
      "node:http server holding the same requests (bench/baseline-longpoll-server.ts), each " +
      `in a fresh process, ${runs.length} run${runs.length === 1 ? "" : "s"}`,
    "  memory: VmRSS after one warm-up request on each route and forced GCs, then holding them " +
      "all, the server quiet, forced GCs (read in the server by bench/memory-probe.mjs)",
    "  wake-up: from a cancel's response arriving to its long-poll's answer arriving; " +
      `every payment cancelled, ${settings.concurrency} at a time, in the order opened`
  ]
  runs.forEach((r, i) => {
    lines.push(
      `  run ${i + 1}: ${formatResult(r.baseline)}`,
      `  run ${i + 1}: ${formatResult(r.engine)}`
    )
  })
  lines.push(
    `  Across the runs (min–max):`,
    `    engine +${range(
      of((r) => delta(r.engine) / MB),
      1,
      " MB"
    )}, baseline ` +
      `+${range(
        of((r) => delta(r.baseline) / MB),
        1,
        " MB"
      )}, engine/baseline ` +
      `×${range(
        of((r) => delta(r.engine) / delta(r.baseline)),
        2
      )}; engine over baseline ` +
      `${range(
        of((r) => (delta(r.engine) - delta(r.baseline)) / settings.longPolls),
        0,
        " B"
      )} per poll`,
    `    engine memory added by ${n(settings.longPolls)} long-polls (target < ${MEMORY_TARGET_MB} MB): ` +
      verdict(met["long-poll memory"]),
    `    wake-up engine p50 ${range(
      of((r) => r.engine.wakeLatencyMs.p50),
      1,
      " ms"
    )}, p99 ` +
      `${range(
        of((r) => r.engine.wakeLatencyMs.p99),
        1,
        " ms"
      )}, max ` +
      `${range(
        of((r) => r.engine.wakeLatencyMs.max),
        1,
        " ms"
      )}; baseline p50 ` +
      `${range(
        of((r) => r.baseline.wakeLatencyMs.p50),
        1,
        " ms"
      )}, p99 ` +
      `${range(
        of((r) => r.baseline.wakeLatencyMs.p99),
        1,
        " ms"
      )}`,
    `    engine wake-up p99 (target ≤ ${WAKE_TARGET_MS} ms, every long-poll answered "cancelled"): ` +
      verdict(met["long-poll wake-up"])
  )
  if (runs.some((r) => r.engine.answeredEarly + r.baseline.answeredEarly > 0)) {
    lines.push(
      "  (answered before their cancel: their 30 s ran out first, as opening and cancelling " +
        "took longer than that)"
    )
  }
  if (settings.heapSnapshots) {
    lines.push(
      "  (heap snapshots were written, idle and holding: the holding VmRSS keeps what writing " +
        "the idle one took from malloc, and the wake-up figures are disturbed; read memory from " +
        "a run without them)"
    )
  }
  for (const r of runs) {
    for (const x of [r.baseline, r.engine]) if (x.heap) lines.push("", ...x.heap)
  }
  return lines
}

// Run alone (`npm run bench:longpoll`).
runBenchAlone(import.meta.url, {
  name: "longpoll",
  title: "Long-polls",
  deadlineMs: longPollSettings().deadlineMs,
  measure: (dir) => measureLongPolls(dir, longPollSettings()),
  report: (longPolls) => ({ longPolls }),
  file: "longpoll",
  format: formatLongPolls
})
