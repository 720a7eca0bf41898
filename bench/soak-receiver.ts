/**
 * The soak bench's webhook receiver: a node:http server in the bench's process on
 * 127.0.0.1 that answers 204 once a request's body is in, checks its Standard Webhooks
 * signature (the `standardwebhooks` library, with the endpoint's secret), and keeps every
 * event id it was sent (a second copy counts as a duplicate: delivery is at least once), by
 * type, and each payment's events, so that a wallet flow can wait for its `payment.settled`.
 */
import { createServer } from "node:http"
import { Webhook } from "standardwebhooks"

export interface Receiver {
  readonly url: string
  /** Signatures are checked from here on; until then every delivery counts as unverified. */
  readonly setSecret: (secret: string) => void
  /** Distinct event ids received. */
  readonly eventIds: ReadonlySet<string>
  readonly byType: ReadonlyMap<string, number>
  readonly counts: () => {
    readonly deliveries: number
    readonly duplicates: number
    readonly badSignatures: number
    readonly unreadable: number
  }
  /** Resolves once `paymentId`'s event of `type` has arrived; fails after `timeoutMs`. */
  readonly waitFor: (paymentId: string, type: string, timeoutMs: number) => Promise<void>
  /** Forgets a finished payment's waiters' bookkeeping (the run keeps no per-payment state). */
  readonly forget: (paymentId: string) => void
  readonly close: () => Promise<void>
}

export const startReceiver = async (): Promise<Receiver> => {
  let verifier: Webhook | undefined
  const eventIds = new Set<string>()
  const byType = new Map<string, number>()
  // Per payment, the event types seen; kept only while a flow may wait on them.
  const seen = new Map<string, Set<string>>()
  const waiting = new Map<string, () => void>()
  let deliveries = 0
  let duplicates = 0
  let badSignatures = 0
  let unreadable = 0

  const receive = (headers: Record<string, string>, body: string) => {
    deliveries++
    try {
      verifier?.verify(body, headers)
      if (verifier === undefined) badSignatures++
    } catch {
      badSignatures++
    }
    let event: { id?: string; type?: string; data?: { object?: { paymentId?: string } } }
    try {
      event = JSON.parse(body)
    } catch {
      unreadable++
      return
    }
    if (typeof event.id !== "string" || typeof event.type !== "string") {
      unreadable++
      return
    }
    if (eventIds.has(event.id)) {
      duplicates++
      return
    }
    eventIds.add(event.id)
    byType.set(event.type, (byType.get(event.type) ?? 0) + 1)
    const paymentId = event.data?.object?.paymentId
    if (paymentId === undefined) return
    const key = `${paymentId} ${event.type}`
    const waiter = waiting.get(key)
    if (waiter !== undefined) {
      waiting.delete(key)
      waiter()
    } else if (event.type === "payment.settled") {
      // Only settlements are waited for; one may arrive before its flow starts waiting.
      const types = seen.get(paymentId) ?? new Set<string>()
      types.add(event.type)
      seen.set(paymentId, types)
    }
  }

  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      res.writeHead(204).end()
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers[name] = value
      }
      receive(headers, Buffer.concat(chunks).toString("utf8"))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no receiver address")
  return {
    url: `http://127.0.0.1:${address.port}/hook`,
    setSecret: (secret) => {
      verifier = new Webhook(secret)
    },
    eventIds,
    byType,
    counts: () => ({ deliveries, duplicates, badSignatures, unreadable }),
    waitFor: (paymentId, type, timeoutMs) => {
      if (seen.get(paymentId)?.has(type) === true) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const key = `${paymentId} ${type}`
        const timer = setTimeout(() => {
          waiting.delete(key)
          reject(new Error(`no ${type} delivered for ${paymentId} within ${timeoutMs} ms`))
        }, timeoutMs)
        waiting.set(key, () => {
          clearTimeout(timer)
          resolve()
        })
      })
    },
    forget: (paymentId) => {
      seen.delete(paymentId)
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
