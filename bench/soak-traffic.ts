/**
 * The soak bench's mixed traffic (bench/soak.ts) at fixed rates, each request timed into
 * its route's figures for the minute it ended in, every outcome counted:
 * - creates, status reads and full reads of recent payments, the three listings (partner,
 *   merchant, events);
 * - long-polls held on fresh payments and answered by their cancel 1 to 8 s later (timed
 *   from the cancel sent to the long-poll's answer: the wake-up, not the hold);
 * - wallet payments end to end on the chain process: a buyer minted USDC on the chain, the
 *   partner's long-poll held on the payment, the wallet's options, fetch, signature and
 *   confirm, its long-poll until `succeeded` (walletPays of wallet.ts), then the
 *   `payment.settled` webhook awaited, and every second one refunded (POST /v1/refunds);
 * - /metrics every second: the engine's own RSS and heap gauges; its VmRSS read from /proc
 *   every second besides.
 * A kind whose requests in flight reach its cap skips its turn, counted: the rates are
 * offered, not chased.
 */
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import type { Receiver } from "./soak-receiver.js"
import { Recorder } from "./soak-recorder.js"
import { floor, median, peak } from "./soak-report.js"
import { type Chain, type Engine, processGauges, type Shop, vmRss } from "./soak-world.js"
import { walletPays } from "./wallet.js"
import { type Http, type Json, newBuyer } from "./wallet-support.js"

/** Routes whose p99 is judged early against late: the engine's own time. */
export const JUDGED = [
  "create",
  "status",
  "detail",
  "list",
  "mlist",
  "events",
  "cancel",
  "lpwake",
  "options",
  "fetch",
  "confirm",
  "refund",
  "metrics"
] as const
/**
 * Shown, not judged: a payment's time on the chain (collect, confirmation, settle), and the
 * reference: a bare node:http server in its own process answering `{}`, asked as often as the
 * status route, whose p99 is what the shared machine alone adds to a request in that minute.
 */
export const INFO = ["paid", "settled", "ref"] as const
export const ROUTES: ReadonlyArray<string> = [...JUDGED, ...INFO]

export const LEGEND = [
  "create   POST /v1/payments (plain, long-polled and wallet payments alike)",
  "status   GET /v1/payments/{id}/status          detail  GET /v1/payments/{id}",
  "list     GET /v1/payments (three filters)      mlist   GET /v1/merchants/payments",
  "events   GET /v1/events                        cancel  POST /v1/payments/{id}/cancel",
  "lpwake   a held GET …/status?maxPollMs=30000: from its cancel sent to its answer",
  "options, fetch, confirm   POST /v1/gateway/payment/{id}/…  (confirm with maxPollMs=0)",
  "refund   POST /v1/refunds                      metrics GET /metrics",
  "paid     confirm's answer to the wallet's long-poll answering succeeded (chain time, not judged)",
  "settled  confirm's answer to the payment.settled webhook received (chain time, not judged)",
  "ref      GET / on a bare node:http server in its own process: the machine's noise (not judged)"
]

/** Requests a second for each kind, and its cap on requests in flight. */
export const RATES = {
  create: { perSecond: 3, maxInFlight: 100 },
  status: { perSecond: 8, maxInFlight: 100 },
  detail: { perSecond: 4, maxInFlight: 100 },
  list: { perSecond: 2, maxInFlight: 40 },
  mlist: { perSecond: 1, maxInFlight: 20 },
  events: { perSecond: 1, maxInFlight: 20 },
  longPoll: { perSecond: 2, maxInFlight: 100 },
  wallet: { perSecond: 1.5, maxInFlight: 200 },
  metrics: { perSecond: 1, maxInFlight: 2 },
  reference: { perSecond: 8, maxInFlight: 100 }
} as const
type Kind = keyof typeof RATES

/** The buyer's USDC: 20, for a 10.50 USD payment. */
const BUYER_FUNDS = "20000000"
const WALLET_CENTS = "1050"
const LONG_POLL_MS = 30_000
const SETTLED_TIMEOUT_MS = 180_000
const RECENT = 1000

/** A failure already recorded against its route: not recorded again where it is caught. */
class Recorded extends Error {}

export interface Traffic {
  readonly recorder: Recorder
  /** Starts the traffic; it stops by itself at `untilMs` (performance.now()). */
  readonly start: (untilMs: number) => void
  /** Resolves once every action started has ended, or after `timeoutMs`: how many had not. */
  readonly drain: (timeoutMs: number) => Promise<number>
  /**
   * The minute's memory samples, taken between the collections: VmRSS's lowest and highest,
   * the medians of /metrics' gauges; the samples started afresh.
   */
  readonly takeMemory: () => {
    readonly rssBytes: number
    readonly rssPeakBytes: number
    readonly metricsRssBytes: number
    readonly metricsHeapBytes: number
  }
  readonly skipped: ReadonlyMap<Kind, number>
}

export const traffic = (
  http: Http,
  /** The reference server's client. */
  reference: Http,
  engine: Engine,
  chain: Chain,
  shop: Shop,
  receiver: Receiver
): Traffic => {
  const rec = new Recorder()
  const recent: Array<string> = []
  const open: Array<string> = []
  const pick = (from: ReadonlyArray<string>) => from[Math.floor(Math.random() * from.length)]
  const remember = (list: Array<string>, id: string) => {
    list.push(id)
    if (list.length > RECENT) list.shift()
  }
  let samples = {
    rss: [] as Array<number>,
    metricsRss: [] as Array<number>,
    heap: [] as Array<number>
  }
  let paid = 0

  const timed = async (
    route: string,
    method: "GET" | "POST",
    path: string,
    options: {
      readonly headers?: Record<string, string>
      readonly body?: unknown
      readonly expect?: number
    } = {}
  ): Promise<Json> => {
    const started = performance.now()
    let answer: { readonly status: number; readonly text: string }
    try {
      answer = await http.call(method, path, options)
    } catch (error) {
      rec.fail(route, `${method} ${path}: ${(error as Error).message}`)
      throw new Recorded()
    }
    const ms = performance.now() - started
    if (answer.status !== (options.expect ?? 200)) {
      rec.fail(route, `${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`)
      throw new Recorded()
    }
    rec.record(route, ms)
    return route === "metrics" ? answer.text : JSON.parse(answer.text)
  }

  const partner = shop.partnerHeaders
  const create = async (value: string): Promise<string> => {
    const body = await timed("create", "POST", "/v1/payments", {
      headers: partner,
      body: {
        referenceId: `soak-${Math.random().toString(36).slice(2, 10)}`,
        amount: { unit: "iso4217/USD", value }
      },
      expect: 201
    })
    rec.count("payments created")
    remember(recent, body.paymentId)
    return body.paymentId
  }

  /** A partner long-poll held on `id` until the payment is final; its last status. */
  const holdUntilFinal = async (id: string, route: string): Promise<string> => {
    for (;;) {
      const status = await timed(
        route,
        "GET",
        `/v1/payments/${id}/status?maxPollMs=${LONG_POLL_MS}`,
        {
          headers: partner
        }
      )
      if (status.isFinal === true) return status.status
    }
  }

  const actions: Record<Kind, () => Promise<void>> = {
    create: async () => {
      remember(open, await create(String(100 + Math.floor(Math.random() * 9900))))
    },
    status: async () => {
      const id = pick(open)
      if (id !== undefined)
        await timed("status", "GET", `/v1/payments/${id}/status`, { headers: partner })
    },
    detail: async () => {
      const id = pick(recent)
      if (id !== undefined) await timed("detail", "GET", `/v1/payments/${id}`, { headers: partner })
    },
    list: async () => {
      const query = pick(["limit=20", "limit=20&status=succeeded", "limit=50&sortBy=amount"])
      await timed("list", "GET", `/v1/payments?${query}`, { headers: partner })
    },
    mlist: async () => {
      await timed("mlist", "GET", "/v1/merchants/payments?limit=20", { headers: partner })
    },
    events: async () => {
      await timed("events", "GET", "/v1/events?limit=20", { headers: partner })
    },
    longPoll: async () => {
      const id = await create("500")
      const held = http.call("GET", `/v1/payments/${id}/status?maxPollMs=${LONG_POLL_MS}`, {
        headers: partner
      })
      let answeredAt = Number.NaN
      const answered = held.then((a) => {
        answeredAt = performance.now()
        return a
      })
      // Caught here too, so that a failure before the cancel is no unhandled rejection.
      answered.catch(() => {})
      await sleep(1000 + Math.random() * 7000)
      if (!Number.isNaN(answeredAt)) {
        rec.fail("lpwake", `the long-poll on ${id} answered before its cancel`)
        return
      }
      const cancelSent = performance.now()
      const cancelled = await timed("cancel", "POST", `/v1/payments/${id}/cancel`, {
        headers: { "Api-Key": partner["Api-Key"]!, "Merchant-Id": shop.merchantId }
      })
      if (cancelled.status !== "cancelled") throw new Error(`cancel answered ${cancelled.status}`)
      rec.count("payments cancelled")
      let answer: { readonly status: number; readonly text: string }
      try {
        answer = await answered
      } catch (error) {
        rec.fail("lpwake", `${id}: ${(error as Error).message}`)
        return
      }
      const status = answer.status === 200 ? JSON.parse(answer.text).status : undefined
      if (status !== "cancelled") {
        rec.fail(
          "lpwake",
          `the long-poll on ${id} answered ${answer.status} ${answer.text.slice(0, 200)}`
        )
        return
      }
      rec.record("lpwake", answeredAt - cancelSent)
      rec.count("long-polls answered by a cancel")
    },
    wallet: async () => {
      const id = await create(WALLET_CENTS)
      rec.count("wallet payments started")
      const buyer = newBuyer()
      await chain.rpc("sandbox_faucet", [buyer.address, BUYER_FUNDS])
      // The partner's long-poll, held from before the wallet's first call to the payment's end.
      const partnerSaw = holdUntilFinal(id, "partner-lp")
      partnerSaw.catch(() => {})
      let wallet: Awaited<ReturnType<typeof walletPays>>
      try {
        wallet = await walletPays(http, shop.walletHeaders, id, buyer)
      } catch (error) {
        rec.fail("wallet", `${id}: ${(error as Error).message.slice(0, 300)}`)
        return
      }
      rec.record("options", wallet.optionsDone - wallet.started)
      rec.record("fetch", wallet.fetchDone - wallet.optionsDone)
      rec.record("confirm", wallet.confirmDone - wallet.confirmStart)
      rec.record("paid", wallet.succeededAt - wallet.confirmDone)
      rec.count("wallet payments succeeded")
      try {
        await receiver.waitFor(id, "payment.settled", SETTLED_TIMEOUT_MS)
      } catch (error) {
        rec.fail("settled", (error as Error).message)
        return
      } finally {
        receiver.forget(id)
      }
      rec.record("settled", performance.now() - wallet.confirmDone)
      rec.count("wallet payments settled")
      if (++paid % 2 === 0) {
        const refunded = await timed("refund", "POST", "/v1/refunds", {
          headers: { "Api-Key": partner["Api-Key"]!, "Idempotency-Key": `soak-refund-${id}` },
          body: { paymentId: id },
          expect: 201
        })
        if (refunded.refund?.status !== "requested") {
          throw new Error(`refund answered ${JSON.stringify(refunded)}`)
        }
        rec.count("refunds requested")
      }
      const last = await partnerSaw
      if (last !== "succeeded") throw new Error(`the partner's long-poll on ${id} ended ${last}`)
      rec.count("partner long-polls answered succeeded")
    },
    reference: async () => {
      const started = performance.now()
      let answer: { readonly status: number; readonly text: string }
      try {
        answer = await reference.call("GET", "/")
      } catch (error) {
        rec.fail("ref", (error as Error).message)
        return
      }
      if (answer.status !== 200) rec.fail("ref", `answered ${answer.status}`)
      else rec.record("ref", performance.now() - started)
    },
    metrics: async () => {
      const gauges = processGauges(await timed("metrics", "GET", "/metrics"))
      samples.metricsRss.push(gauges.rssBytes)
      samples.heap.push(gauges.heapUsedBytes)
    }
  }

  const inFlight = new Map<Kind, number>()
  const skipped = new Map<Kind, number>()
  const running = new Set<Promise<void>>()
  const fire = (kind: Kind) => {
    if ((inFlight.get(kind) ?? 0) >= RATES[kind].maxInFlight) {
      skipped.set(kind, (skipped.get(kind) ?? 0) + 1)
      return
    }
    inFlight.set(kind, (inFlight.get(kind) ?? 0) + 1)
    const run = actions[kind]()
      .catch((error: unknown) => {
        if (!(error instanceof Recorded)) rec.fail(kind, (error as Error).message.slice(0, 300))
      })
      .finally(() => {
        inFlight.set(kind, inFlight.get(kind)! - 1)
        running.delete(run)
      })
    running.add(run)
  }

  return {
    recorder: rec,
    skipped,
    start: (untilMs) => {
      const startedAt = performance.now()
      const fired = new Map<Kind, number>()
      let lastRssAt = Number.NEGATIVE_INFINITY
      // Fixed rates from the start: each tick fires what is due, so timer drift is caught up.
      const timer = setInterval(() => {
        const now = performance.now()
        if (now >= untilMs) {
          clearInterval(timer)
          return
        }
        // The engine's VmRSS every second: a read of /proc, no request.
        if (now - lastRssAt >= 1000) {
          lastRssAt = now
          samples.rss.push(vmRss(engine.server.pid))
        }
        for (const kind of Object.keys(RATES) as Array<Kind>) {
          const due = Math.floor(((now - startedAt) / 1000) * RATES[kind].perSecond)
          for (let n = fired.get(kind) ?? 0; n < due; n++) fire(kind)
          fired.set(kind, Math.max(due, fired.get(kind) ?? 0))
        }
      }, 50)
    },
    drain: async (timeoutMs) => {
      const until = performance.now() + timeoutMs
      while (running.size > 0 && performance.now() < until) {
        await Promise.race([Promise.allSettled([...running]), sleep(1000)])
      }
      return running.size
    },
    takeMemory: () => {
      const taken = {
        rssBytes: floor(samples.rss),
        rssPeakBytes: peak(samples.rss),
        metricsRssBytes: median(samples.metricsRss),
        metricsHeapBytes: median(samples.heap)
      }
      samples = { rss: [], metricsRss: [], heap: [] }
      return taken
    }
  }
}
