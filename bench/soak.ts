/**
 * The soak bench (issue 40), `npm run bench:soak`: one engine under mixed traffic for
 * 20 minutes (`--minutes N` or SOAK_MINUTES), to show that its memory and its latencies
 * hold still over time.
 *
 * It builds its own bundles (bench/dist/soak), starts the sandbox chain in a process of its
 * own (`npm run chain`'s bundle: its EVM grows with every block, and would otherwise be
 * counted as the engine's memory), the engine as `npm start` runs it on a SQLite file with
 * a PAY_CONFIG naming that chain, and a webhook receiver on 127.0.0.1 in this process; then
 * sends the mix of bench/soak-traffic.ts (about 35 engine requests/s at fixed rates,
 * wallet payments settling on the chain, webhooks to the receiver, and a bare node:http
 * server in its own process asked as often as the status route, for the machine's own
 * noise) and, every minute, prints a row (sizes in MB, times in ms; soak-report.ts's
 * COLUMNS say what each is): the engine's VmRSS (read from /proc every second: the
 * minute's lowest and highest read), its heap used and reserved after its last full
 * collection and those collections' pauses, its own /metrics gauges, its CPU time, its
 * event-loop delay (a bench-only preload, bench/soak-probe.mjs: /metrics reports none),
 * this process's event-loop delay, the chain process's RSS, the load average, and each
 * route's p99 over the minute (`!n`: n errors).
 *
 * After the last minute the traffic stops, every flow started is awaited, and every event
 * the engine lists (GET /v1/events) must have reached the receiver. The verdict: FAIL (exit
 * 1) if the engine's RSS grows more than 10 % from minute 5 to the end, or a judged route's
 * p99 doubles (minutes 3-5 against the last 3, so that one noisy minute on the shared
 * machine decides nothing: soak-report.ts says how each is read), or if any request failed, a
 * wallet payment did not settle or an event was not delivered; PASS (exit 0) otherwise;
 * fewer than 6 minutes draw no verdict (exit 2). Bounded: fixed rates, a deadline, every
 * process it started stopped and its files removed on any exit (Ctrl-C included).
 * `--minute-seconds S` (SOAK_MINUTE_SECONDS) shortens a "minute", to check the bench itself.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { killAllNow, MS_PER_TICK } from "./server-process.js"
import { soakHttp } from "./soak-http.js"
import { startReceiver } from "./soak-receiver.js"
import {
  COLUMNS,
  formatJudgement,
  judge,
  MIN_JUDGED_MINUTES,
  type Minute,
  THRESHOLDS,
  tableHeader,
  tableRow
} from "./soak-report.js"
import { INFO, JUDGED, LEGEND, RATES, ROUTES, traffic } from "./soak-traffic.js"
import {
  buildBundles,
  type Chain,
  type Engine,
  openShop,
  type ProbeRead,
  startChain,
  startEngine,
  startReference,
  vmRss,
  writePayConfig
} from "./soak-world.js"
import { expectStatus, type Http, type Json } from "./wallet-support.js"

const settings = () => {
  const { values } = parseArgs({
    options: { minutes: { type: "string" }, "minute-seconds": { type: "string" } },
    strict: true
  })
  const whole = (name: string, given: string | undefined, fallback: number) => {
    const value = Number(given ?? fallback)
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name} must be a whole number, at least 1`)
    return value
  }
  return {
    minutes: whole("--minutes (SOAK_MINUTES)", values.minutes ?? process.env.SOAK_MINUTES, 20),
    minuteMs:
      1000 *
      whole(
        "--minute-seconds (SOAK_MINUTE_SECONDS)",
        values["minute-seconds"] ?? process.env.SOAK_MINUTE_SECONDS,
        60
      )
  }
}

const RESULTS = fileURLToPath(new URL("./results/", import.meta.url))
/** After the traffic: flows still settling, then the events' delivery; at most this long. */
const DRAIN_MS = 240_000
const DELIVERY_MS = 120_000

/** Every event the engine lists for the partner, newest first, page by page. */
const listedEvents = async (http: Http, headers: Record<string, string>) => {
  const events: Array<{ readonly id: string; readonly type: string }> = []
  let cursor: string | undefined
  do {
    const page: Json = await expectStatus(
      http.call(
        "GET",
        `/v1/events?limit=100${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        {
          headers
        }
      ),
      "GET /v1/events"
    )
    for (const event of page.data) events.push({ id: event.id, type: event.type })
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  return events
}

const run = async (dir: string, stopping: Array<() => Promise<void>>): Promise<number> => {
  const { minutes, minuteMs } = settings()
  const log = (line = "") => console.log(line)
  log(
    `Soak: ${minutes} minutes of ${minuteMs / 1000} s, started ${new Date().toISOString()}, node ${process.version}`
  )
  buildBundles()
  const chain: Chain = await startChain()
  stopping.push(chain.stop)
  const receiver = await startReceiver()
  stopping.push(receiver.close)
  const engine: Engine = await startEngine(dir, writePayConfig(dir, chain))
  stopping.push(engine.server.stop)
  const http = soakHttp(engine.server.url)
  stopping.push(async () => http.close())
  const referenceServer = await startReference()
  stopping.push(referenceServer.stop)
  const reference = soakHttp(referenceServer.url)
  stopping.push(async () => reference.close())
  const shop = await openShop(http, engine, chain, receiver.url, receiver.setSecret)
  log(
    `engine pid ${engine.server.pid} at ${engine.server.url}; chain pid ${chain.pid} at ${chain.rpcUrl}`
  )
  log(
    `rates (a second): ${Object.entries(RATES)
      .map(([kind, r]) => `${kind} ${r.perSecond}`)
      .join(", ")}`
  )
  log("columns:")
  for (const line of COLUMNS) log(`  ${line}`)
  log("routes (p99 in ms over the minute; !n: n errors):")
  for (const line of LEGEND) log(`  ${line}`)
  log()

  const benchLoop = monitorEventLoopDelay({ resolution: 10 })
  benchLoop.enable()
  const load = traffic(http, reference, engine, chain, shop, receiver)
  const start = performance.now()
  load.start(start + minutes * minuteMs)
  await engine.probe() // the engine's first read: its histogram starts with the traffic
  log(tableHeader(ROUTES))
  const rows: Array<Minute> = []
  let cpuBefore = engine.server.cpuTicks()
  const probes: Array<ProbeRead> = []
  for (let minute = 1; minute <= minutes; minute++) {
    await sleep(Math.max(0, start + minute * minuteMs - performance.now()))
    const routes = load.recorder.take()
    const memory = load.takeMemory()
    const probe = await engine.probe()
    probes.push(probe)
    const lastMajor = probe.afterMajor.at(-1)
    const before = rows.at(-1)
    const row: Minute = {
      minute,
      ...memory,
      heapUsedBytes: lastMajor?.heapUsedBytes ?? before?.heapUsedBytes ?? Number.NaN,
      heapTotalBytes: lastMajor?.heapTotalBytes ?? before?.heapTotalBytes ?? Number.NaN,
      majorGcs: probe.afterMajor.length,
      majorGcMaxMs: Math.max(0, ...probe.afterMajor.map((gc) => gc.pauseMs)),
      cpuPercent: (((engine.server.cpuTicks() - cpuBefore) * MS_PER_TICK) / minuteMs) * 100,
      loopDelayP99Ms: probe.p99Ms,
      loopDelayMaxMs: probe.maxMs,
      benchLoopDelayP99Ms: benchLoop.percentile(99) / 1e6,
      chainRssBytes: vmRss(chain.pid),
      load: loadavg()[0]!,
      requests: Object.entries(routes)
        .filter(([route]) => !(INFO as ReadonlyArray<string>).includes(route))
        .reduce((sum, [, r]) => sum + r.count, 0),
      routes
    }
    benchLoop.reset()
    cpuBefore = engine.server.cpuTicks()
    rows.push(row)
    log(tableRow(row, ROUTES))
  }

  log()
  log("Traffic stopped; waiting for the flows under way to end.")
  const unfinished = await load.drain(DRAIN_MS)
  const rec = load.recorder
  // The events written until now must all arrive; later ones (expiries) are not waited for.
  const listed = await listedEvents(http, shop.partnerHeaders)
  const until = performance.now() + DELIVERY_MS
  const missing = () => listed.filter((e) => !receiver.eventIds.has(e.id))
  while (missing().length > 0 && performance.now() < until) await sleep(500)
  const undelivered = missing()
  const received = receiver.counts()
  const listedTypes = new Map<string, number>()
  for (const e of listed) listedTypes.set(e.type, (listedTypes.get(e.type) ?? 0) + 1)

  log()
  log("Counts:")
  for (const [what, n] of rec.counts) log(`  ${what}: ${n}`)
  log(
    `  events listed by the engine at the end: ${listed.length} (${[...listedTypes].map(([t, n]) => `${t} ${n}`).join(", ")})`
  )
  log(
    `  webhooks: ${received.deliveries} deliveries of ${receiver.eventIds.size} distinct events, ` +
      `${received.duplicates} duplicates, ${received.badSignatures} bad signatures, ${received.unreadable} unreadable; ` +
      `${undelivered.length} listed events never delivered`
  )
  const totalRequests = rows.reduce((s, m) => s + m.requests, 0)
  log(
    `  engine requests timed: ${totalRequests} (${(totalRequests / ((minutes * minuteMs) / 1000)).toFixed(1)}/s; ` +
      "the partner's held long-polls included, the wallet's status long-polls not)"
  )
  const retries = http.retries()
  log(
    `  GETs sent again after their kept-alive socket was closed under them: ${retries.length}` +
      (retries.length === 0
        ? ""
        : ` (idle ${Math.min(...retries).toFixed(0)} to ${Math.max(...retries).toFixed(0)} ms before)`)
  )
  log(
    `  skipped turns (a kind at its cap of requests in flight): ${load.skipped.size === 0 ? "none" : [...load.skipped].map(([k, n]) => `${k} ${n}`).join(", ")}`
  )
  log(
    `  errors: ${rec.totalErrors.size === 0 ? "none" : [...rec.totalErrors].map(([r, n]) => `${r} ${n}`).join(", ")}`
  )
  for (const error of rec.firstErrors) log(`    ${error}`)
  if (unfinished > 0) log(`  flows still running after ${DRAIN_MS / 1000} s: ${unfinished}`)

  const failures: Array<string> = []
  if (rec.totalErrors.size > 0) failures.push("requests or flows failed")
  if (unfinished > 0) failures.push("flows did not end")
  if (undelivered.length > 0) failures.push(`${undelivered.length} events not delivered`)
  if (received.badSignatures > 0 || received.unreadable > 0) failures.push("bad webhook deliveries")
  const started = rec.counts.get("wallet payments started") ?? 0
  if ((rec.counts.get("wallet payments settled") ?? 0) !== started)
    failures.push("wallet payments not settled")
  // Every figure, each full collection's reads included (gitignored; the text is what is kept).
  const raw = {
    date: new Date().toISOString(),
    node: process.version,
    minutes,
    minuteMs,
    rates: RATES,
    rows,
    probes,
    counts: Object.fromEntries(rec.counts),
    errors: Object.fromEntries(rec.totalErrors)
  }
  mkdirSync(RESULTS, { recursive: true })
  writeFileSync(join(RESULTS, "soak.json"), `${JSON.stringify(raw, null, 2)}\n`)
  log("  every figure, each full collection's reads included: bench/results/soak.json")
  log()
  if (rows.length < MIN_JUDGED_MINUTES) {
    log(
      `NO VERDICT: ${rows.length} minutes; the verdict needs ${MIN_JUDGED_MINUTES}${failures.length > 0 ? ` (and: ${failures.join("; ")})` : ""}`
    )
    return 2
  }
  const judgement = judge(rows, JUDGED, INFO)
  for (const line of formatJudgement(judgement)) log(line)
  if (judgement.rssFailed) failures.push(`RSS grew more than ${THRESHOLDS.rssGrowthPercent} %`)
  const doubled = judgement.routes.filter((r) => r.failed).map((r) => r.route)
  if (doubled.length > 0) failures.push(`p99 doubled: ${doubled.join(", ")}`)
  log()
  log(failures.length === 0 ? "PASS" : `FAIL: ${failures.join("; ")}`)
  return failures.length === 0 ? 0 : 1
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "pay-bench-soak-"))
  const stopping: Array<() => Promise<void>> = []
  const cleanUp = async () => {
    for (const stop of stopping.reverse()) await stop().catch(() => {})
    killAllNow()
    rmSync(dir, { recursive: true, force: true })
  }
  const abandon = (why: string, code: number) => {
    console.error(why)
    killAllNow()
    rmSync(dir, { recursive: true, force: true })
    process.exit(code)
  }
  process.on("exit", killAllNow)
  process.on("SIGINT", () => abandon("bench:soak: interrupted", 130))
  process.on("SIGTERM", () => abandon("bench:soak: terminated", 143))
  const { minutes, minuteMs } = settings()
  // The run, the drain and the delivery check, and ten minutes for the builds and starts.
  const deadlineMs = minutes * minuteMs + DRAIN_MS + DELIVERY_MS + 600_000
  setTimeout(
    () => abandon(`bench:soak: still running after ${deadlineMs / 1000} s, stopped`, 1),
    deadlineMs
  ).unref()
  let code = 1
  try {
    code = await run(dir, stopping)
  } catch (error) {
    console.error(`bench:soak failed: ${error instanceof Error ? error.stack : String(error)}`)
  } finally {
    await cleanUp()
  }
  process.exit(code)
}

await main()
