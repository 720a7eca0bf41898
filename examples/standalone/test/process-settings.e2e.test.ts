/**
 * `npm start` under a path and behind a proxy, the settings it refuses to start with, and the
 * server and the CLI on PostgreSQL (a fresh schema of the test run's database), as processes.
 * Under `npm run test:bun` the server is `npm run start:bun`'s, on Bun. On a SQLite file:
 * process.e2e.test.ts.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapKeyOf } from "./instances-support.js"
import {
  type AuditJson,
  appsScenario,
  baseEnv,
  children,
  cliOn,
  dir,
  expectStartRefused,
  PG_MIGRATIONS,
  processHooks,
  sqliteEnv,
  startRefused,
  startServer,
  stop
} from "./process-support.js"

processHooks()

describe("npm start under a path", () => {
  it("serves only under the path of PAY_PUBLIC_URL, its links, page and document with it", async () => {
    const env = {
      ...baseEnv,
      PAY_DATABASE: join(dir, "prefixed.sqlite"),
      PAY_PUBLIC_URL: "http://shop.test/pay/"
    }
    const server = await startServer(env)
    try {
      expect(server.output()).toContain("API reference: http://shop.test/pay/docs")
      expect((await fetch(`${server.url}/pay/health`)).status).toBe(200)
      expect((await fetch(`${server.url}/health`)).status).toBe(404)
      const document = (await (await fetch(`${server.url}/pay/openapi.json`)).json()) as {
        servers: unknown
      }
      expect(document.servers).toEqual([{ url: "/pay" }])
      const page = await (await fetch(`${server.url}/pay/docs`)).text()
      expect(page).toContain('src="/pay/docs/scalar.js')
      expect(page).toContain("/pay/openapi.json")
      expect((await fetch(`${server.url}/pay/docs/scalar.js?v=1`)).status).toBe(200)
      const key = bootstrapKeyOf(server.output())
      const merchant = (await (
        await fetch(`${server.url}/pay/v1/merchants`, {
          method: "POST",
          headers: {
            "Api-Key": key!,
            "Idempotency-Key": "p-1",
            "Content-Type": "application/json"
          },
          body: JSON.stringify({ merchantName: "Shop", merchantEmail: "s@shop.test" })
        })
      ).json()) as { merchant: { id: string } }
      const payment = (await (
        await fetch(`${server.url}/pay/v1/payments`, {
          method: "POST",
          headers: {
            "Api-Key": key!,
            "Merchant-Id": merchant.merchant.id,
            "Content-Type": "application/json"
          },
          body: JSON.stringify({
            referenceId: "R-1",
            amount: { unit: "iso4217/USD", value: "100" }
          })
        })
      ).json()) as { paymentId: string; gatewayUrl: string }
      expect(payment.gatewayUrl).toBe(`http://shop.test/pay/${payment.paymentId}`)
    } finally {
      expect(await stop(server.child)).toBe(0)
    }
  }, 60_000)

  it("serves at the root behind a proxy that takes the path off (PAY_BASE_PATH empty)", async () => {
    const env = {
      ...baseEnv,
      PAY_DATABASE: join(dir, "proxied.sqlite"),
      PAY_PUBLIC_URL: "https://shop.test/pay",
      PAY_BASE_PATH: ""
    }
    const server = await startServer(env)
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
      expect((await fetch(`${server.url}/pay/health`)).status).toBe(404)
    } finally {
      expect(await stop(server.child)).toBe(0)
    }
  }, 60_000)

  it("refuses to run the sandbox chain on an address that is not loopback unless PAY_SANDBOX=1", async () => {
    // Refused before anything listens: nothing is bound on the address.
    await expectStartRefused(
      { ...sqliteEnv, HOST: "0.0.0.0" },
      "HOST 0.0.0.0 is not a loopback address, and without PAY_CONFIG the server runs the sandbox chain",
      { oneLine: true }
    )
  }, 60_000)

  it("refuses every wrong setting of a start at once, one line each naming it, exit code 1", async () => {
    // One start for them all; each value a setting refuses is told apart in startErrors.test.ts.
    const wrong = {
      PAY_SANDBOX: "yes",
      PAY_SECRET: btoa("too short"),
      PAY_WEBHOOK_RETRY_SCHEDULE: "5,soon",
      PAY_WEBHOOK_LEASE_SECONDS: "1",
      PAY_BUYER_DATA_RETENTION_DAYS: "forever",
      PAY_BASE_PATH: "pay/",
      PAY_FETCH_ALLOW_PRIVATE: "yes",
      PAY_SQLITE_READ_WORKER: "yes"
    }
    const database = join(dir, "refused.sqlite")
    const refused = await startRefused({ ...sqliteEnv, PAY_DATABASE: database, ...wrong })
    expect(refused.code, refused.stderr).toBe(1)
    const lines = refused.stderr.trimEnd().split("\n")
    expect(lines, refused.stderr).toHaveLength(Object.keys(wrong).length)
    for (const line of lines) expect(line).toMatch(/^error: /)
    for (const message of [
      'PAY_SANDBOX is "yes"; it must be 1 (the sandbox on any address) or 0 (loopback only, the default)',
      "PAY_SECRET must be at least 32 random bytes (it holds 9)",
      'PAY_WEBHOOK_RETRY_SCHEDULE is "5,soon"; it must be up to 50 whole numbers of seconds',
      'PAY_WEBHOOK_LEASE_SECONDS is "1"; it must be from 2 to 600',
      'PAY_BUYER_DATA_RETENTION_DAYS is "forever"',
      'PAY_BASE_PATH is "pay/"; it must be empty or a path like /pay',
      'PAY_FETCH_ALLOW_PRIVATE is "yes"; it must be 1 (on) or 0 (off, the default)',
      'PAY_SQLITE_READ_WORKER is "yes"; it must be 1 (on, the default) or 0 (off)'
    ]) {
      expect(
        lines.filter((line) => line.includes(message)),
        message
      ).toHaveLength(1)
    }
    // Refused before the database is opened: the file was never made.
    expect(existsSync(database)).toBe(false)
  }, 60_000)
})

describe("npm start and the CLI on PostgreSQL", () => {
  const scope = Effect.runSync(Scope.make())
  let url: string

  beforeAll(async () => {
    url = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  })

  afterAll(async () => {
    // The servers let go of their connections before the schema is dropped.
    for (const child of children) child.kill("SIGKILL")
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("`pay apps` creates and lists wallet apps on PostgreSQL", async () => {
    // A schema of its own, dropped with the other at the end.
    const appsUrl = await Effect.runPromise(Scope.extend(freshSchema(), scope))
    await appsScenario(cliOn({ ...baseEnv, PAY_DATABASE: appsUrl }))
  }, 60_000)

  it("prints a key on first start, keeps a merchant, shares the database with the CLI, and stops cleanly", async () => {
    const env = { ...baseEnv, PAY_DATABASE: url }
    // Migrated ahead of the first start, as an operator may; the server then finds nothing to do.
    const migrated = JSON.parse((await cliOn(env)("migrate", "--json")).stdout)
    expect(migrated).toEqual({ applied: PG_MIGRATIONS })
    expect(JSON.parse((await cliOn(env)("migrate", "--json")).stdout)).toEqual({ applied: [] })
    const first = await startServer(env)
    const key = bootstrapKeyOf(first.output())
    expect(key, first.output()).toBeDefined()
    // The URL is shown, never its password.
    const shown = new URL(url)
    shown.password = ""
    expect(first.output()).toContain(`Database: ${shown}\n`)
    const password = new URL(url).password
    if (password !== "") expect(first.output()).not.toContain(password)

    const created = await fetch(`${first.url}/v1/merchants`, {
      method: "POST",
      headers: { "Api-Key": key!, "Idempotency-Key": "pg-1", "Content-Type": "application/json" },
      body: JSON.stringify({ merchantName: "Pg Shop", merchantEmail: "pg@shop.example" })
    })
    expect(created.status).toBe(201)
    const { merchant } = (await created.json()) as { merchant: { id: string; name: string } }
    expect(merchant.name).toBe("Pg Shop")
    const read = await fetch(`${first.url}/v1/merchants/${merchant.id}`, {
      headers: { "Api-Key": key! }
    })
    expect(read.status).toBe(200)
    expect(((await read.json()) as { merchant: unknown }).merchant).toEqual({
      ...merchant,
      settlements: { crypto: [], fiat: [] }
    })

    // The CLI on the same database while the server runs.
    const listed = JSON.parse((await cliOn(env)("partners", "list", "--json")).stdout) as Array<{
      name: string
    }>
    expect(listed.map((p) => p.name)).toEqual(["Default partner"])

    // A settlement registered over the API is in the audit trail the CLI lists.
    const registered = await fetch(`${first.url}/v1/merchants/${merchant.id}/settlements/crypto`, {
      method: "POST",
      headers: { "Api-Key": key!, "Idempotency-Key": "pg-2", "Content-Type": "application/json" },
      body: JSON.stringify({
        settlements: [
          {
            asset: "eip155:8453/slip44:60",
            destination: "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"
          }
        ]
      })
    })
    expect(registered.status).toBe(201)
    const audited = JSON.parse((await cliOn(env)("audit", "--json")).stdout) as Array<AuditJson>
    expect(audited.map((e) => [e.action, e.merchantId, e.before])).toEqual([
      ["settlement.created", merchant.id, null],
      // The first partner's key, made at the first start.
      ["api_key.created", null, null]
    ])

    expect(await stop(first.child)).toBe(0)
    expect(first.output()).toContain("Pay engine stopped.")
  }, 60_000)
})
