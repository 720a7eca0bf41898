/**
 * OpenTelemetry export (OTEL_EXPORTER_OTLP_ENDPOINT) against a collector on
 * loopback: a node:http server that keeps what is POSTed to /v1/traces and
 * /v1/metrics. A request's span arrives named by method and route template,
 * with its status, and the engine's metrics arrive beside it.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  type E2eServer,
  type Json,
  payClient,
  startServer
} from "./e2e-support.js"
import { sleep, UNKNOWN_PAYMENT } from "./payments-support.js"

interface Export {
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Json
}

const startCollector = async () => {
  const received: Array<Export> = []
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({
        path: request.url ?? "",
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
      })
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

type Attribute = { key: string; value: Record<string, unknown> }
const attributeOf = (attributes: ReadonlyArray<Attribute>, key: string) => {
  const value = attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

const spansOf = (received: ReadonlyArray<Export>): Array<Json> =>
  received
    .filter((e) => e.path === "/v1/traces")
    .flatMap((e) => e.body.resourceSpans as Array<Json>)
    .flatMap((r) => r.scopeSpans as Array<Json>)
    .flatMap((s) => s.spans as Array<Json>)

const metricNamesOf = (received: ReadonlyArray<Export>): Set<string> =>
  new Set(
    received
      .filter((e) => e.path === "/v1/metrics")
      .flatMap((e) => e.body.resourceMetrics as Array<Json>)
      .flatMap((r) => r.scopeMetrics as Array<Json>)
      .flatMap((s) => s.metrics as Array<Json>)
      .map((m) => m.name as string)
  )

describe("OpenTelemetry export to a loopback collector", () => {
  let collector: Awaited<ReturnType<typeof startCollector>>
  let server: E2eServer

  beforeAll(async () => {
    collector = await startCollector()
    server = await startServer("sqlite", {
      telemetry: Option.some({
        otlpEndpoint: collector.url,
        serviceName: "pay-e2e",
        headers: { "x-collector-key": "k1" },
        exportIntervalMs: 200
      })
    })
  })
  afterAll(async () => {
    await server?.stop()
    await collector?.close()
  })

  it("a request's span arrives named by method and route template, with its status; metrics too", async () => {
    const merchant = await createMerchant(payClient(server), "Traced Shop")
    const response = await client(() => server.baseUrl).get(`/v1/payments/${UNKNOWN_PAYMENT}`, {
      headers: { "merchant-id": merchant.id }
    })
    expect(response.status).toBe(404)

    const deadline = Date.now() + 10_000
    const wanted = () => spansOf(collector.received).find((s) => s.name === "GET /v1/payments/:id")
    while (
      (wanted() === undefined ||
        !metricNamesOf(collector.received).has("pay_http_requests_total")) &&
      Date.now() < deadline
    ) {
      await sleep(50)
    }
    const span = wanted()
    expect(span).toBeDefined()
    expect(attributeOf(span.attributes, "http.route")).toBe("/v1/payments/:id")
    expect(attributeOf(span.attributes, "http.request.method")).toBe("GET")
    expect(Number(attributeOf(span.attributes, "http.response.status_code"))).toBe(404)
    expect(span.kind).toBe(2) // SERVER
    expect(BigInt(span.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano))

    const names = metricNamesOf(collector.received)
    expect(names.has("pay_http_requests_total")).toBe(true)
    expect(names.has("pay_http_request_duration_seconds")).toBe(true)

    const traces = collector.received.find((e) => e.path === "/v1/traces")!
    expect(traces.headers["x-collector-key"]).toBe("k1")
    const resource = traces.body.resourceSpans[0].resource.attributes as Array<Attribute>
    expect(attributeOf(resource, "service.name")).toBe("pay-e2e")
  })
})
