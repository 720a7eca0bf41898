/**
 * The operator's routes over loopback, on the real standalone server and on
 * both stores: `/health` (alive), `/ready` (the database, its migrations and
 * each network's RPC, named with their states; 503 naming the network whose
 * RPC is down or hung, within the bound) and `/metrics` (requests by route
 * template and status, payments by status, held long-polls, RPC errors, as
 * exact deltas of the Prometheus text).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type ChainServer, COLLECTOR_PRIVATE_KEY, serveChain } from "@pay/sandbox-chain"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  type E2eServer,
  expectError,
  type Merchant,
  PARTNER_KEY,
  payClient,
  STORES,
  startServer
} from "./e2e-support.js"
import { newPayment, sleep, UNKNOWN_PAYMENT } from "./payments-support.js"
import { type RpcProxy, startRpcProxy } from "./rpc-proxy.js"

/** One sample's value in Prometheus text (`name{labels}` exactly as rendered); 0 when absent. */
const sampleOf = (text: string, series: string): number => {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1))
  }
  return 0
}

const until = async (check: () => Promise<boolean>, what: string, ms = 15_000) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(20)
  }
}

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let merchant: Merchant
  const api = client(() => server.baseUrl)
  const metrics = async () => {
    const response = await api.get("/metrics", { key: null })
    expect(response.status).toBe(200)
    return response.text
  }

  beforeAll(async () => {
    server = await startServer(store)
    merchant = await createMerchant(payClient(server), "Operations Shop")
  })
  afterAll(async () => {
    await server?.stop()
  })

  it("/health answers ok without a key, touching nothing", async () => {
    const response = await api.get("/health", { key: null })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ status: "ok" })
  })

  it("/ready is 200 naming the database, the migrations (all applied) and the network", async () => {
    const response = await api.get("/ready", { key: null })
    expect(response.status).toBe(200)
    expect(response.body.status).toBe("ready")
    const checks = response.body.checks as Array<{ name: string; status: string; detail?: string }>
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ["database", "ok"],
      ["migrations", "ok"],
      ["network eip155:31337", "ok"]
    ])
    // PostgreSQL has one migration more: finer statistics for the reference search (0024).
    // Both then let chain jobs be deploys (SQLite 0024, PostgreSQL 0025), say how options
    // are paid (SQLite 0025, PostgreSQL 0026), take the native coin (0026, 0027) and give
    // API keys scopes (0027, 0028), wallet apps a status (0028, 0029) and the purge its
    // indexes and lease (0029, 0030).
    const known = store === "postgres" ? 30 : 29
    expect(checks[1]!.detail).toBe(`${known} of ${known} applied`)
    expect(checks[2]!.detail).toMatch(/^block \d+$/)
    for (const check of checks) expect(typeof (check as { ms?: unknown }).ms).toBe("number")
  })

  it("/metrics is Prometheus text; a request is counted by its route template and status", async () => {
    const response = await api.get("/metrics", { key: null })
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    expect(response.text).toContain("# TYPE pay_http_requests_total counter")
    expect(response.text).toContain("# TYPE pay_http_request_duration_seconds histogram")

    const notFound = 'pay_http_requests_total{method="GET",route="/v1/payments/:id",status="404"}'
    const found = 'pay_http_requests_total{method="GET",route="/v1/payments/:id",status="200"}'
    const timedSeries =
      'pay_http_request_duration_seconds_count{method="GET",route="/v1/payments/:id",status="404"}'
    const unmatched = 'pay_http_requests_total{method="GET",route="unmatched",status="404"}'
    const before = response.text
    const headers = { "merchant-id": merchant.id }
    const payment = await newPayment(payClient(server), merchant.id)
    expect((await api.get(`/v1/payments/${UNKNOWN_PAYMENT}`, { headers })).status).toBe(404)
    expect((await api.get(`/v1/payments/${UNKNOWN_PAYMENT}`, { headers })).status).toBe(404)
    expect((await api.get(`/v1/payments/${payment.paymentId}`, { headers })).status).toBe(200)
    expect((await api.get("/no/such/route", { key: null })).status).toBe(404)
    const after = await metrics()
    expect(sampleOf(after, notFound) - sampleOf(before, notFound)).toBe(2)
    expect(sampleOf(after, timedSeries) - sampleOf(before, timedSeries)).toBe(2)
    expect(sampleOf(after, found) - sampleOf(before, found)).toBe(1)
    expect(sampleOf(after, unmatched) - sampleOf(before, unmatched)).toBe(1)
    // Never the path as sent: ids would make a series each.
    expect(after).not.toContain(payment.paymentId)
    expect(after).not.toContain(UNKNOWN_PAYMENT)
    expect(after).not.toContain(PARTNER_KEY)
    expect(after).not.toContain(merchant.id)
    // Effect's runtime metrics (effect_fiber_*) are not the engine's to show.
    expect(after).not.toMatch(/^effect_/m)
  })

  it("payments by status: a created payment counts once in requires_action, a cancel in cancelled", async () => {
    const created = 'pay_payment_transitions_total{status="requires_action"}'
    const cancelled = 'pay_payment_transitions_total{status="cancelled"}'
    const before = await metrics()
    const payment = await newPayment(payClient(server), merchant.id)
    const middle = await metrics()
    expect(sampleOf(middle, created) - sampleOf(before, created)).toBe(1)
    expect(sampleOf(middle, cancelled) - sampleOf(before, cancelled)).toBe(0)
    await payClient(server).payments.cancel(payment.paymentId, { merchantId: merchant.id })
    const after = await metrics()
    expect(sampleOf(after, cancelled) - sampleOf(middle, cancelled)).toBe(1)
    expect(sampleOf(after, created) - sampleOf(middle, created)).toBe(0)
  })

  it("held long-polls go up while one is held and back down when its client leaves", async () => {
    const held = async () => sampleOf(await metrics(), "pay_long_polls_held")
    const before = await held()
    const payment = await newPayment(payClient(server), merchant.id)
    const leaving = new AbortController()
    const polling = fetch(
      `${server.baseUrl}/v1/payments/${payment.paymentId}/status?maxPollMs=20000`,
      {
        headers: { "api-key": PARTNER_KEY, "merchant-id": merchant.id },
        signal: leaving.signal
      }
    ).catch((error: unknown) => error)
    await until(async () => (await held()) === before + 1, "the long-poll shows as held")
    leaving.abort()
    await polling
    await until(async () => (await held()) === before, "the long-poll is no longer held")
  })

  it("the chain job queue and the process levels are there, as numbers", async () => {
    const text = await metrics()
    for (const name of [
      "pay_chain_jobs_active",
      "pay_chain_jobs_due",
      "pay_chain_job_oldest_due_age_seconds",
      "pay_process_uptime_seconds",
      "pay_process_resident_memory_bytes"
    ]) {
      expect(text).toMatch(new RegExp(`^${name} \\d+(\\.\\d+)?(e[+-]?\\d+)?$`, "m"))
    }
    expect(sampleOf(text, "pay_database_up")).toBe(1)
    // The bounded counters' series are there before their first count.
    expect(text).toContain('pay_payment_transitions_total{status="expired"} ')
    expect(text).toContain('pay_rpc_errors_total{network="eip155:31337"} ')
    expect(sampleOf(text, "pay_process_uptime_seconds")).toBeGreaterThan(0)
  })
})

describe.each(STORES)("%s, a network behind an RPC that goes down", (store) => {
  let chain: ChainServer
  let proxy: RpcProxy
  let server: E2eServer
  let dir: string
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    chain = await serveChain()
    proxy = await startRpcProxy(chain.url)
    dir = mkdtempSync(join(tmpdir(), "pay-ready-"))
    const payConfig = join(dir, "pay-config.json")
    const token = chain.sandbox.description.tokens[0]!
    writeFileSync(
      payConfig,
      JSON.stringify({
        networks: [
          {
            chainId: "eip155:31337",
            name: "Test chain",
            // A path like a provider's key: /ready must never show it.
            rpcUrl: `${proxy.url}/v2/secret-rpc-key`,
            etaSeconds: 1,
            pollIntervalMs: 50,
            collectorKey: COLLECTOR_PRIVATE_KEY,
            tokens: [
              {
                asset: token.asset,
                symbol: token.symbol,
                name: token.name,
                decimals: token.decimals,
                priceCurrency: "USD"
              }
            ]
          }
        ]
      })
    )
    server = await startServer(store, { payConfigPath: Option.some(payConfig) })
  })
  afterAll(async () => {
    await server?.stop()
    await proxy?.close()
    await chain?.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  const rpcErrors = async () =>
    sampleOf(
      (await api.get("/metrics", { key: null })).text,
      'pay_rpc_errors_total{network="eip155:31337"}'
    )

  it("/ready is 200 while the RPC answers, 503 naming the network once it is down", async () => {
    const up = await api.get("/ready", { key: null })
    expect(up.status).toBe(200)
    expect(up.body.checks[2]).toMatchObject({ name: "network eip155:31337", status: "ok" })

    const errorsBefore = await rpcErrors()
    await proxy.down()
    try {
      const startedAt = Date.now()
      const down = await api.get("/ready", { key: null })
      expect(Date.now() - startedAt).toBeLessThan(3_000)
      expect(down.status).toBe(503)
      expect(down.body.status).toBe("not_ready")
      expect(
        down.body.checks.map((c: { name: string; status: string }) => [c.name, c.status])
      ).toEqual([
        ["database", "ok"],
        ["migrations", "ok"],
        ["network eip155:31337", "failing"]
      ])
      expect(down.body.checks[2].detail).toMatch(/HTTP request failed/)
      expect(down.text).not.toContain("secret-rpc-key")
      // That failed call, at least, is counted against the network.
      expect((await rpcErrors()) - errorsBefore).toBeGreaterThanOrEqual(1)
    } finally {
      await proxy.up()
    }
    expect((await api.get("/ready", { key: null })).status).toBe(200)
  })

  it("a hung RPC makes /ready 503 within its bound, not hang", async () => {
    const holder = proxy.hold((call) => call.method === "eth_getBlockByNumber")
    try {
      const startedAt = Date.now()
      const hung = await api.get("/ready", { key: null })
      const took = Date.now() - startedAt
      expect(hung.status).toBe(503)
      expect(hung.body.checks[2]).toMatchObject({
        name: "network eip155:31337",
        status: "failing",
        detail: "did not answer within 2s"
      })
      expect(took).toBeGreaterThanOrEqual(1_900)
      expect(took).toBeLessThan(3_000)
    } finally {
      holder.stop()
      await holder.release("drop")
    }
  })
})

describe("PAY_METRICS=0", () => {
  let server: E2eServer
  beforeAll(async () => {
    server = await startServer("sqlite", { metrics: false })
  })
  afterAll(async () => {
    await server?.stop()
  })

  it("/metrics is not served: 404, as any unknown route", async () => {
    expectError(await client(() => server.baseUrl).get("/metrics", { key: null }), 404, "not_found")
  })
})
