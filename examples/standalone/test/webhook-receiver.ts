/**
 * A webhook receiver for the end-to-end suites: a real HTTP server on
 * 127.0.0.1 that verifies every delivery with the off-the-shelf
 * `standardwebhooks` package (as a partner's receiver would), records it,
 * and answers as the test says: a status, a `Retry-After`, a delay, no
 * answer at all; it can go away and come back on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"

export interface Received {
  readonly id: string
  readonly timestamp: string
  readonly signature: string
  readonly body: string
  /** The event, parsed; null when no body came. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the fields they check
  readonly event: any
  readonly contentType: string | undefined
  readonly userAgent: string | undefined
  /** Which of the secrets given verify it (standardwebhooks: any one of its signatures). */
  readonly verifiedBy: ReadonlyArray<string>
  readonly at: number
  /** The status it was answered with; null when it was not (held, or the server closed). */
  answered: number | null
}

export interface Answer {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** Wait this long before answering. */
  readonly delayMs?: number
  /** Never answer (until the receiver closes). */
  readonly hang?: boolean
}

export interface WebhookReceiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** How the next requests are answered (default 204); may look at what came. */
  answer: (received: Received, nth: number) => Answer
  /** The secrets deliveries are verified with (the endpoint's, once registered). */
  secrets: Array<string>
  /** Requests being answered right now, and the most there ever were at once. */
  readonly inFlight: () => { readonly now: number; readonly max: number }
  /** Requests for one event id, in arrival order. */
  readonly of: (eventId: string) => ReadonlyArray<Received>
  /** Waits until `predicate` holds of what was received, or fails after `timeoutMs`. */
  readonly until: (
    predicate: (received: ReadonlyArray<Received>) => boolean,
    timeoutMs?: number
  ) => Promise<void>
  /** Stops listening (connections refused) until `reopen`. */
  readonly goAway: () => Promise<void>
  readonly reopen: () => Promise<void>
  readonly close: () => Promise<void>
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const verifiers = (secrets: ReadonlyArray<string>, r: Omit<Received, "verifiedBy" | "answered">) =>
  secrets.filter((secret) => {
    try {
      new Webhook(secret).verify(r.body, {
        "webhook-id": r.id,
        "webhook-timestamp": r.timestamp,
        "webhook-signature": r.signature
      })
      return true
    } catch {
      return false
    }
  })

export const startWebhookReceiver = async (): Promise<WebhookReceiver> => {
  const received: Array<Received> = []
  let now = 0
  let max = 0
  const open = new Set<ServerResponse>()
  const sockets = new Set<import("node:net").Socket>()

  const receiver = {
    received,
    answer: (() => ({})) as WebhookReceiver["answer"],
    secrets: [] as Array<string>
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    now++
    max = Math.max(max, now)
    open.add(response)
    response.on("close", () => {
      now--
      open.delete(response)
    })
    const body = await readBody(request)
    const header = (name: string) => {
      const value = request.headers[name]
      return Array.isArray(value) ? value.join(",") : value
    }
    const base = {
      id: header("webhook-id") ?? "",
      timestamp: header("webhook-timestamp") ?? "",
      signature: header("webhook-signature") ?? "",
      body,
      event: body === "" ? null : JSON.parse(body),
      contentType: header("content-type"),
      userAgent: header("user-agent"),
      at: Date.now()
    }
    const record: Received = {
      ...base,
      verifiedBy: verifiers(receiver.secrets, base),
      answered: null
    }
    received.push(record)
    const answer = receiver.answer(record, received.filter((r) => r.id === record.id).length)
    if (answer.hang === true) return
    if (answer.delayMs !== undefined) await new Promise((r) => setTimeout(r, answer.delayMs))
    if (response.destroyed) return
    const status = answer.status ?? 204
    record.answered = status
    response.writeHead(status, { ...answer.headers })
    response.end(answer.body ?? "")
  }

  let server: Server
  let port = 0
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((request, response) => {
        handle(request, response).catch(() => response.destroy())
      })
      server.on("connection", (socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(port, "127.0.0.1", () => {
        port = (server.address() as AddressInfo).port
        resolve()
      })
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  await listen()

  const until = async (
    predicate: (received: ReadonlyArray<Received>) => boolean,
    timeoutMs = 20_000
  ) => {
    const deadline = Date.now() + timeoutMs
    while (!predicate(received)) {
      if (Date.now() > deadline) {
        throw new Error(
          `the receiver did not get what was expected within ${timeoutMs} ms; it got: ${JSON.stringify(
            received.map((r) => [r.id, r.event?.type, r.answered])
          )}`
        )
      }
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks/pay`,
    port,
    inFlight: () => ({ now, max }),
    of: (eventId: string) => received.filter((r) => r.id === eventId),
    until,
    goAway: stop,
    reopen: listen,
    close: stop
  })
}
