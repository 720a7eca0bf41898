/**
 * The webhook sender against real servers on loopback only (127.0.0.1, ::1): an HTTPS server
 * with a throwaway CA (its certificate names logo.test, localhost, 127.0.0.1 and ::1) and a
 * plain HTTP one, both recording what reaches them. Host names resolve through the injected
 * resolver; what must be refused is checked to make no request (node:http and node:https
 * `request` are spied on) and no connection (the servers count them).
 */
import { rmSync } from "node:fs"
import http, { type IncomingMessage, type ServerResponse } from "node:http"
import https from "node:https"
import type { Server, Socket } from "node:net"
import type { TLSSocket } from "node:tls"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { type WebhookRequest, type WebhookResponse, WebhookSender } from "@pay/core"
import { Effect } from "effect"
import type { ResolvedAddress } from "./SafeFetch.js"
import { makeTestCertificates } from "./TestCertificates.testing.js"
import {
  makeWebhookSender,
  type WebhookSenderOptions,
  webhookSenderLayer
} from "./WebhookSender.js"

type Received = {
  readonly method: string | undefined
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
  readonly sni: string | false | null | undefined
  readonly remote: string | undefined
}

interface Recorder {
  readonly server: Server
  port: number
  readonly requests: Array<Received>
  connections: number
}

let certificates: ReturnType<typeof makeTestCertificates>
let secure: Recorder
let secureV6: Recorder | undefined
let plain: Recorder
let closedPort: number
const sockets = new Set<Socket>()

const answer = async (request: IncomingMessage, response: ServerResponse) => {
  switch (request.url) {
    case "/ok":
      response.writeHead(200, { "content-type": "text/plain" })
      return response.end("received ✓")
    case "/busy":
      response.writeHead(500, { "retry-after": "120" })
      return response.end("try later")
    case "/moved":
      response.writeHead(302, { location: "/target", "retry-after": "5" })
      return response.end("moved")
    case "/large": {
      response.writeHead(200)
      const chunk = Buffer.alloc(20 * 1024, "a")
      for (let sent = 0; sent < 200 * 1024 && !response.destroyed; sent += chunk.length)
        if (!response.write(chunk)) await new Promise((resolve) => response.once("drain", resolve))
      return response.end()
    }
    case "/silent":
      return
    case "/stall":
      response.writeHead(200, { "retry-after": "1" })
      response.write("partial")
      return
    default:
      response.writeHead(404)
      return response.end()
  }
}

const record = (state: Recorder) => (request: IncomingMessage, response: ServerResponse) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    state.requests.push({
      method: request.method,
      path: request.url ?? "/",
      headers: request.headers,
      body: Buffer.concat(chunks),
      sni: (request.socket as TLSSocket).servername,
      remote: request.socket.remoteAddress
    })
    void answer(request, response)
  })
}

const listen = (server: Server, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => {
      server.off("error", reject)
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })

const start = async (server: Server, host: string): Promise<Recorder> => {
  const state: Recorder = { server, port: 0, requests: [], connections: 0 }
  server.on("connection", (socket: Socket) => {
    state.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("request", record(state))
  state.port = await listen(server, host)
  return state
}

const stop = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

beforeAll(async () => {
  certificates = makeTestCertificates()
  const tls = { key: certificates.key, cert: certificates.cert }
  secure = await start(https.createServer(tls), "127.0.0.1")
  secureV6 = await start(https.createServer(tls), "::1").catch(() => undefined)
  plain = await start(http.createServer(), "127.0.0.1")
  const closed = http.createServer()
  closedPort = await listen(closed, "127.0.0.1")
  await stop(closed)
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await Promise.all([stop(secure.server), stop(plain.server), secureV6 && stop(secureV6.server)])
  rmSync(certificates.dir, { recursive: true, force: true })
})

afterEach(() => {
  vi.restoreAllMocks()
})

/** A resolver from `table` (host → addresses), counting its calls. */
const resolver = (table: Readonly<Record<string, ReadonlyArray<string>>>) => {
  const calls: Array<string> = []
  const resolve = async (hostname: string): Promise<ReadonlyArray<ResolvedAddress>> => {
    calls.push(hostname)
    const answers = table[hostname]
    if (answers === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { calls, resolve }
}

const toLoopback = resolver({ "logo.test": ["127.0.0.1"] }).resolve

const post = (url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  headers: { "content-type": "application/json" },
  body: "{}",
  timeoutMs: 5_000,
  maxResponseBytes: 64 * 1024,
  ...overrides
})

const send = (options: WebhookSenderOptions, request: WebhookRequest) =>
  makeWebhookSender({ ca: certificates.ca, ...options }).send(request)

/** The send, checked to have made no request and no connection. */
const refusedWithoutConnecting = (options: WebhookSenderOptions, request: WebhookRequest) =>
  Effect.gen(function* () {
    const requests = [vi.spyOn(https, "request"), vi.spyOn(http, "request")]
    const before = [secure.connections, plain.connections]
    const result = yield* send(options, request)
    for (const spy of requests) expect(spy).not.toHaveBeenCalled()
    expect([secure.connections, plain.connections]).toEqual(before)
    expect(result).toMatchObject({ status: null, body: "", retryAfter: null })
    expect(result.error).not.toContain("\n")
    return result
  })

const expectNoResponse = (result: WebhookResponse, ...contains: Array<string>) => {
  expect(result.status).toBeNull()
  for (const text of contains) expect(result.error).toContain(text)
  expect(result.error).not.toContain("\n")
}

describe("WebhookSender over loopback", () => {
  it.effect("POSTs the body and headers to the checked address, and returns a 2xx as it came", () =>
    Effect.gen(function* () {
      const { calls, resolve } = resolver({ "logo.test": ["127.0.0.1"] })
      const body = JSON.stringify({ type: "payment.settled", note: "café ✓" })
      const before = secure.requests.length
      const result = yield* send(
        { allowPrivate: true, resolve },
        post(`https://logo.test:${secure.port}/ok`, {
          headers: { "Content-Type": "application/json", "x-pay-signature": "t=1,v1=abc" },
          body
        })
      )
      expect(result).toMatchObject({
        status: 200,
        body: "received ✓",
        retryAfter: null,
        error: null
      })
      expect(result.durationMs).toBeGreaterThanOrEqual(0)
      expect(calls).toEqual(["logo.test"])
      const [received, ...more] = secure.requests.slice(before)
      expect(more).toEqual([])
      expect(received).toMatchObject({
        method: "POST",
        path: "/ok",
        sni: "logo.test",
        remote: "127.0.0.1",
        body: Buffer.from(body, "utf8")
      })
      expect(received?.headers).toMatchObject({
        host: `logo.test:${secure.port}`,
        "content-type": "application/json",
        "x-pay-signature": "t=1,v1=abc",
        "content-length": String(Buffer.byteLength(body))
      })
    })
  )

  it.effect("is the engine's WebhookSender through webhookSenderLayer", () =>
    Effect.gen(function* () {
      const sender = yield* WebhookSender
      const result = yield* sender.send(post(`https://logo.test:${secure.port}/ok`))
      expect(result.status).toBe(200)
    }).pipe(
      Effect.provide(
        webhookSenderLayer({ allowPrivate: true, resolve: toLoopback, ca: certificates.ca })
      )
    )
  )

  it.effect("returns a 500 with its Retry-After as sent", () =>
    Effect.gen(function* () {
      const result = yield* send(
        { allowPrivate: true, resolve: toLoopback },
        post(`https://logo.test:${secure.port}/busy`)
      )
      expect(result).toMatchObject({
        status: 500,
        body: "try later",
        retryAfter: "120",
        error: null
      })
    })
  )

  it.effect("returns a redirect as the answer, without following it", () =>
    Effect.gen(function* () {
      const before = secure.requests.length
      const result = yield* send(
        { allowPrivate: true, resolve: toLoopback },
        post(`https://logo.test:${secure.port}/moved`)
      )
      expect(result).toMatchObject({ status: 302, body: "moved", retryAfter: "5", error: null })
      expect(secure.requests.slice(before).map((r) => r.path)).toEqual(["/moved"])
    })
  )

  it.effect("cuts the response body at maxResponseBytes", () =>
    Effect.gen(function* () {
      const result = yield* send(
        { allowPrivate: true, resolve: toLoopback },
        post(`https://logo.test:${secure.port}/large`, { maxResponseBytes: 64 * 1024 })
      )
      expect(result.status).toBe(200)
      expect(result.error).toBeNull()
      expect(result.body.length).toBe(65536)
      expect(result.body).toBe("a".repeat(65536))
    })
  )

  it.effect("gives up at the time limit on a server that never answers", () =>
    Effect.gen(function* () {
      const result = yield* send(
        { allowPrivate: true, resolve: toLoopback },
        post(`https://logo.test:${secure.port}/silent`, { timeoutMs: 300 })
      )
      expectNoResponse(result, "no response within 300 ms, the time limit")
      expect(result.durationMs).toBeGreaterThanOrEqual(300)
      expect(result.durationMs).toBeLessThan(2_000)
    })
  )

  it.effect("keeps the status when only the body runs past the time limit", () =>
    Effect.gen(function* () {
      const result = yield* send(
        { allowPrivate: true, resolve: toLoopback },
        post(`https://logo.test:${secure.port}/stall`, { timeoutMs: 300 })
      )
      expect(result).toMatchObject({ status: 200, body: "partial", retryAfter: "1" })
      expect(result.error).toBe("the response body was cut by the time limit, 300 ms")
      expect(result.durationMs).toBeGreaterThanOrEqual(300)
    })
  )

  it.effect("reports a refused connection", () =>
    Effect.gen(function* () {
      const result = yield* send({ allowPrivate: true }, post(`https://127.0.0.1:${closedPort}/ok`))
      expectNoResponse(result, `no response from 127.0.0.1:${closedPort}`, "ECONNREFUSED")
      expect(result).toMatchObject({ body: "", retryAfter: null })
    })
  )

  it.effect("reports a name that does not resolve", () =>
    Effect.gen(function* () {
      const result = yield* send(
        { allowPrivate: true, resolve: toLoopback },
        post("https://nowhere.test/ok")
      )
      expectNoResponse(result, "could not resolve nowhere.test", "ENOTFOUND")
    })
  )

  it.effect("counts DNS in the time limit", () =>
    Effect.gen(function* () {
      const spy = vi.spyOn(https, "request")
      const result = yield* send(
        { allowPrivate: true, resolve: () => new Promise(() => {}) },
        post("https://logo.test/ok", { timeoutMs: 200 })
      )
      expectNoResponse(result, "no response within 200 ms, the time limit")
      expect(spy).not.toHaveBeenCalled()
    })
  )

  it.effect("reports a certificate it does not trust (no test CA)", () =>
    Effect.gen(function* () {
      const before = secure.requests.length
      const result = yield* makeWebhookSender({ allowPrivate: true, resolve: toLoopback }).send(
        post(`https://logo.test:${secure.port}/ok`)
      )
      expectNoResponse(result, `no response from logo.test:${secure.port}`)
      expect(secure.requests.length).toBe(before)
    })
  )

  it.effect("connects to an IP literal directly, without SNI", () =>
    Effect.gen(function* () {
      const { calls, resolve } = resolver({})
      const before = secure.requests.length
      const v4 = yield* send(
        { allowPrivate: true, resolve },
        post(`https://127.0.0.1:${secure.port}/ok`)
      )
      expect(v4.status).toBe(200)
      expect(secure.requests[before]).toMatchObject({ sni: false })
      expect(secure.requests[before]?.headers.host).toBe(`127.0.0.1:${secure.port}`)
      if (secureV6) {
        const v6 = yield* send(
          { allowPrivate: true, resolve },
          post(`https://[::1]:${secureV6.port}/ok`)
        )
        expect(v6.status).toBe(200)
        expect(secureV6.requests.at(-1)?.headers.host).toBe(`[::1]:${secureV6.port}`)
        expect(secureV6.requests.at(-1)?.sni).toBe(false)
      }
      expect(calls).toEqual([])
    })
  )

  describe("refuses what the address rules refuse, without connecting", () => {
    it.effect("a name resolving to 127.0.0.1, without allowPrivate", () =>
      Effect.gen(function* () {
        const before = secure.requests.length
        const result = yield* refusedWithoutConnecting(
          { resolve: toLoopback },
          post(`https://logo.test:${secure.port}/ok`)
        )
        expect(result.error).toContain(
          "logo.test is not allowed, it resolves to a loopback address"
        )
        expect(result.error).not.toContain("127.0.0.1")
        expect(secure.requests.length).toBe(before)
      })
    )

    it.effect("https://127.0.0.1, without allowPrivate", () =>
      Effect.gen(function* () {
        const result = yield* refusedWithoutConnecting(
          {},
          post(`https://127.0.0.1:${secure.port}/ok`)
        )
        expect(result.error).toContain("127.0.0.1 is a loopback address")
      })
    )

    it.effect(
      "at every send: a name rebound to a link-local address after a send went through",
      () =>
        Effect.gen(function* () {
          const answers = [["127.0.0.1"], ["169.254.169.254"]]
          const resolve = async (): Promise<ReadonlyArray<ResolvedAddress>> =>
            (answers.shift() ?? []).map((address) => ({ address, family: 4 }))
          const sender = makeWebhookSender({ allowPrivate: true, resolve, ca: certificates.ca })
          const first = yield* sender.send(post(`https://logo.test:${secure.port}/ok`))
          expect(first.status).toBe(200)
          const spy = vi.spyOn(https, "request")
          const connections = secure.connections
          const second = yield* sender.send(post(`https://logo.test:${secure.port}/ok`))
          expectNoResponse(
            second,
            "logo.test is not allowed, it resolves to a cloud metadata address"
          )
          expect(second.error).not.toContain("169.254")
          expect(spy).not.toHaveBeenCalled()
          expect(secure.connections).toBe(connections)
        })
    )

    it.effect("plain http:// without allowPrivate, even to 127.0.0.1", () =>
      Effect.gen(function* () {
        const result = yield* refusedWithoutConnecting(
          {},
          post(`http://127.0.0.1:${plain.port}/ok`)
        )
        expect(result.error).toContain("https is required")
      })
    )

    it.effect("plain http:// to a name resolving to a private, not loopback, address", () =>
      Effect.gen(function* () {
        const { calls, resolve } = resolver({ "hooks.internal": ["10.0.0.1"] })
        const result = yield* refusedWithoutConnecting(
          { allowPrivate: true, resolve },
          post("http://hooks.internal/ok")
        )
        expect(result.error).toContain("https is required")
        expect(result.error).toContain("hooks.internal resolves to an address that is not loopback")
        expect(result.error).not.toContain("10.0.0.1")
        expect(calls).toEqual(["hooks.internal"])
      })
    )

    it.effect("plain http:// to a name resolving to loopback and elsewhere", () =>
      Effect.gen(function* () {
        const { resolve } = resolver({ "mixed.test": ["127.0.0.1", "192.168.1.5"] })
        const result = yield* refusedWithoutConnecting(
          { allowPrivate: true, resolve },
          post(`http://mixed.test:${plain.port}/ok`)
        )
        expect(result.error).toContain("https is required")
      })
    )

    it.effect("a URL that is not http(s), or not a URL", () =>
      Effect.gen(function* () {
        const ftp = yield* refusedWithoutConnecting(
          { allowPrivate: true },
          post("ftp://127.0.0.1/")
        )
        expect(ftp.error).toContain("https is required")
        const garbage = yield* refusedWithoutConnecting({}, post("not a url"))
        expect(garbage.error).toContain("not valid")
      })
    )
  })

  describe("plain http:// to loopback, with allowPrivate", () => {
    it.effect("to 127.0.0.1", () =>
      Effect.gen(function* () {
        const before = plain.requests.length
        const result = yield* send(
          { allowPrivate: true },
          post(`http://127.0.0.1:${plain.port}/busy`)
        )
        expect(result).toMatchObject({
          status: 500,
          body: "try later",
          retryAfter: "120",
          error: null
        })
        expect(plain.requests.slice(before)).toMatchObject([
          { method: "POST", path: "/busy", body: Buffer.from("{}") }
        ])
      })
    )

    it.effect("to a name resolving to 127.0.0.1, connected through the pinned lookup", () =>
      Effect.gen(function* () {
        const { calls, resolve } = resolver({ "hooks.test": ["127.0.0.1"] })
        const before = plain.requests.length
        const result = yield* send(
          { allowPrivate: true, resolve },
          post(`http://hooks.test:${plain.port}/ok`)
        )
        expect(result).toMatchObject({ status: 200, body: "received ✓", error: null })
        expect(calls).toEqual(["hooks.test"])
        expect(plain.requests[before]?.headers.host).toBe(`hooks.test:${plain.port}`)
      })
    )
  })
})
