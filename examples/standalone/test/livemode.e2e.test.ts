/**
 * End to end over loopback against the real standalone server, on each store
 * (issue 19, "the sandbox is never mistaken for money"): every view of a
 * payment carries `livemode`, false on the sandbox chain, true with a
 * PAY_CONFIG of a live network, false with one whose every network is
 * `"testnet": true`. A payment keeps the mode it was created in when the
 * server restarts, on the same database, in the other mode; one stored before
 * migration 0018 (no mode recorded) shows the mode the server runs in.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import * as PgStorage from "@pay/storage-postgres"
import { Effect, Exit, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  type E2eServer,
  freshDatabase,
  type Json,
  payClient,
  runtimeHost,
  STORES,
  type Store,
  startServer,
  whole
} from "./e2e-support.js"
import { walletClient } from "./gateway-support.js"
import { cancel, refund, startProcessing, succeed, usd } from "./payments-support.js"

const KEY = `0x${"5a".repeat(32)}`

/** A PAY_CONFIG network; its RPC is never called by what these tests do. */
const network = (chainId: string, token: string, testnet?: boolean) => ({
  chainId,
  name: chainId,
  rpcUrl: "http://127.0.0.1:9",
  collectorKey: KEY,
  ...(testnet === undefined ? {} : { testnet }),
  tokens: [
    {
      asset: `${chainId}/erc20:${token}`,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      priceCurrency: "USD"
    }
  ]
})

const LIVE = {
  networks: [network("eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
}
const TESTNETS = {
  networks: [
    network("eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", true),
    network("eip155:11155111", "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", true)
  ]
}

const dir = mkdtempSync(join(tmpdir(), "pay-livemode-"))
const configFile = (name: string, content: unknown) => {
  const path = join(dir, `${name}.json`)
  writeFileSync(path, JSON.stringify(content))
  return Option.some(path)
}
const configs = {
  sandbox: Option.none<string>(),
  live: configFile("live", LIVE),
  testnets: configFile("testnets", TESTNETS)
}
type Mode = keyof typeof configs

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * What a payment looks like before migration 0018: no mode recorded. Written
 * while no server runs on the database.
 */
const forgetMode = async (store: Store, database: string, paymentId: string) => {
  if (store === "sqlite") {
    const db = runtimeHost.sqlite.openConnection(database)
    try {
      db.prepare("UPDATE payments SET livemode = NULL WHERE id = ?").run(paymentId)
    } finally {
      db.close()
    }
    return
  }
  await Effect.runPromise(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`UPDATE payments SET livemode = NULL WHERE id = ${paymentId}`
    ).pipe(Effect.provide(PgStorage.clientLayer({ url: database })))
  )
}

describe.each(STORES)("%s", (store) => {
  /** One database for the file: servers start on it in turn, each in its mode. */
  let scope: Scope.CloseableScope
  let database: string
  let server: E2eServer | undefined

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    database = await Effect.runPromise(Scope.extend(freshDatabase(store), scope))
  })

  afterAll(async () => {
    await server?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** Stops the running server, if any, and starts one in `mode` on the same database. */
  const restart = async (mode: Mode) => {
    await server?.stop()
    server = undefined
    server = await startServer(store, { database, payConfigPath: configs[mode] })
    return server
  }

  const api = client(() => server!.baseUrl)
  let merchantId: string

  /** The mode of `paymentId` in every view the partner API and the gateway give of it. */
  const viewsOf = async (paymentId: string, referenceId: string) => {
    const wallet = await walletClient(server!)
    const byMerchant = { headers: { "merchant-id": merchantId } }
    const inList = (rows: Array<Json>, key = "paymentId") =>
      rows.find((row: Json) => row[key] === paymentId)?.livemode
    const [got, listed, merchantListed, legacy, gateway] = await Promise.all([
      api.get(`/v1/payments/${paymentId}`),
      api.get(`/v1/payments?referenceId=${referenceId}`),
      api.get(`/v1/merchants/payments?limit=200`, byMerchant),
      api.get(`/v1/merchants/${merchantId}/payments?limit=200`),
      wallet.api.get(`/v1/gateway/payment/${paymentId}`)
    ])
    for (const response of [got, listed, merchantListed, legacy, gateway]) {
      expect(response.status).toBe(200)
    }
    return {
      get: got.body.livemode,
      list: inList(listed.body.data),
      merchantList: inList(merchantListed.body.data),
      legacy: inList(legacy.body.data, "payment_id"),
      gateway: gateway.body.livemode
    }
  }
  const everywhere = (livemode: boolean) => ({
    get: livemode,
    list: livemode,
    merchantList: livemode,
    legacy: livemode,
    gateway: livemode
  })

  /** A payment created through the typed client: its create answer says the mode. */
  const create = async (referenceId: string, livemode: boolean) => {
    const pay = payClient(server!)
    const created = whole(
      pay,
      await pay.payments.create(merchantId, { referenceId, amount: usd("1050") })
    )
    expect(created.livemode).toBe(livemode)
    expect(await viewsOf(created.paymentId, referenceId)).toEqual(everywhere(livemode))
    return created.paymentId
  }

  /** Cancels the payment: the answer and the payment.cancelled event's snapshot say the mode. */
  const cancelled = async (paymentId: string, livemode: boolean) => {
    const answer = await cancel(api, paymentId, merchantId)
    expect(answer.status).toBe(200)
    expect(answer.body.livemode).toBe(livemode)
    const events = await api.get(`/v1/events?paymentId=${paymentId}&type=payment.cancelled`)
    expect(events.status).toBe(200)
    expect(events.body.data.map((e: Json) => e.data.object.livemode)).toEqual([livemode])
  }

  /** Made in one mode, read in every later one. */
  const made: Array<{
    readonly id: string
    readonly reference: string
    readonly livemode: boolean
  }> = []
  const expectKept = async () => {
    for (const { id, reference, livemode } of made) {
      expect(await viewsOf(id, reference), `${id} made with livemode ${livemode}`).toEqual(
        everywhere(livemode)
      )
    }
  }

  it("says false on the sandbox chain, in every view, the refund and the events", async () => {
    await restart("sandbox")
    merchantId = (await createMerchant(payClient(server!), "Mode Shop")).id
    const paid = await create("mode-sandbox-paid", false)
    await startProcessing(server!, paid)
    await succeed(server!, paid)
    const refunded = await refund(api, paid)
    expect(refunded.status).toBe(201)
    expect(refunded.body.refund.livemode).toBe(false)
    const events = await api.get(`/v1/events?paymentId=${paid}`)
    expect(events.body.data.length).toBeGreaterThanOrEqual(3)
    for (const event of events.body.data) expect(event.data.object.livemode).toBe(false)
    await cancelled(await create("mode-sandbox-cancelled", false), false)
    made.push({ id: paid, reference: "mode-sandbox-paid", livemode: false })
  })

  it("says true with a live network; the sandbox's payments stay false", async () => {
    await restart("live")
    const id = await create("mode-live", true)
    await cancelled(await create("mode-live-cancelled", true), true)
    made.push({ id, reference: "mode-live", livemode: true })
    await expectKept()
  })

  it("says false when every network is a testnet; the live payments stay true", async () => {
    await restart("testnets")
    const id = await create("mode-testnets", false)
    await cancelled(await create("mode-testnets-cancelled", false), false)
    made.push({ id, reference: "mode-testnets", livemode: false })
    await expectKept()
    // And back to live: nothing made before changes.
    await restart("live")
    await expectKept()
  })

  it("shows a payment stored before its mode was recorded in the mode the server runs in", async () => {
    await restart("live")
    const id = await create("mode-unrecorded", true)
    await server!.stop()
    server = undefined
    await forgetMode(store, database, id)
    await restart("live")
    expect(await viewsOf(id, "mode-unrecorded")).toEqual(everywhere(true))
    await restart("sandbox")
    expect(await viewsOf(id, "mode-unrecorded")).toEqual(everywhere(false))
    await restart("testnets")
    expect(await viewsOf(id, "mode-unrecorded")).toEqual(everywhere(false))
    await expectKept()
  })
})
