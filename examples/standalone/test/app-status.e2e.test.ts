/**
 * Wallet apps an operator switches off (issue 40), over HTTP on the real
 * server, on SQLite and on PostgreSQL: a disabled app is refused on the
 * gateway with 403 `app_disabled` by its Api-Key, by its App-Id and by both,
 * within 5 s (the status is remembered 4 s at most, as a verified key is);
 * other apps go on; enabled again, it is served again. Its last use is
 * recorded once, not per request. Then two instances on one PostgreSQL schema:
 * disabled through one, the other refuses it within 5 s, and serves it again
 * within 5 s of its enabling. The CLI's `apps disable` and `apps enable`:
 * process.e2e.test.ts.
 */
import { WalletApps } from "@pay/core"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ApiResponse,
  type Client,
  client,
  type E2eServer,
  eventually,
  expectError,
  STORES,
  startServer
} from "./e2e-support.js"
import { paymentFor, settledMerchant, walletClient } from "./gateway-support.js"

const SDK_HEADERS = { "api-version": "2026-02-19.preview", accept: "application/json" }

/** The bound the issue sets: every instance refuses a disabled app within this. */
const WITHIN_MS = 5_000

type WalletAppStatus = "active" | "disabled"
const setStatus = (server: E2eServer, appId: string, status: WalletAppStatus) =>
  server.runEngine(WalletApps.use((apps) => apps.setStatus(appId, status)))
const stored = (server: E2eServer, appId: string) =>
  server
    .runEngine(WalletApps.use((apps) => apps.list))
    .then((apps) => apps.find((a) => a.id === appId)!)

/** A wallet app and the three ways it may authenticate: key, App-Id, both. */
const ways = (wallet: Client, appId: string, apiKey: string) =>
  ({
    "Api-Key": (path: string) => wallet.get(path, { key: apiKey }),
    "App-Id": (path: string) => wallet.get(path, { key: null, headers: { "app-id": appId } }),
    both: (path: string) => wallet.get(path, { key: apiKey, headers: { "app-id": appId } })
  }) as const

/** Asks every 100 ms until `check` holds; throws with the last answer after WITHIN_MS. */
const within = (ask: () => Promise<ApiResponse>, check: (r: ApiResponse) => void) =>
  eventually(
    async () => {
      const response = await ask()
      check(response)
      return response
    },
    { timeoutMs: WITHIN_MS, intervalMs: 100 }
  )

const refusedDisabled = (response: ApiResponse) => {
  expectError(response, 403, "app_disabled")
  expect(response.body.message).toContain("disabled by the operator")
}
const served = (response: ApiResponse) => expect(response.status, response.text).toBe(200)

describe.each(STORES)("a wallet app the operator disables, on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  it("is refused by its key, its App-Id and both within 5 s, other apps go on; enabled, it is served again", async () => {
    const app = await walletClient(server)
    const other = await walletClient(server)
    const { paymentId } = await paymentFor(partner, merchantId)
    const path = `/v1/gateway/payment/${paymentId}`
    const by = ways(app.api, app.appId, app.apiKey)
    // Served, and so remembered by the instance (the key verified, the App-Id found).
    for (const ask of Object.values(by)) served(await ask(path))

    const disabled = await setStatus(server, app.appId, "disabled")
    expect(disabled.status).toBe("disabled")
    const started = Date.now()
    for (const ask of Object.values(by)) await within(() => ask(path), refusedDisabled)
    expect(Date.now() - started).toBeLessThan(WITHIN_MS)
    // A route of its own too: every gateway route is behind the same check.
    refusedDisabled(await by["App-Id"](`${path}/status`))
    served(await other.api.get(path))
    // A wrong key is still told apart: the status is checked after the credentials.
    expectError(await app.api.get(path, { key: "pk_wrong" }), 401, "invalid_api_key")

    await setStatus(server, app.appId, "active")
    for (const ask of Object.values(by)) await within(() => ask(path), served)
  }, 60_000)

  it("records the app's last use once, not on every request", async () => {
    const app = await walletClient(server)
    expect((await stored(server, app.appId)).lastUsedAt).toBeNull()
    const { paymentId } = await paymentFor(partner, merchantId)
    served(await app.api.get(`/v1/gateway/payment/${paymentId}`))
    const first = (await stored(server, app.appId)).lastUsedAt
    expect(first).not.toBeNull()
    for (let i = 0; i < 3; i++) served(await app.api.get(`/v1/gateway/payment/${paymentId}`))
    expect((await stored(server, app.appId)).lastUsedAt).toEqual(first)
  }, 30_000)
})

describe("a wallet app disabled on one instance of two on PostgreSQL", () => {
  const scope = Effect.runSync(Scope.make())
  const servers: Array<E2eServer> = []

  beforeAll(async () => {
    const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
    for (let i = 0; i < 2; i++) servers.push(await startServer("postgres", { database }))
  }, 60_000)

  afterAll(async () => {
    for (const server of servers) await server.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("is refused on the other within 5 s, by key and by App-Id, and served there again within 5 s of its enabling", async () => {
    const [one, other] = servers as [E2eServer, E2eServer]
    const partner = client(() => one.baseUrl)
    const merchantId = await settledMerchant(partner)
    const { paymentId } = await paymentFor(partner, merchantId)
    const path = `/v1/gateway/payment/${paymentId}`
    const app = await walletClient(one)
    // The app's client, its base URL the other instance's (the SDK's headers as a wallet's).
    const base = client(() => other.baseUrl)
    const onOther: Client = {
      request: (method, route, options = {}) =>
        base.request(method, route, {
          ...options,
          headers: { ...SDK_HEADERS, ...options.headers }
        }),
      get: (route, options = {}) => onOther.request("GET", route, options)
    }
    const by = ways(onOther, app.appId, app.apiKey)
    // The other instance remembers the app as active before the switch.
    for (const ask of Object.values(by)) served(await ask(path))

    await setStatus(one, app.appId, "disabled")
    const started = Date.now()
    for (const ask of Object.values(by)) await within(() => ask(path), refusedDisabled)
    expect(Date.now() - started).toBeLessThan(WITHIN_MS)

    await setStatus(one, app.appId, "active")
    for (const ask of Object.values(by)) await within(() => ask(path), served)
  }, 60_000)
})
