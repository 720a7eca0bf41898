/**
 * Scenario 3, many held long-polls: one `GET …/status?maxPollMs=30000` per payment, each on
 * its own connection, all held at once; the engine's memory while it holds them; then
 * every payment cancelled, timing how long each long-poll takes to answer once its
 * cancel's response has arrived.
 */
import { Agent, request } from "node:http"
import { setTimeout as sleep } from "node:timers/promises"
import {
  BENCH_API_KEY,
  cancelPayment,
  createPayment,
  inParallel,
  statusPath,
  type Target
} from "./client.js"
import type { ServerProcess } from "./server-process.js"

export interface LongPollSettings {
  readonly longPolls: number
  readonly maxPollMs: number
  /** Creates and cancels run this many at a time. */
  readonly concurrency: number
  readonly deadlineMs: number
}

export interface LongPollResult {
  readonly longPolls: number
  readonly rssIdleBytes: number
  readonly rssHeldBytes: number
  readonly openSeconds: number
  readonly cancelSeconds: number
  /** From a cancel's response arriving to its long-poll's answer arriving (negative: before). */
  readonly wakeLatencyMs: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly answeredCancelled: number
  /** Answered 200 with another status: let go before their payment was cancelled. */
  readonly answeredEarly: number
  readonly failed: number
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

const scenario = async (
  server: ServerProcess,
  target: Target,
  settings: LongPollSettings,
  agent: Agent
): Promise<LongPollResult> => {
  const ids = await inParallel(settings.longPolls, settings.concurrency, (i) =>
    createPayment(target, 1_000_000 + i)
  )
  await waitUntilIdle(server, 10_000)
  const rssIdleBytes = server.rssBytes()

  const openStart = performance.now()
  const polls = new Array<ReturnType<typeof openPoll>>(ids.length)
  await inParallel(ids.length, OPENING_AT_ONCE, (i) => {
    polls[i] = openPoll(agent, target, ids[i]!, settings.maxPollMs)
    return polls[i].sent
  })
  await sleep(1000)
  await waitUntilIdle(server, 15_000)
  const openSeconds = (performance.now() - openStart) / 1000
  const rssHeldBytes = server.rssBytes()

  // Cancelled in the order opened, so no long-poll has waited much longer than the opening
  // took when its cancel comes: opening and cancelling together may outlast maxPollMs.
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
  return {
    longPolls: ids.length,
    rssIdleBytes,
    rssHeldBytes,
    openSeconds,
    cancelSeconds,
    wakeLatencyMs: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN
    },
    answeredCancelled: woken.length,
    answeredEarly: results.filter((p) => p.statusCode === 200 && p.status !== "cancelled").length,
    failed: failed.length
  }
}

export const measureLongPolls = async (
  server: ServerProcess,
  target: Target,
  settings: LongPollSettings
): Promise<LongPollResult> => {
  // No keep-alive and no socket cap: every long-poll holds its own connection.
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`long-poll scenario still running after ${settings.deadlineMs} ms`)),
      settings.deadlineMs
    )
  })
  try {
    return await Promise.race([scenario(server, target, settings, agent), deadline])
  } finally {
    clearTimeout(timer)
    agent.destroy()
  }
}
