/**
 * The test engine (@pay/testing: in-memory stores, the scripted chain, a clock
 * the test moves, webhooks captured) against the engine it stands in for: the
 * standalone server in sandbox mode, on a SQLite file and the sandbox's real
 * in-process EVM, over loopback, its webhooks delivered over HTTP to a
 * receiver on 127.0.0.1. The same partner setup on both (a webhook endpoint, a
 * merchant settled in its network's USDC, a wallet app without an icon), the
 * same payments (paid, settled and refunded; refused by the token before any
 * transaction; sent and reverted when mined, the test engine's `failOnChain`;
 * expired; declined by the buyer; cancelled by the merchant): the same events,
 * in the same order, of the same shape, in `GET /v1/events` and in the
 * webhook bodies alike, each delivered once with the same headers.
 *
 * A shape is the JSON with each value replaced by its kind (`shapeOf`): every
 * key and the nesting stay, arrays stay element by element, and what differs
 * by nature between the two engines (ids, times, hashes, addresses, the chain
 * and its token, amounts in digits, the network's name, URLs) is kept as its
 * format only. Every other string (a status, an event type, a reason, a
 * token's symbol, the merchant's name) and every boolean must be equal.
 */
import { WalletApps } from "@pay/core"
import { DEPLOYER_PRIVATE_KEY } from "@pay/sandbox-chain"
import { createTestEngine, type TestEngine } from "@pay/testing"
import { Effect } from "effect"
import { createWalletClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ApiResponse,
  type Client,
  client,
  type E2eServer,
  eventually,
  exactlyAfterQuiet,
  type Json,
  newKey,
  startServer
} from "./e2e-support.js"
import {
  authorizationOf,
  cancelOnChain,
  confirm,
  fund,
  MERCHANT_DESTINATION,
  newBuyer,
  onlyOption,
  signAction,
  signCancelAuthorization,
  signed
} from "./gateway-support.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

// ---- shapes

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
const ADDRESS = "0x[0-9a-fA-F]{40}"

/** A string's format where its value differs by nature between the engines; else null. */
const formatOf = (value: string): string | null => {
  const id = /^([a-z]+)_[0-9A-Za-z]{20}$/.exec(value)
  if (id !== null) return `<${id[1]} id>`
  if (RFC3339.test(value)) return "<RFC 3339>"
  if (/^0x[0-9a-fA-F]{64}$/.test(value)) return "<32-byte hex>"
  if (new RegExp(`^${ADDRESS}$`).test(value)) return "<address>"
  if (new RegExp(`^eip155:\\d+:${ADDRESS}$`).test(value)) return "<CAIP-10 account>"
  const asset = new RegExp(`^(caip19/)?eip155:\\d+/erc20:${ADDRESS}$`).exec(value)
  if (asset !== null) return `${asset[1] ?? ""}<CAIP-19 asset>`
  if (/^eip155:\d+$/.test(value)) return "<CAIP-2 chain>"
  if (/^\d+$/.test(value)) return "<digits>"
  if (/^https?:\/\/\S+$/.test(value)) return "<URL>"
  return null
}

/** Keys whose string value names the chain the engine runs on (`Pay sandbox`, `Base Sepolia`). */
const NETWORK_NAMED = new Set(["networkName"])

/**
 * The JSON's shape: objects by their keys (sorted), arrays element by element, numbers as
 * `<number>`, strings that differ by nature as their format (`formatOf`), other strings and
 * booleans and null as they are.
 */
const shapeOf = (json: unknown, key?: string): unknown => {
  if (json === null || typeof json === "boolean") return json
  if (typeof json === "number") return "<number>"
  if (typeof json === "string") {
    if (key !== undefined && NETWORK_NAMED.has(key)) return "<network name>"
    return formatOf(json) ?? json
  }
  if (Array.isArray(json)) return json.map((item) => shapeOf(item))
  if (typeof json === "object") {
    return Object.fromEntries(
      Object.keys(json)
        .sort()
        .map((k) => [k, shapeOf((json as Record<string, unknown>)[k], k)])
    )
  }
  return `<${typeof json}>`
}

// ---- either engine, as the tests drive it

/** A partner API call on one engine: status and parsed body. */
type Call = (
  method: string,
  path: string,
  options?: { readonly body?: unknown; readonly headers?: Record<string, string> }
) => Promise<Pick<ApiResponse, "status" | "body" | "text">>

/** A webhook as the receiver got it: the event and the headers a platform reads. */
interface Delivered {
  readonly event: Json
  readonly headers: {
    readonly "webhook-id": string
    readonly "content-type": string | undefined
    readonly "user-agent": string | undefined
  }
  /** Whether the endpoint's secret verifies its signature. */
  readonly verified: boolean
}

interface Side {
  readonly api: Call
  readonly merchantId: string
  /** The buyer pays; resolves once the payment succeeded. */
  readonly pay: (paymentId: string) => Promise<void>
  /**
   * The buyer pays with an authorization the token refuses (cancelled on chain first): the
   * engine's estimate of the collection reverts, so it sends none. Resolves once confirmed.
   */
  readonly payRefused: (paymentId: string) => Promise<void>
  /**
   * The buyer pays; the engine's collection passes its estimate and is sent, and reverts when
   * mined (the authorization cancelled on chain in between). Resolves once confirmed.
   */
  readonly payRevertedWhenMined: (paymentId: string) => Promise<void>
  /** The buyer declines in the wallet. */
  readonly decline: (paymentId: string) => Promise<void>
  /** Every webhook delivered so far, in the order they were sent. */
  readonly delivered: () => Promise<ReadonlyArray<Delivered>>
}

const PAYMENT = { referenceId: "ORDER-1", amount: { value: "1250", unit: "iso4217/USD" } }
/** The scripted buyer's wallet app in the test engine: named so, without an icon. */
const WALLET_APP = "Test wallet"

const newPayment = async (side: Side, extra: Json = {}): Promise<string> => {
  const created = await side.api("POST", "/v1/payments", {
    body: { ...PAYMENT, ...extra },
    headers: { "merchant-id": side.merchantId }
  })
  expect(created.status, created.text).toBe(201)
  return created.body.paymentId as string
}

/** The payment's events in `GET /v1/events`, oldest first. */
const eventsOf = async (side: Side, paymentId: string): Promise<Array<Json>> => {
  const page = await side.api("GET", `/v1/events?paymentId=${paymentId}&limit=100`)
  expect(page.status, page.text).toBe(200)
  expect(page.body.nextCursor).toBeNull()
  return [...page.body.data].reverse()
}

/** The webhooks delivered about the payment (its object's `paymentId`), in order. */
const deliveredOf = async (side: Side, paymentId: string) =>
  (await side.delivered()).filter((d) => d.event?.data?.object?.paymentId === paymentId)

/** A webhook endpoint and a merchant settled in the network's USDC: the same on both engines. */
const setUp = async (api: Call, webhookUrl: string, settlement: Json) => {
  const endpoint = await api("POST", "/v1/webhook-endpoints", { body: { url: webhookUrl } })
  expect(endpoint.status, endpoint.text).toBe(201)
  const merchant = await api("POST", "/v1/merchants", {
    body: { merchantName: "Corner shop", merchantEmail: "owner@corner.example" }
  })
  expect(merchant.status, merchant.text).toBe(201)
  const merchantId = merchant.body.merchant.id as string
  const settled = await api("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
    body: { settlements: [settlement] }
  })
  expect(settled.status, settled.text).toBe(201)
  return { merchantId, secret: endpoint.body.secret as string }
}

// ---- the SQLite engine: the standalone server in sandbox mode, over loopback

/** The sandbox chain's USDC (eip155:31337), as gateway-support settles its merchants. */
const SANDBOX_USDC = "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116"

let server: E2eServer | undefined
let receiver: WebhookReceiver | undefined

const startSqlite = async (): Promise<Side> => {
  const started = await startServer(
    "sqlite",
    // Webhooks to loopback allowed (the receiver is on 127.0.0.1); expiries swept often.
    { fetchAllowPrivate: true, expirySweepMs: 200 },
    { webhookDelivery: { pollMs: 20 } }
  )
  server = started
  const http = client(() => started.baseUrl)
  const api: Call = (method, path, options = {}) =>
    http.request(method, path, {
      ...(options.body === undefined ? {} : { body: options.body }),
      ...(options.headers === undefined ? {} : { headers: options.headers }),
      ...(method === "GET" ? {} : { idempotencyKey: newKey() })
    })
  const hooks = await startWebhookReceiver()
  receiver = hooks
  const { merchantId, secret } = await setUp(api, hooks.url, {
    asset: SANDBOX_USDC,
    destination: `eip155:31337:${MERCHANT_DESTINATION}`
  })
  hooks.secrets.push(secret)
  // The wallet app as the test engine's scripted buyer has it (gateway-support's has an icon).
  const { apiKey } = await started.runEngine(
    Effect.flatMap(WalletApps, (apps) => apps.create({ name: WALLET_APP }))
  )
  const wallet: Client = {
    request: (method, path, options = {}) =>
      http.request(method, path, {
        ...options,
        key: apiKey,
        headers: {
          "api-version": "2026-02-19.preview",
          "sdk-name": "e2e-sdk",
          "sdk-version": "1.0.0",
          "sdk-platform": "node",
          accept: "application/json",
          ...options.headers
        }
      }),
    get: (path, options = {}) => wallet.request("GET", path, options)
  }
  return {
    api,
    merchantId,
    pay: async (paymentId) => {
      const buyer = newBuyer()
      await fund(started, buyer, 100_000_000n)
      const option = await onlyOption(wallet, paymentId, buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      const confirmed = await confirm(wallet, paymentId, signed(option.id, signature))
      expect(confirmed.body.status, confirmed.text).toBe("succeeded")
    },
    // The authorization cancelled on chain before the confirm: every check before the submit
    // passes, and the chain reverts the collection (as gateway-refusals.e2e does it).
    payRefused: async (paymentId) => {
      const buyer = newBuyer()
      await fund(started, buyer, 100_000_000n)
      const option = await onlyOption(wallet, paymentId, buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      await cancelOnChain(started, buyer, option)
      const confirmed = await confirm(wallet, paymentId, signed(option.id, signature), "")
      expect(confirmed.status, confirmed.text).toBe(200)
    },
    payRevertedWhenMined: async (paymentId) => {
      const { sandbox } = started
      const buyer = newBuyer()
      await fund(started, buyer, 100_000_000n)
      const option = await onlyOption(wallet, paymentId, buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      // Blocks mined only when the test says: the engine's transaction waits in the pool.
      await sandbox.request({ method: "evm_setAutomine", params: [false] })
      try {
        const confirmed = await confirm(wallet, paymentId, signed(option.id, signature), "")
        expect(confirmed.status, confirmed.text).toBe(200)
        const hash = await eventually(async () => {
          const view = (await api("GET", `/v1/payments/${paymentId}`)).body
          expect(view.transaction?.hash).toMatch(/^0x/)
          await sandbox.publicClient.getTransaction({ hash: view.transaction.hash })
          return view.transaction.hash as `0x${string}`
        })
        // The buyer's cancellation of the authorization, sent by another account with a
        // higher tip: mined first in the same block, so the engine's collection reverts.
        const { nonce } = authorizationOf(option)
        const cancelSignature = await signCancelAuthorization(buyer, option)
        const engineTx = await sandbox.publicClient.getTransaction({ hash })
        const other = createWalletClient({
          account: privateKeyToAccount(DEPLOYER_PRIVATE_KEY),
          chain: sandbox.chain,
          transport: sandbox.transport
        })
        const tip = (engineTx.maxPriorityFeePerGas ?? 1n) * 10n + 1_000_000_000n
        const cancelHash = await other.writeContract({
          address: sandbox.token.address,
          abi: sandbox.token.abi,
          functionName: "cancelAuthorization",
          args: [buyer.address, nonce, cancelSignature],
          // Its gas given: an estimate against the pool (the collection in it) would revert.
          gas: 200_000n,
          maxPriorityFeePerGas: tip,
          maxFeePerGas: (engineTx.maxFeePerGas ?? 0n) * 10n + tip
        })
        await sandbox.request({ method: "evm_mine" })
        const cancelled = await sandbox.publicClient.getTransactionReceipt({ hash: cancelHash })
        const collected = await sandbox.publicClient.getTransactionReceipt({ hash })
        expect([cancelled.status, collected.status]).toEqual(["success", "reverted"])
        expect(cancelled.blockNumber).toBe(collected.blockNumber)
      } finally {
        await sandbox.request({ method: "evm_setAutomine", params: [true] })
      }
    },
    decline: async (paymentId) => {
      const cancelled = await wallet.request("POST", `/v1/gateway/payment/${paymentId}/cancel`, {
        body: {}
      })
      expect(cancelled.status, cancelled.text).toBeLessThan(300)
    },
    delivered: async () =>
      hooks.received.map((r) => ({
        event: r.event,
        headers: {
          "webhook-id": r.id,
          "content-type": r.contentType,
          "user-agent": r.userAgent
        },
        verified: r.verifiedBy.length === 1
      }))
  }
}

/**
 * Waits until the SQLite engine wrote the payment's events up to `last` and delivered each,
 * then listens through a quiet period: no event after them, no second delivery. Answers the
 * events, oldest first.
 */
const sqliteEventsOf = async (side: Side, paymentId: string, last: string) => {
  const events = await eventually(async () => {
    const now = await eventsOf(side, paymentId)
    expect(now.map((e) => e.type)).toContain(last)
    return now
  })
  const ids = events.map((e) => e.id)
  await exactlyAfterQuiet(
    async () => [
      (await eventsOf(side, paymentId)).map((e) => e.id),
      (await deliveredOf(side, paymentId)).map((d) => d.event.id)
    ],
    [ids, ids],
    { what: "the payment's events, and their deliveries" }
  )
  return events
}

// ---- the test engine

let engine: TestEngine | undefined

const startTestEngine = async (): Promise<Side & { readonly engine: TestEngine }> => {
  const started = await createTestEngine()
  engine = started
  const partnerKey = (await started.partners.create({ name: "Shop platform" })).apiKey
  const api: Call = async (method, path, options = {}) => {
    const response = await started.fetch(
      new Request(`http://pay.test${started.basePath}${path}`, {
        method,
        headers: {
          "api-key": partnerKey,
          ...(method === "GET" ? {} : { "idempotency-key": newKey() }),
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
          ...options.headers
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
      })
    )
    const text = await response.text()
    let body: Json
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, body, text }
  }
  const { merchantId } = await setUp(api, "https://shop.test/webhooks", {
    asset: started.network.usdc,
    destination: `${started.network.chainId}:0x00000000000000000000000000000000000000D0`
  })
  return {
    engine: started,
    api,
    merchantId,
    pay: async (paymentId) => {
      const paid = await started.pay(paymentId)
      expect(paid.status).toBe("succeeded")
    },
    // The scripted token refuses the collection as the sandbox's does a cancelled authorization.
    payRefused: async (paymentId) => {
      const before = started.chain.refuseReceive
      started.chain.refuseReceive = () => "FiatTokenV2: authorization is used or canceled"
      try {
        const failed = await started.pay(paymentId)
        expect(failed).toMatchObject({ status: "failed", failureCode: "transaction_reverted" })
      } finally {
        started.chain.refuseReceive = before
      }
    },
    payRevertedWhenMined: async (paymentId) => {
      const failed = await started.failOnChain(paymentId)
      expect(failed).toMatchObject({ status: "failed", failureCode: "transaction_reverted" })
    },
    decline: (paymentId) => started.decline(paymentId),
    delivered: async () => {
      await started.settled()
      return started.deliveries().map((d) => ({
        event: d.event,
        headers: {
          "webhook-id": d.headers["webhook-id"] ?? "",
          "content-type": d.headers["content-type"],
          "user-agent": d.headers["user-agent"]
        },
        verified: true
      }))
    }
  }
}

/** The test engine's events for the payment, once everything due has run. */
const testEventsOf = async (side: Side, paymentId: string) => {
  await engine!.settled()
  return eventsOf(side, paymentId)
}

// ---- the comparison

/**
 * The same events on both engines: the same types in the same order, each of the same shape;
 * on each engine, every event delivered once as a webhook, in that order, its body exactly the
 * event as listed, with the same headers a receiver reads.
 */
const expectSameEvents = async (
  sides: { readonly sqlite: Side; readonly test: Side },
  ids: { readonly sqlite: string; readonly test: string },
  events: { readonly sqlite: ReadonlyArray<Json>; readonly test: ReadonlyArray<Json> }
) => {
  expect(
    events.test.map((e) => e.type),
    "the event types, in order"
  ).toEqual(events.sqlite.map((e) => e.type))
  events.sqlite.forEach((sqliteEvent, i) => {
    expect(shapeOf(events.test[i]), `the shape of ${sqliteEvent.type} (event ${i})`).toEqual(
      shapeOf(sqliteEvent)
    )
  })
  const sqliteDelivered = await deliveredOf(sides.sqlite, ids.sqlite)
  const testDelivered = await deliveredOf(sides.test, ids.test)
  expect(sqliteDelivered.map((d) => d.event)).toEqual(events.sqlite)
  expect(testDelivered.map((d) => d.event)).toEqual(events.test)
  for (const [side, delivered] of [
    ["sqlite", sqliteDelivered],
    ["test", testDelivered]
  ] as const) {
    for (const d of delivered) {
      expect(d.headers["webhook-id"], `${side}: webhook-id is the event's id`).toBe(d.event.id)
      expect(d.verified, `${side}: signed with the endpoint's secret`).toBe(true)
    }
  }
  expect(testDelivered.map((d) => shapeOf(d.headers))).toEqual(
    sqliteDelivered.map((d) => shapeOf(d.headers))
  )
}

let sqlite: Side
let test: Side & { readonly engine: TestEngine }

beforeAll(async () => {
  ;[sqlite, test] = await Promise.all([startSqlite(), startTestEngine()])
})

afterAll(async () => {
  await engine?.close()
  await receiver?.close()
  await server?.stop()
})

describe("the test engine's events are the SQLite engine's", () => {
  it("shapeOf keeps keys, nesting and words, and reduces what differs by nature to its format", () => {
    expect(
      shapeOf({
        id: "evt_0VcHl9CoXndHZ94l6rHx",
        at: "2026-11-28T16:19:45.238Z",
        n: 3,
        ok: false,
        none: null,
        status: "succeeded",
        networkName: "Pay sandbox",
        list: [
          { hash: `0x${"ab".repeat(32)}` },
          "eip155:31337:0x183cA2Bd05Cd26F75B1A3D032C43D12Dac8352fB"
        ],
        unit: "caip19/eip155:84532/erc20:0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        value: "12500000"
      })
    ).toEqual({
      at: "<RFC 3339>",
      id: "<evt id>",
      list: [{ hash: "<32-byte hex>" }, "<CAIP-10 account>"],
      n: "<number>",
      networkName: "<network name>",
      none: null,
      ok: false,
      status: "succeeded",
      unit: "caip19/<CAIP-19 asset>",
      value: "<digits>"
    })
    // A key missing on one side, or one more, is a different shape.
    expect(shapeOf({ a: 1, b: null })).not.toEqual(shapeOf({ a: 2 }))
    expect(shapeOf([{ a: "x" }])).not.toEqual(shapeOf([{ a: "x" }, { a: "x" }]))
  })

  it("a payment paid, settled and refunded: processing, succeeded, settled, refund requested", async () => {
    const ids = { sqlite: await newPayment(sqlite), test: await newPayment(test) }
    await Promise.all([sqlite.pay(ids.sqlite), test.pay(ids.test)])
    // The SQLite engine settles in the background; the test engine when the test says so.
    await eventually(async () => {
      const view = (await sqlite.api("GET", `/v1/payments/${ids.sqlite}`)).body
      expect(view.settlement?.status).toBe("settled")
    })
    expect((await test.engine.settle(ids.test))?.status).toBe("settled")
    for (const side of ["sqlite", "test"] as const) {
      const refunded = await { sqlite, test }[side].api("POST", "/v1/refunds", {
        body: { paymentId: ids[side] }
      })
      expect(refunded.status, `${side}: ${refunded.text}`).toBe(201)
    }

    const events = {
      sqlite: await sqliteEventsOf(sqlite, ids.sqlite, "refund.requested"),
      test: await testEventsOf(test, ids.test)
    }
    expect(events.sqlite.map((e) => e.type)).toEqual([
      "payment.processing",
      "payment.succeeded",
      "payment.settled",
      "refund.requested"
    ])
    await expectSameEvents({ sqlite, test }, ids, events)
  }, 60_000)

  it("a payment whose collection the token refuses (authorization cancelled on chain): failed, transaction_reverted", async () => {
    const ids = { sqlite: await newPayment(sqlite), test: await newPayment(test) }
    await Promise.all([sqlite.payRefused(ids.sqlite), test.payRefused(ids.test)])
    const events = {
      sqlite: await sqliteEventsOf(sqlite, ids.sqlite, "payment.failed"),
      test: await testEventsOf(test, ids.test)
    }
    expect(events.sqlite.map((e) => e.type)).toEqual(["payment.processing", "payment.failed"])
    expect(events.sqlite.at(-1).data.object.failureCode).toBe("transaction_reverted")
    await expectSameEvents({ sqlite, test }, ids, events)
  }, 60_000)

  it("a payment whose collection is sent and reverts when mined (failOnChain): failed, transaction_reverted", async () => {
    const ids = { sqlite: await newPayment(sqlite), test: await newPayment(test) }
    await Promise.all([
      sqlite.payRevertedWhenMined(ids.sqlite),
      test.payRevertedWhenMined(ids.test)
    ])
    const events = {
      sqlite: await sqliteEventsOf(sqlite, ids.sqlite, "payment.failed"),
      test: await testEventsOf(test, ids.test)
    }
    expect(events.sqlite.map((e) => e.type)).toEqual(["payment.processing", "payment.failed"])
    expect(events.sqlite.at(-1).data.object.failureCode).toBe("transaction_reverted")
    await expectSameEvents({ sqlite, test }, ids, events)
  }, 60_000)

  it("a payment left to expire: payment.expired", async () => {
    // Its own expiry, 1.5 s after its creation on each engine's clock.
    const sqliteId = await newPayment(sqlite, {
      expiresAt: new Date(Date.now() + 1500).toISOString()
    })
    const testId = await newPayment(test, {
      expiresAt: new Date(test.engine.now().getTime() + 1500).toISOString()
    })
    // The SQLite engine's own sweep (every 200 ms here) records it: waited for, not slept on.
    const sqliteEvents = await sqliteEventsOf(sqlite, sqliteId, "payment.expired")
    await test.engine.advance(60_000)
    const events = { sqlite: sqliteEvents, test: await testEventsOf(test, testId) }
    expect(events.sqlite.map((e) => e.type)).toEqual(["payment.expired"])
    expect(events.sqlite[0].data.object.status).toBe("expired")
    await expectSameEvents({ sqlite, test }, { sqlite: sqliteId, test: testId }, events)
  }, 60_000)

  it("a payment the buyer declines in the wallet: payment.cancelled, cancelled_by_user", async () => {
    const ids = { sqlite: await newPayment(sqlite), test: await newPayment(test) }
    await Promise.all([sqlite.decline(ids.sqlite), test.decline(ids.test)])
    const events = {
      sqlite: await sqliteEventsOf(sqlite, ids.sqlite, "payment.cancelled"),
      test: await testEventsOf(test, ids.test)
    }
    expect(events.sqlite.map((e) => e.type)).toEqual(["payment.cancelled"])
    expect(events.sqlite[0].data.object.cancelledReason).toBe("cancelled_by_user")
    await expectSameEvents({ sqlite, test }, ids, events)
  }, 60_000)

  it("a payment the merchant cancels: payment.cancelled", async () => {
    const ids = { sqlite: await newPayment(sqlite), test: await newPayment(test) }
    for (const side of ["sqlite", "test"] as const) {
      const cancelled = await { sqlite, test }[side].api(
        "POST",
        `/v1/payments/${ids[side]}/cancel`,
        {
          headers: { "merchant-id": { sqlite, test }[side].merchantId }
        }
      )
      expect(cancelled.status, `${side}: ${cancelled.text}`).toBe(200)
    }
    const events = {
      sqlite: await sqliteEventsOf(sqlite, ids.sqlite, "payment.cancelled"),
      test: await testEventsOf(test, ids.test)
    }
    expect(events.sqlite.map((e) => e.type)).toEqual(["payment.cancelled"])
    await expectSameEvents({ sqlite, test }, ids, events)
  }, 60_000)
})
