/**
 * Webhook delivery (issue 16): events per second delivered to a loopback receiver on SQLite
 * and PostgreSQL, and the time from a payment's change to its delivery (p50, p99).
 *
 * The change is a payment's cancellation (`POST /v1/payments/{id}/cancel`): each makes one
 * `payment.cancelled` event and, for the one endpoint registered, one delivery. The
 * payments are created first (a creation makes no event), then the endpoint is registered
 * (`POST /v1/webhook-endpoints {url}`) at the receiver: a node:http server in this process
 * on 127.0.0.1 that answers 204 as soon as a request's body is in, checks every signature
 * (Standard Webhooks, the endpoint's secret), and counts distinct `webhook-id`s (a second
 * copy of one is counted as a duplicate).
 *
 * The engine runs as `npm start` runs it (its esbuild bundle, built here into
 * bench/dist/webhooks-server, on plain node), with PAY_CONFIG, PAY_FETCH_ALLOW_PRIVATE=1 (so
 * it may send to loopback) and its default webhook settings: an instance looks for due
 * deliveries at once after a change it committed made events, after each delivery it sent,
 * and every 250 ms (pollMs, for other processes' changes); at most 8 in flight to one
 * endpoint, 32 per instance. On SQLite a fresh file, on PostgreSQL
 * a fresh schema (bench/postgres.ts) with its default pool (10).
 *
 * The baseline (bench/baseline-webhooks.ts, bundled alike, its own process) does the least
 * the engine must for the same change and delivery, with the same durability: it is
 * described at the top of that file. It runs twice: "baseline" looks for due deliveries at
 * once after each change it wrote, as the engine does; "baseline, polled" only every
 * 250 ms and after each delivery it sent, for what a poll alone would cost. The polled one
 * runs the latency part only.
 *
 * For each run (BENCH_WEBHOOK_RUNS, default 3), each store, each server (fresh, alone on the
 * machine but for this process and PostgreSQL, the order alternating between runs):
 * 1. `warmups` cancellations, their deliveries awaited.
 * 2. Throughput: `events` cancellations sent `concurrency` at a time as fast as they are
 *    answered; events/s = events ÷ the time from the first request sent to the last
 *    delivery received. Also the changes' own rate (to the last answer), the drain (last
 *    answer to last delivery), each event's change-to-delivery time under this load, and
 *    the server's CPU time per event.
 * 3. Latency, idle: `changes` cancellations one at a time; each timed from just before its
 *    request is sent to its delivery's arrival at the receiver. Before each, a pause drawn
 *    uniformly from 0 to 250 ms (the same seeded draws for every server), so a change lands
 *    at any point of a 250 ms poll cycle rather than always just after the wake-up that
 *    follows the previous delivery.
 *
 * Each figure is quoted as the range over the runs (min–max), each ratio computed within a
 * run, and every run's raw figures printed. `npm run bench:webhooks`; BENCH_WEBHOOK_EVENTS
 * (default 2000), BENCH_WEBHOOK_CHANGES (default 40) and BENCH_WEBHOOK_RUNS size it.
 */
import { execFileSync } from "node:child_process"
import { createHmac, timingSafeEqual } from "node:crypto"
import { writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import {
  BENCH_API_KEY,
  BENCH_PAY_CONFIG,
  cancelPayment,
  createMerchant,
  createPayment,
  inParallel,
  type Target
} from "./client.js"
import { type BenchPostgres, startPostgres } from "./postgres.js"
import {
  BUNDLES,
  bundleBaselines,
  callersSettings,
  MS_PER_TICK,
  ROOT,
  runBenchAlone,
  type ServerProcess,
  startServer
} from "./server-process.js"

export interface WebhookBenchSettings {
  readonly runs: number
  /** Cancellations before each server is measured, their deliveries awaited. */
  readonly warmups: number
  /** Cancellations sent for the throughput. */
  readonly events: number
  /** Cancellations in flight at once for the throughput. */
  readonly concurrency: number
  /** Cancellations one at a time for the latency. */
  readonly changes: number
  /** The pause before each of them is drawn from 0 to this. */
  readonly maxPauseMs: number
  /** The longest the last delivery may take after the last change; more fails the bench. */
  readonly drainTimeoutMs: number
  readonly deadlineMs: number
}

const whole = (name: string, fallback: number, min: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be at least ${min}`)
  return value
}

export const webhookSettings = (): WebhookBenchSettings => {
  const runs = whole("BENCH_WEBHOOK_RUNS", 3, 1)
  const events = whole("BENCH_WEBHOOK_EVENTS", 2000, 10)
  const changes = whole("BENCH_WEBHOOK_CHANGES", 40, 5)
  const maxPauseMs = 250
  return {
    runs,
    warmups: 20,
    events,
    concurrency: 16,
    changes,
    maxPauseMs,
    drainTimeoutMs: 120_000,
    // The builds, then per run and store: three starts and payments, the throughput (at
    // worst 100 events/s) and three latency parts (at worst 600 ms a change): about four
    // times what a run takes here.
    deadlineMs: 120_000 + runs * 2 * (60_000 + events * 10 + changes * 3 * 600)
  }
}

type Store = "sqlite" | "postgres"
type Kind = "engine" | "baseline" | "baseline-polled"
const STORES: ReadonlyArray<Store> = ["sqlite", "postgres"]
const STORE_LABELS: Record<Store, string> = { sqlite: "SQLite", postgres: "PostgreSQL" }
const KIND_LABELS: Record<Kind, string> = {
  engine: "engine",
  baseline: "baseline",
  "baseline-polled": "baseline, polled"
}
/** The engine's pool on PostgreSQL (its default, packages/storage-postgres/src/layer.ts). */
const PG_POOL_SIZE = 10
const BASELINE_MERCHANT_ID = "mrch_0000000000baseline00"
const ENGINE_BUNDLE = `${BUNDLES}/webhooks-server/main.mjs`
const BASELINE_BUNDLE = `${BUNDLES}/baseline-webhooks.mjs`

// ---------------------------------------------------------------------------------------
// The receiver

interface Receipt {
  /** performance.now() when the request's body was in. */
  readonly at: number
  readonly paymentId: string
  readonly bytes: number
}

/** What one server's endpoint received. */
class Sink {
  secret: Buffer | undefined
  readonly byEvent = new Map<string, Receipt>()
  readonly byPayment = new Map<string, Receipt>()
  duplicates = 0
  badSignatures = 0
  unexpected = 0
  minBytes = Number.POSITIVE_INFINITY
  maxBytes = 0
  private readonly waiting = new Map<string, (r: Receipt) => void>()
  private countWaiter: { readonly count: number; readonly done: () => void } | undefined

  receive(headers: Record<string, string | string[] | undefined>, body: string, at: number) {
    const id = String(headers["webhook-id"] ?? "")
    if (this.byEvent.has(id)) {
      this.duplicates++
      return
    }
    if (!this.verified(id, String(headers["webhook-timestamp"]), headers, body)) {
      this.badSignatures++
    }
    const event = JSON.parse(body) as {
      type?: string
      data?: { object?: { paymentId?: string } }
    }
    const paymentId = event.data?.object?.paymentId
    if (event.type !== "payment.cancelled" || paymentId === undefined) {
      this.unexpected++
      return
    }
    const receipt = { at, paymentId, bytes: Buffer.byteLength(body) }
    this.byEvent.set(id, receipt)
    this.byPayment.set(paymentId, receipt)
    this.minBytes = Math.min(this.minBytes, receipt.bytes)
    this.maxBytes = Math.max(this.maxBytes, receipt.bytes)
    this.waiting.get(paymentId)?.(receipt)
    this.waiting.delete(paymentId)
    if (this.countWaiter !== undefined && this.byEvent.size >= this.countWaiter.count) {
      this.countWaiter.done()
      this.countWaiter = undefined
    }
  }

  private verified(
    id: string,
    timestamp: string,
    headers: Record<string, string | string[] | undefined>,
    body: string
  ) {
    if (this.secret === undefined) return false
    const expected = createHmac("sha256", this.secret).update(`${id}.${timestamp}.${body}`).digest()
    return String(headers["webhook-signature"] ?? "")
      .split(" ")
      .some((part) => {
        const [version, value] = part.split(",", 2)
        if (version !== "v1" || value === undefined) return false
        const given = Buffer.from(value, "base64")
        return given.length === expected.length && timingSafeEqual(given, expected)
      })
  }

  /** The delivery of `paymentId`'s event (register before sending the change). */
  deliveryOf(paymentId: string, timeoutMs: number): Promise<Receipt> {
    const found = this.byPayment.get(paymentId)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(paymentId)
        reject(new Error(`no delivery for ${paymentId} within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiting.set(paymentId, (r) => {
        clearTimeout(timer)
        resolve(r)
      })
    })
  }

  /** Until `count` distinct events have arrived. */
  received(count: number, timeoutMs: number): Promise<void> {
    if (this.byEvent.size >= count) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.countWaiter = undefined
        reject(new Error(`${this.byEvent.size} of ${count} deliveries after ${timeoutMs} ms`))
      }, timeoutMs)
      this.countWaiter = {
        count,
        done: () => {
          clearTimeout(timer)
          resolve()
        }
      }
    })
  }
}

interface Receiver {
  readonly urlFor: (name: string) => string
  readonly sink: (name: string) => Sink
  readonly close: () => Promise<void>
}

const startReceiver = async (): Promise<Receiver> => {
  const sinks = new Map<string, Sink>()
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const at = performance.now()
      res.writeHead(204).end()
      const sink = sinks.get((req.url ?? "").replace(/^\/hook\//, ""))
      if (sink === undefined) return
      try {
        sink.receive(req.headers, Buffer.concat(chunks).toString("utf8"), at)
      } catch {
        sink.unexpected++
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no receiver address")
  return {
    urlFor: (name) => `http://127.0.0.1:${address.port}/hook/${name}`,
    sink: (name) => {
      const sink = new Sink()
      sinks.set(name, sink)
      return sink
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

// ---------------------------------------------------------------------------------------
// The servers

interface Running {
  readonly kind: Kind
  readonly store: Store
  readonly process: ServerProcess
  readonly target: Target
  readonly createPayments: (count: number) => Promise<Array<string>>
}

const buildServers = async () => {
  // The engine's bundle in a folder of this bench's own, so that no other bench's or
  // test's run of examples/standalone/dist is overwritten while it runs.
  execFileSync(
    process.execPath,
    ["examples/build.mjs", "main", "--outdir", `${BUNDLES}/webhooks-server`],
    { cwd: ROOT, stdio: "inherit" }
  )
  await bundleBaselines(["bench/baseline-webhooks.ts"], ["better-sqlite3", "pg"])
}

const startOne = async (
  kind: Kind,
  store: Store,
  database: string,
  payConfig: string
): Promise<Running> => {
  const name = `${kind} on ${STORE_LABELS[store]}`
  if (kind === "engine") {
    const env = {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: database,
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY,
      PAY_CONFIG: payConfig,
      PAY_FETCH_ALLOW_PRIVATE: "1"
    }
    const started = await startServer({
      name,
      command: process.execPath,
      args: ["--enable-source-maps", ENGINE_BUNDLE],
      env,
      unsetEnv: callersSettings(env)
    })
    try {
      const merchantId = await createMerchant(name, started.url)
      const target = { name, url: started.url, merchantId }
      return {
        kind,
        store,
        process: started,
        target,
        createPayments: (count) => inParallel(count, 16, (n) => createPayment(target, n))
      }
    } catch (error) {
      await started.stop()
      throw error
    }
  }
  const env = {
    PORT: "0",
    BASELINE_DATABASE: database,
    BASELINE_API_KEY: BENCH_API_KEY,
    BASELINE_MERCHANT_ID,
    BASELINE_POOL_SIZE: String(PG_POOL_SIZE),
    BASELINE_WAKE_ON_WRITE: kind === "baseline" ? "1" : "0"
  }
  const started = await startServer({
    name,
    command: process.execPath,
    args: [BASELINE_BUNDLE],
    env,
    unsetEnv: callersSettings(env)
  })
  const target = { name, url: started.url, merchantId: BASELINE_MERCHANT_ID }
  return {
    kind,
    store,
    process: started,
    target,
    // Setup, untimed: inserted in one go, as requires_action payments of the merchant.
    createPayments: async (count) => {
      const response = await fetch(`${started.url}/setup/payments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ count })
      })
      if (response.status !== 201) {
        throw new Error(`${name}: /setup/payments answered ${response.status}`)
      }
      return ((await response.json()) as { paymentIds: Array<string> }).paymentIds
    }
  }
}

let endpoints = 0

/** `POST /v1/webhook-endpoints {url}`: the endpoint's secret, as bytes. */
const registerEndpoint = async (server: Running, url: string): Promise<Buffer> => {
  const response = await fetch(`${server.target.url}/v1/webhook-endpoints`, {
    method: "POST",
    headers: {
      "Api-Key": BENCH_API_KEY,
      "Idempotency-Key": `bench-webhooks-${process.pid}-${++endpoints}`,
      "Content-Type": "application/json"
    },
    body: JSON.stringify({ url })
  })
  const text = await response.text()
  if (response.status !== 201) {
    throw new Error(`${server.target.name}: POST /v1/webhook-endpoints ${response.status}: ${text}`)
  }
  const secret = (JSON.parse(text) as { secret?: unknown }).secret
  if (typeof secret !== "string" || !secret.startsWith("whsec_")) {
    throw new Error(`${server.target.name}: no secret in ${text}`)
  }
  return Buffer.from(secret.slice("whsec_".length), "base64")
}

// ---------------------------------------------------------------------------------------
// Measuring

/** Nearest rank. */
const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!
}

/** The same pauses for every server of a run: a small seeded generator (mulberry32). */
const pauses = (seed: number, count: number, maxMs: number): Array<number> => {
  let a = seed >>> 0
  return Array.from({ length: count }, () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * maxMs
  })
}

export interface Throughput {
  readonly events: number
  /** From the first change sent to the last delivery received. */
  readonly seconds: number
  readonly eventsPerSecond: number
  /** Changes answered per second (first sent to last answered). */
  readonly changesPerSecond: number
  /** From the last change answered to the last delivery received. */
  readonly drainMs: number
  /** Each event's time from its change sent to its delivery received, under this load. */
  readonly latencyP50Ms: number
  readonly latencyP99Ms: number
  /** The server's CPU time (user + system) over the part, per event. */
  readonly cpuMsPerEvent: number
}

export interface Latency {
  /** Change sent to delivery received, one change at a time, in the order measured. */
  readonly ms: ReadonlyArray<number>
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** The change's own answer (sent to answer read), p50. */
  readonly answerP50Ms: number
}

export interface ServerRun {
  readonly kind: Kind
  readonly store: Store
  readonly throughput: Throughput | undefined
  readonly latency: Latency
  readonly bodyBytes: { readonly min: number; readonly max: number }
  readonly duplicates: number
  readonly badSignatures: number
  readonly unexpected: number
  /** The server's whole part, its start and payments included. */
  readonly wallSeconds: number
}

const measureServer = async (
  server: Running,
  receiver: Receiver,
  settings: WebhookBenchSettings,
  seed: number
): Promise<ServerRun> => {
  const name = `${server.kind}-${server.store}-${seed}`
  const throughputToo = server.kind !== "baseline-polled"
  const payments = await server.createPayments(
    settings.warmups + (throughputToo ? settings.events : 0) + settings.changes
  )
  const sink = receiver.sink(name)
  sink.secret = await registerEndpoint(server, receiver.urlFor(name))
  let next = 0
  const take = () => payments[next++]!

  // 1. Warm-up.
  const warm = Array.from({ length: settings.warmups }, take)
  await inParallel(warm.length, 4, async (i) => {
    const delivered = sink.deliveryOf(warm[i]!, 10_000)
    await cancelPayment(server.target, warm[i]!)
    await delivered
  })

  // 2. Throughput.
  let throughput: Throughput | undefined
  if (throughputToo) {
    await sleep(500)
    const batch = Array.from({ length: settings.events }, take)
    const sentAt = new Map<string, number>()
    const before = sink.byEvent.size
    const cpuBefore = server.process.cpuTicks()
    const started = performance.now()
    let lastAnswer = started
    await inParallel(batch.length, settings.concurrency, async (i) => {
      const id = batch[i]!
      sentAt.set(id, performance.now())
      await cancelPayment(server.target, id)
      lastAnswer = Math.max(lastAnswer, performance.now())
    })
    await sink.received(before + batch.length, settings.drainTimeoutMs)
    const receipts = batch.map((id) => sink.byPayment.get(id)!)
    const lastDelivery = Math.max(...receipts.map((r) => r.at))
    const cpuMs = (server.process.cpuTicks() - cpuBefore) * MS_PER_TICK
    const latencies = batch.map((id, i) => receipts[i]!.at - sentAt.get(id)!)
    const seconds = (lastDelivery - started) / 1000
    throughput = {
      events: batch.length,
      seconds,
      eventsPerSecond: batch.length / seconds,
      changesPerSecond: batch.length / ((lastAnswer - started) / 1000),
      drainMs: lastDelivery - lastAnswer,
      latencyP50Ms: percentile(latencies, 0.5),
      latencyP99Ms: percentile(latencies, 0.99),
      cpuMsPerEvent: cpuMs / batch.length
    }
  }

  // 3. Latency, one change at a time.
  await sleep(1_000)
  const ms: Array<number> = []
  const answers: Array<number> = []
  for (const pause of pauses(seed, settings.changes, settings.maxPauseMs)) {
    await sleep(pause)
    const id = take()
    const delivered = sink.deliveryOf(id, 10_000)
    const sent = performance.now()
    await cancelPayment(server.target, id)
    answers.push(performance.now() - sent)
    ms.push((await delivered).at - sent)
  }
  // Anything still arriving (a duplicate) is counted before the server stops.
  await sleep(300)
  return {
    kind: server.kind,
    store: server.store,
    throughput,
    latency: {
      ms,
      p50Ms: percentile(ms, 0.5),
      p99Ms: percentile(ms, 0.99),
      maxMs: Math.max(...ms),
      answerP50Ms: percentile(answers, 0.5)
    },
    bodyBytes: { min: sink.minBytes, max: sink.maxBytes },
    duplicates: sink.duplicates,
    badSignatures: sink.badSignatures,
    unexpected: sink.unexpected,
    wallSeconds: 0
  }
}

export interface WebhookBenchResult {
  readonly date: string
  readonly loadAverageAtStart: number
  readonly node: string
  readonly cores: number
  readonly postgres: BenchPostgres["server"] & { readonly kind: BenchPostgres["kind"] }
  readonly settings: Omit<WebhookBenchSettings, "deadlineMs">
  readonly runs: ReadonlyArray<{
    readonly run: number
    readonly loadAverage: number
    readonly servers: ReadonlyArray<ServerRun>
  }>
}

export const measureWebhooks = async (
  dir: string,
  settings: WebhookBenchSettings
): Promise<WebhookBenchResult> => {
  const loadAverageAtStart = loadavg()[0] ?? 0
  await buildServers()
  const payConfig = join(dir, "pay-config.json")
  writeFileSync(payConfig, JSON.stringify(BENCH_PAY_CONFIG))
  const receiver = await startReceiver()
  let postgres: BenchPostgres | undefined
  let current: Running | undefined
  let pgServer: WebhookBenchResult["postgres"] | undefined
  const runs: Array<WebhookBenchResult["runs"][number]> = []
  try {
    for (let run = 1; run <= settings.runs; run++) {
      const loadAverage = loadavg()[0] ?? 0
      postgres = await startPostgres(["engine", "baseline", "polled"])
      pgServer = { kind: postgres.kind, ...postgres.server }
      const servers: Array<ServerRun> = []
      const kinds: ReadonlyArray<Kind> =
        run % 2 === 1
          ? ["engine", "baseline", "baseline-polled"]
          : ["baseline", "baseline-polled", "engine"]
      for (const store of STORES) {
        for (const kind of kinds) {
          const database =
            store === "sqlite"
              ? join(dir, `run${run}-${kind}.sqlite`)
              : postgres.urls[kind === "baseline-polled" ? "polled" : kind]!
          const began = performance.now()
          current = await startOne(kind, store, database, payConfig)
          const measured = await measureServer(current, receiver, settings, 1000 * run + 7)
          const exit = current.process.exitStatus()
          await current.process.stop()
          current = undefined
          if (exit !== undefined) throw new Error(`${kind} on ${store} ended early (${exit})`)
          const result = { ...measured, wallSeconds: (performance.now() - began) / 1000 }
          servers.push(result)
          console.log(`  run ${run}: ${rawLine(result)}`)
        }
      }
      await postgres.close()
      postgres = undefined
      runs.push({ run, loadAverage, servers })
    }
  } catch (error) {
    if (current !== undefined) {
      console.error(`${current.target.name}'s last output:\n${current.process.recentOutput()}`)
    }
    throw error
  } finally {
    await current?.process.stop()
    await postgres?.close()
    await receiver.close()
  }
  const { deadlineMs: _, ...shown } = settings
  return {
    date: new Date().toISOString(),
    loadAverageAtStart,
    node: process.version,
    cores: cpus().length,
    postgres: pgServer!,
    settings: shown,
    runs
  }
}

// ---------------------------------------------------------------------------------------
// Printing

const n = (x: number, digits = 0) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

const rawLine = (s: ServerRun): string => {
  const label = `${KIND_LABELS[s.kind]} on ${STORE_LABELS[s.store]}`.padEnd(30)
  const t = s.throughput
  const through =
    t === undefined
      ? "throughput not measured"
      : `${n(t.events)} events in ${n(t.seconds, 2)} s = ${n(t.eventsPerSecond)} events/s ` +
        `(changes answered at ${n(t.changesPerSecond)}/s, drain ${n(t.drainMs)} ms; ` +
        `under load p50 ${n(t.latencyP50Ms)} ms, p99 ${n(t.latencyP99Ms)} ms; ` +
        `CPU ${n(t.cpuMsPerEvent, 2)} ms/event)`
  const l = s.latency
  const flags = [
    s.duplicates > 0 ? `${s.duplicates} DUPLICATES` : "",
    s.badSignatures > 0 ? `${s.badSignatures} BAD SIGNATURES` : "",
    s.unexpected > 0 ? `${s.unexpected} UNEXPECTED` : ""
  ].filter((f) => f !== "")
  return (
    `${label} ${through}; idle p50 ${n(l.p50Ms, 1)} ms, p99 ${n(l.p99Ms, 1)} ms ` +
    `(answer p50 ${n(l.answerP50Ms, 1)} ms); body ${n(s.bodyBytes.min)}–${n(s.bodyBytes.max)} B` +
    (flags.length > 0 ? `; ${flags.join(", ")}` : "") +
    ` [${n(s.wallSeconds)} s]`
  )
}

const range = (values: ReadonlyArray<number>, digits = 0, unit = "") => {
  const lo = Math.min(...values)
  const hi = Math.max(...values)
  return lo === hi || n(lo, digits) === n(hi, digits)
    ? `${n(lo, digits)}${unit}`
    : `${n(lo, digits)}–${n(hi, digits)}${unit}`
}

export const formatWebhooks = (r: WebhookBenchResult): Array<string> => {
  const s = r.settings
  const find = (run: WebhookBenchResult["runs"][number], kind: Kind, store: Store) =>
    run.servers.find((x) => x.kind === kind && x.store === store)!
  const over = (kind: Kind, store: Store, f: (x: ServerRun) => number) =>
    r.runs.map((run) => f(find(run, kind, store)))
  const ratio = (
    a: Kind,
    b: Kind,
    store: Store,
    f: (x: ServerRun) => number
  ): ReadonlyArray<number> => r.runs.map((run) => f(find(run, a, store)) / f(find(run, b, store)))
  const tp = (x: ServerRun) => x.throughput!
  const lines: Array<string> = [
    "",
    `Webhooks: payment.cancelled events delivered to a loopback receiver (${r.runs.length} runs; ` +
      `Node ${r.node}, ${r.cores} cores, load average ${n(r.loadAverageAtStart, 2)} at start, ` +
      `${r.runs.map((run) => n(run.loadAverage, 2)).join(", ")} at each run's start)`,
    `  PostgreSQL ${r.postgres.version} (${r.postgres.kind}, ${r.postgres.url}): ` +
      `synchronous_commit ${r.postgres.synchronousCommit}, fsync ${r.postgres.fsync}; ` +
      "SQLite: WAL, synchronous = FULL (engine and baseline)",
    "  engine: the standalone bundle, default webhook settings (poll every 250 ms when idle, " +
      "at once after a delivery it sent; ≤ 8 in flight per endpoint); baseline: " +
      "bench/baseline-webhooks.ts (wakes at once after each change it writes); baseline, " +
      "polled: the same with the engine's wake-up rule (latency only)",
    `  throughput: ${n(s.events)} cancellations, ${s.concurrency} in flight, after ` +
      `${s.warmups} warm-ups; events/s from the first change sent to the last delivery received; ` +
      "CPU: the server process's user + system time (PostgreSQL's own not counted)",
    `  latency: ${s.changes} cancellations one at a time per server and run, each after a ` +
      `pause drawn from 0–${s.maxPauseMs} ms; from just before the change is sent to its ` +
      "delivery's arrival",
    "",
    "  Raw, per run:"
  ]
  for (const run of r.runs) {
    for (const server of run.servers) lines.push(`    run ${run.run}: ${rawLine(server)}`)
  }
  lines.push("", `  Summary (min–max over the ${r.runs.length} runs; ratios within each run):`)
  for (const store of STORES) {
    const label = STORE_LABELS[store]
    const e = (f: (x: ServerRun) => number, digits = 0, unit = "") =>
      range(over("engine", store, f), digits, unit)
    const b = (f: (x: ServerRun) => number, digits = 0, unit = "") =>
      range(over("baseline", store, f), digits, unit)
    const p = (f: (x: ServerRun) => number, digits = 0, unit = "") =>
      range(over("baseline-polled", store, f), digits, unit)
    const pooled = (kind: Kind) => {
      const all = r.runs.flatMap((run) => find(run, kind, store).latency.ms)
      return `${n(percentile(all, 0.5), 1)} / ${n(percentile(all, 0.99), 1)} ms (${all.length})`
    }
    lines.push(
      `  ${label}:`,
      `    events/s delivered         engine ${e((x) => tp(x).eventsPerSecond)}, baseline ` +
        `${b((x) => tp(x).eventsPerSecond)}; engine/baseline ×${range(
          ratio("engine", "baseline", store, (x) => tp(x).eventsPerSecond),
          2
        )}`,
      `    changes answered/s         engine ${e((x) => tp(x).changesPerSecond)}, baseline ` +
        `${b((x) => tp(x).changesPerSecond)}`,
      `    drain after last change    engine ${e((x) => tp(x).drainMs, 0, " ms")}, baseline ` +
        `${b((x) => tp(x).drainMs, 0, " ms")}`,
      `    under load p50 / p99       engine ${e((x) => tp(x).latencyP50Ms, 0, " ms")} / ` +
        `${e((x) => tp(x).latencyP99Ms, 0, " ms")}, baseline ` +
        `${b((x) => tp(x).latencyP50Ms, 0, " ms")} / ${b((x) => tp(x).latencyP99Ms, 0, " ms")}`,
      `    server CPU per event       engine ${e((x) => tp(x).cpuMsPerEvent, 2, " ms")}, baseline ` +
        `${b((x) => tp(x).cpuMsPerEvent, 2, " ms")}`,
      `    idle change→delivery p50   engine ${e((x) => x.latency.p50Ms, 1, " ms")}, baseline ` +
        `${b((x) => x.latency.p50Ms, 1, " ms")}, baseline polled ` +
        `${p((x) => x.latency.p50Ms, 1, " ms")}; engine/baseline ×${range(
          ratio("engine", "baseline", store, (x) => x.latency.p50Ms),
          1
        )}, engine/baseline polled ×${range(
          ratio("engine", "baseline-polled", store, (x) => x.latency.p50Ms),
          2
        )}`,
      `    idle change→delivery p99   engine ${e((x) => x.latency.p99Ms, 1, " ms")}, baseline ` +
        `${b((x) => x.latency.p99Ms, 1, " ms")}, baseline polled ` +
        `${p((x) => x.latency.p99Ms, 1, " ms")}`,
      `    idle, all runs pooled p50 / p99 (samples): engine ${pooled("engine")}; baseline ` +
        `${pooled("baseline")}; baseline polled ${pooled("baseline-polled")}`
    )
  }
  const flagged = r.runs.flatMap((run) =>
    run.servers.filter((x) => x.duplicates + x.badSignatures + x.unexpected > 0)
  )
  lines.push(
    flagged.length === 0
      ? "  Every delivery arrived once, with a valid signature."
      : `  ${flagged.length} server runs received duplicates, bad signatures or unexpected events (see the raw lines)`
  )
  return lines
}

// Run alone (`npm run bench:webhooks`).
runBenchAlone(import.meta.url, {
  name: "webhooks",
  title: "Webhooks",
  deadlineMs: webhookSettings().deadlineMs,
  measure: (dir) => measureWebhooks(dir, webhookSettings()),
  report: (webhooks) => ({ webhooks }),
  file: "webhooks",
  format: formatWebhooks
})
