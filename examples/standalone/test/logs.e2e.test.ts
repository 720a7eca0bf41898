/**
 * The engine's logs over loopback, the real standalone server writing its lines
 * to a console of the test's (`logConsole`): request ids, the request line and a
 * payment's transition lines, read back as parsed JSON. The lines are the same
 * on either store, so these run on SQLite only.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Partners } from "@pay/core"
import { capturingConsole } from "@pay/core/contracts"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  type E2eServer,
  type Json,
  newKey,
  PARTNER_KEY,
  startServer
} from "./e2e-support.js"
import { options, walletClient } from "./gateway-support.js"
import { USDC_BASE } from "./payments-support.js"

const parsed = (lines: ReadonlyArray<string>): Array<Json> => lines.map((l) => JSON.parse(l))

describe("logs at info, as JSON lines", () => {
  let server: E2eServer
  const { lines, console } = capturingConsole()
  const api = client(() => server.baseUrl)
  let partnerId: string

  beforeAll(async () => {
    server = await startServer(
      "sqlite",
      { logLevel: "info", logFormat: "json" },
      { logConsole: console }
    )
    const [partner] = await server.runEngine(Effect.flatMap(Partners, (p) => p.list))
    partnerId = partner!.id
  })
  afterAll(() => server?.stop())

  /** The request lines of one request id. */
  const requestLines = (requestId: string) =>
    parsed(lines).filter((l) => l.message === "request" && l.requestId === requestId)

  it("echoes a sent X-Request-Id and logs one request line under it", async () => {
    const answer = await api.get("/v1/merchants", { headers: { "x-request-id": "edge-4f1c/7" } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-request-id")).toBe("edge-4f1c/7")
    expect(requestLines("edge-4f1c/7")).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        level: "info",
        message: "request",
        method: "GET",
        route: "/v1/merchants",
        status: 200,
        durationMs: expect.any(Number),
        requestId: "edge-4f1c/7",
        partnerId
      }
    ])
  })

  it("generates a request id when none (or an unusable one) is sent, different each time", async () => {
    const first = await api.get("/v1/merchants")
    const second = await api.get("/v1/merchants", { headers: { "x-request-id": "has a space" } })
    const one = first.headers.get("x-request-id")
    const two = second.headers.get("x-request-id")
    expect(one).toMatch(/^[\x21-\x7e]{1,128}$/)
    expect(two).toMatch(/^[\x21-\x7e]{1,128}$/)
    expect(one).not.toBe(two)
    expect(two).not.toBe("has a space")
    expect(requestLines(one!)).toHaveLength(1)
    expect(requestLines(two!)).toHaveLength(1)
  })

  it("a 404 carries its id too, with no route; no line ever holds the key", async () => {
    const answer = await api.get("/v1/nothing/here", { headers: { "x-request-id": "r-404" } })
    expect(answer.status).toBe(404)
    expect(answer.headers.get("x-request-id")).toBe("r-404")
    expect(requestLines("r-404")).toMatchObject([{ status: 404, route: null, method: "GET" }])
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line).not.toContain(PARTNER_KEY)
  })

  it("a payment: the route template (not the path), its transition lines with its id", async () => {
    const merchant = await api.request("POST", "/v1/merchants", {
      idempotencyKey: newKey(),
      body: { merchantName: "Log Shop", merchantEmail: "billing@log-shop.example" }
    })
    expect(merchant.status).toBe(201)
    const merchantId: string = merchant.body.merchant.id
    const created = await api.request("POST", "/v1/payments", {
      headers: { "merchant-id": merchantId },
      body: { referenceId: "order-1", amount: { unit: "iso4217/USD", value: "100" } }
    })
    expect(created.status).toBe(201)
    const paymentId: string = created.body.paymentId
    const read = await api.get(`/v1/payments/${paymentId}`, {
      headers: { "merchant-id": merchantId, "x-request-id": "r-read" }
    })
    expect(read.status).toBe(200)
    const [line] = requestLines("r-read")
    expect(line).toMatchObject({ route: "/v1/payments/:id", status: 200, partnerId })
    expect(JSON.stringify(line)).not.toContain(paymentId)

    const cancelled = await api.request("POST", `/v1/payments/${paymentId}/cancel`, {
      headers: { "merchant-id": merchantId, "x-request-id": "r-cancel" }
    })
    expect(cancelled.status).toBe(200)
    const ofPayment = parsed(lines).filter((l) => l.paymentId === paymentId)
    expect(ofPayment).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: "info",
          message: "payment created",
          paymentId,
          merchantId,
          status: "requires_action"
        }),
        expect.objectContaining({
          level: "info",
          message: "payment transition",
          paymentId,
          merchantId,
          from: "requires_action",
          to: "cancelled",
          // Written by the request's fiber: the request's id with it.
          requestId: "r-cancel"
        })
      ])
    )
    // No buyer's or merchant's e-mail in any line.
    for (const l of lines) expect(l).not.toContain("billing@log-shop.example")
  })
})

describe("PAY_LOG_LEVEL=warning", () => {
  let server: E2eServer
  const { lines, console } = capturingConsole()
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(
      "sqlite",
      { logLevel: "warning", logFormat: "json" },
      { logConsole: console }
    )
  })
  afterAll(() => server?.stop())

  it("drops the request lines; the id is still echoed", async () => {
    const answer = await api.get("/v1/merchants", { headers: { "x-request-id": "quiet-1" } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-request-id")).toBe("quiet-1")
    expect(await api.get("/v1/nothing").then((r) => r.status)).toBe(404)
    const levels = parsed(lines).map((l) => l.level)
    expect(levels.every((level) => level === "warning" || level === "error")).toBe(true)
    expect(parsed(lines).filter((l) => l.message === "request")).toEqual([])
  })
})

describe("a network whose RPC does not answer", () => {
  let server: E2eServer
  const { lines, console } = capturingConsole()
  const api = client(() => server.baseUrl)
  const dir = mkdtempSync(join(tmpdir(), "pay-logs-"))
  let port: number

  beforeAll(async () => {
    // A port nothing listens on (ECONNREFUSED); the path stands for an RPC provider's API key.
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r))
    port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const payConfig = join(dir, "pay.json")
    writeFileSync(
      payConfig,
      JSON.stringify({
        networks: [
          {
            chainId: "eip155:8453",
            name: "Base",
            rpcUrl: `http://127.0.0.1:${port}/v3/SECRET_IN_PATH`,
            collectorKey: `0x${"5a".repeat(32)}`,
            tokens: [
              {
                asset: USDC_BASE,
                symbol: "USDC",
                name: "USD Coin",
                decimals: 6,
                priceCurrency: "USD"
              }
            ]
          }
        ]
      })
    )
    server = await startServer(
      "sqlite",
      { logLevel: "info", logFormat: "json", payConfigPath: Option.some(payConfig) },
      { logConsole: console }
    )
  })
  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("leaves the option out (the wire shape kept) and logs network, RPC host and cause", async () => {
    const merchant = await api.request("POST", "/v1/merchants", {
      idempotencyKey: newKey(),
      body: { merchantName: "Base Shop", merchantEmail: "billing@base-shop.example" }
    })
    const merchantId: string = merchant.body.merchant.id
    const settled = await api.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
      idempotencyKey: newKey(),
      body: {
        settlements: [
          {
            asset: USDC_BASE,
            destination: "eip155:8453:0x000000000000000000000000000000000000dEaD"
          }
        ]
      }
    })
    expect(settled.status, settled.text).toBe(201)
    const created = await api.request("POST", "/v1/payments", {
      headers: { "merchant-id": merchantId },
      body: { referenceId: "order-rpc", amount: { unit: "iso4217/USD", value: "100" } }
    })
    expect(created.status, created.text).toBe(201)
    const paymentId: string = created.body.paymentId
    const { api: wallet, appId } = await walletClient(server)
    const offered = await options(wallet, paymentId, [
      "eip155:8453:0x1111111111111111111111111111111111111111"
    ])
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body.options).toEqual([])
    const requestId = offered.headers.get("x-request-id")
    const leftOut = parsed(lines).filter((l) => l.message.startsWith("payment option left out"))
    expect(leftOut).toEqual([
      expect.objectContaining({
        level: "warning",
        paymentId,
        asset: USDC_BASE,
        chainId: "eip155:8453",
        rpcHost: `127.0.0.1:${port}`,
        errorCode: "ECONNREFUSED",
        requestId
      })
    ])
    for (const line of lines) expect(line).not.toContain("SECRET_IN_PATH")
    // The wallet's request line names its app, not the partner.
    const [line] = parsed(lines).filter((l) => l.message === "request" && l.requestId === requestId)
    expect(line).toMatchObject({
      route: "/v1/gateway/payment/:id/options",
      walletAppId: appId
    })
    expect(line).not.toHaveProperty("partnerId")
  })
})
