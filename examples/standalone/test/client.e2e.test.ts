/**
 * End to end over loopback against the real standalone server: @pay/client,
 * the typed client derived from the HttpApi definition. Every method of the
 * Promise facade, its typed results and rejections (PayApiError by code),
 * idempotent replays and a long-poll woken by a cancel from another call;
 * then the Effect form.
 */
import { FetchHttpClient } from "@effect/platform"
import { createPayClient, makePayClient, PayApiError, type PayPromiseClient } from "@pay/client"
import { type MerchantId, PaymentEvents } from "@pay/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import {
  createPartner,
  type E2eServer,
  eventually,
  MERCHANT_ID,
  PARTNER_KEY,
  RFC3339,
  SETTLEMENT_ID,
  STORES,
  startServer,
  uniqueToken,
  unknownId
} from "./e2e-support.js"
import {
  PAYMENT_ID,
  REFUND_ID,
  startProcessing,
  succeed,
  UNKNOWN_PAYMENT,
  USDC_BASE
} from "./payments-support.js"

const WALLET_BASE = "eip155:8453:0x1234567890abcdef1234567890abcdef12345678"
const WALLET_BASE_CHECKSUM = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"
const WALLET2_BASE = "eip155:8453:0xabcdefabcdefabcdefabcdefabcdefabcdefabcd"
const WALLET2_BASE_CHECKSUM = "eip155:8453:0xABcdEFABcdEFabcdEfAbCdefabcdeFABcDEFabCD"

const usd = (value: string) => ({ unit: "iso4217/USD", value })

/** The rejection of `promise`, which must reject. */
const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let pay: PayPromiseClient

  beforeAll(async () => {
    server = await startServer(store)
    pay = createPayClient({ baseUrl: server.baseUrl, apiKey: PARTNER_KEY, retryDelayMs: 20 })
  })

  afterAll(async () => {
    await server?.stop()
  })

  const newMerchant = async (name = `Client Shop ${uniqueToken()}`) =>
    (await pay.merchants.create({ merchantName: name, merchantEmail: "billing@shop.example" }))
      .merchant

  describe("merchants", () => {
    it("create answers the decoded merchant; a replay with its key answers the same merchant", async () => {
      const name = `Replay ${uniqueToken()}`
      const body = { merchantName: name, merchantEmail: "billing@shop.example" }
      const first = await pay.merchants.create(body, { idempotencyKey: `client-${name}` })
      expectTypeOf(first.merchant.status).toEqualTypeOf<"active" | "inactive" | "suspended">()
      expectTypeOf(first.merchant.email).toEqualTypeOf<string | null>()
      expect(first.merchant).toMatchObject({
        name,
        email: "billing@shop.example",
        status: "active",
        iconUrl: null
      })
      expect(first.merchant.id).toMatch(MERCHANT_ID)
      expect(first.merchant.createdAt).toMatch(RFC3339)

      const replay = await pay.merchants.create(body, { idempotencyKey: `client-${name}` })
      expect(replay.merchant.id).toBe(first.merchant.id)
      const listed = await pay.merchants.list({ search: name })
      expect(listed.merchants.map((m) => m.id)).toEqual([first.merchant.id])
    })

    it("the same key with another body: 409 idempotency_conflict", async () => {
      const key = `client-${uniqueToken()}`
      await pay.merchants.create(
        { merchantName: "First", merchantEmail: "a@shop.example" },
        { idempotencyKey: key }
      )
      const error = await rejection(
        pay.merchants.create(
          { merchantName: "Second", merchantEmail: "a@shop.example" },
          { idempotencyKey: key }
        )
      )
      expect(error).toBeInstanceOf(PayApiError)
      expect(error).toMatchObject({
        status: 409,
        code: "idempotency_conflict",
        source: "server",
        idempotencyKey: key
      })
    })

    it("list: typed pages with totalCount and nextCursor; a foreign cursor is 400 invalid_params", async () => {
      const token = uniqueToken()
      const made = [await newMerchant(`Listed ${token} A`), await newMerchant(`Listed ${token} B`)]
      const page = await pay.merchants.list({ search: token, limit: 1 })
      expectTypeOf(page.totalCount).toEqualTypeOf<number>()
      expect(page.totalCount).toBe(2)
      expect(page.merchants).toHaveLength(1)
      expect(page.nextCursor).not.toBeNull()
      const next = await pay.merchants.list({ search: token, limit: 1, cursor: page.nextCursor! })
      expect([...page.merchants, ...next.merchants].map((m) => m.id).sort()).toEqual(
        made.map((m) => m.id).sort()
      )
      expect(next.nextCursor).toBeNull()

      const error = await rejection(pay.merchants.list({ cursor: "not-a-cursor" }))
      expect(error).toMatchObject({ status: 400, code: "invalid_params", source: "server" })
      expect((error as PayApiError).issues.map((i) => i.field)).toEqual(["cursor"])
    })

    it("get, update, delete; then 404 not_found", async () => {
      const merchant = await newMerchant()
      const profile = await pay.merchants.get(merchant.id)
      expect(profile.merchant).toMatchObject({
        id: merchant.id,
        settlements: { crypto: [], fiat: [] }
      })

      const updated = await pay.merchants.update(merchant.id, {
        merchantName: "Renamed",
        merchantEmail: "new@shop.example"
      })
      expect(updated.merchant).toMatchObject({
        id: merchant.id,
        name: "Renamed",
        email: "new@shop.example"
      })

      expect(await pay.merchants.delete(merchant.id)).toEqual({ id: merchant.id, deleted: true })
      expect(await pay.merchants.delete(merchant.id)).toEqual({ id: merchant.id, deleted: true })
      const error = await rejection(pay.merchants.get(merchant.id))
      expect(error).toBeInstanceOf(PayApiError)
      expect(error).toMatchObject({ status: 404, code: "not_found", operation: "merchants.get" })
      expect(pay.merchants.get.isError(error)).toBe(true)
      if (pay.merchants.get.isError(error)) {
        expectTypeOf(error.code).toExtend<string>()
      }
    })

    it("an unknown id: 404; another partner's merchant: 403 forbidden", async () => {
      expect(await rejection(pay.merchants.get(unknownId("mrch")))).toMatchObject({
        status: 404,
        code: "not_found"
      })
      const other = createPayClient({
        baseUrl: server.baseUrl,
        apiKey: (await createPartner(server, `Other ${uniqueToken()}`)).apiKey
      })
      const theirs = (
        await other.merchants.create({ merchantName: "Theirs", merchantEmail: "t@shop.example" })
      ).merchant
      expect(
        await rejection(pay.merchants.update(theirs.id, { merchantName: "Mine" }))
      ).toMatchObject({ status: 403, code: "forbidden" })
    })

    it("a wrong key: 401 invalid_api_key", async () => {
      const stranger = createPayClient({ baseUrl: server.baseUrl, apiKey: "wrong_key_0123456789" })
      expect(await rejection(stranger.merchants.list())).toMatchObject({
        status: 401,
        code: "invalid_api_key"
      })
    })

    it("input the definition refuses never reaches the server", async () => {
      const error = await rejection(
        pay.merchants.create({ merchantName: "", merchantEmail: "not-an-email" })
      )
      expect(error).toMatchObject({ status: 400, code: "params_validation", source: "client" })
      expect((error as PayApiError).issues.map((i) => i.field).sort()).toEqual([
        "merchantEmail",
        "merchantName"
      ])
    })
  })

  describe("settlements", () => {
    it("create (checksummed, replayable), list, update, delete; a second one for the asset is 409", async () => {
      const merchant = await newMerchant()
      const key = `client-${uniqueToken()}`
      const created = await pay.settlements.create(
        merchant.id,
        [{ asset: USDC_BASE.toLowerCase(), destination: WALLET_BASE }],
        { idempotencyKey: key }
      )
      expect(created.settlements).toHaveLength(1)
      const settlement = created.settlements[0]!
      expect(settlement.id).toMatch(SETTLEMENT_ID)
      expect(settlement).toMatchObject({
        configId: settlement.id,
        asset: USDC_BASE,
        destination: WALLET_BASE_CHECKSUM
      })
      const replay = await pay.settlements.create(
        merchant.id,
        [{ asset: USDC_BASE.toLowerCase(), destination: WALLET_BASE }],
        { idempotencyKey: key }
      )
      expect(replay.settlements.map((s) => s.id)).toEqual([settlement.id])

      expect(
        await rejection(
          pay.settlements.create(merchant.id, [{ asset: USDC_BASE, destination: WALLET2_BASE }])
        )
      ).toMatchObject({ status: 409, code: "settlement_asset_conflict" })

      const listed = await pay.settlements.list(merchant.id)
      expect(listed).toEqual({ crypto: [settlement], fiat: [] })

      const updated = await pay.settlements.update(merchant.id, settlement.id, WALLET2_BASE)
      expect(updated.settlement).toMatchObject({
        id: settlement.id,
        destination: WALLET2_BASE_CHECKSUM
      })

      expect(await pay.settlements.delete(merchant.id, settlement.id)).toEqual({
        id: settlement.id,
        deleted: true
      })
      expect(
        await rejection(pay.settlements.update(merchant.id, settlement.id, WALLET_BASE))
      ).toMatchObject({ status: 404, code: "not_found" })
      expect((await pay.settlements.list(merchant.id)).crypto).toEqual([])
    })

    it("an unknown merchant: 404", async () => {
      expect(await rejection(pay.settlements.list(unknownId("mrch")))).toMatchObject({
        status: 404
      })
    })
  })

  describe("payments and refunds", () => {
    it("create (replayable with its key), get, status, list, listForMerchant", async () => {
      const merchant = await newMerchant()
      const key = `client-${uniqueToken()}`
      const body = { referenceId: "order-client-1", amount: usd("1050") }
      const created = await pay.payments.create(merchant.id, body, { idempotencyKey: key })
      expect(created.paymentId).toMatch(PAYMENT_ID)
      expect(created).toMatchObject({ status: "requires_action", isFinal: false })
      expect(created.gatewayUrl).toContain(created.paymentId)
      expectTypeOf(created.expiresAt).toEqualTypeOf<number>()
      const replay = await pay.payments.create(merchant.id, body, { idempotencyKey: key })
      expect(replay.paymentId).toBe(created.paymentId)

      const details = await pay.payments.get(created.paymentId)
      expect(details).toMatchObject({
        paymentId: created.paymentId,
        referenceId: "order-client-1",
        merchant: { id: merchant.id },
        amount: { unit: "iso4217/USD", value: "1050" },
        status: "requires_action",
        refund: null
      })

      const status = await pay.payments.status(created.paymentId, { merchantId: merchant.id })
      expect(status).toMatchObject({ status: "requires_action", isFinal: false, info: null })

      const second = await pay.payments.create(merchant.id, {
        referenceId: "order-client-2",
        amount: usd("99")
      })
      const listed = await pay.payments.list({ merchantId: merchant.id, limit: 10 })
      expect(listed.data.map((p) => p.paymentId)).toEqual([second.paymentId, created.paymentId])
      expectTypeOf(listed.stats.totalTransactions).toEqualTypeOf<number>()
      const filtered = await pay.payments.list({
        merchantId: merchant.id,
        referenceId: "client-2",
        sortBy: "amount",
        sortDir: "asc"
      })
      expect(filtered.data.map((p) => p.paymentId)).toEqual([second.paymentId])

      const forMerchant = await pay.payments.listForMerchant(merchant.id, { limit: 1 })
      expect(forMerchant.data.map((p) => p.paymentId)).toEqual([second.paymentId])
      expect(forMerchant.nextCursor).not.toBeNull()
    })

    it("a long-poll answers when another call cancels the payment; a second cancel is 400 invalid_state", async () => {
      const merchant = await newMerchant()
      const { paymentId } = await pay.payments.create(merchant.id, {
        referenceId: "order-poll",
        amount: usd("500")
      })
      const heldPolls = () =>
        server.runEngine(Effect.flatMap(PaymentEvents, (events) => events.held))
      const before = await heldPolls()
      const start = performance.now()
      const poll = pay.payments.status(paymentId, { merchantId: merchant.id, maxPollMs: 10_000 })
      // The server holds the poll (its held long-polls counter), not a fixed wait: the cancel
      // can then only reach it by waking it, never as a plain status read made after it.
      await eventually(async () => expect(await heldPolls(), "long-polls held").toBe(before + 1), {
        timeoutMs: 4_000,
        intervalMs: 20
      })
      const heldAt = performance.now() - start
      const cancelled = await pay.payments.cancel(paymentId, { merchantId: merchant.id })
      expect(cancelled).toMatchObject({
        paymentId,
        status: "cancelled",
        cancelledReason: "cancelled_by_merchant"
      })
      const status = await poll
      const elapsed = performance.now() - start
      expect(status).toMatchObject({ status: "cancelled", isFinal: true })
      expect(elapsed).toBeGreaterThanOrEqual(heldAt)
      // Answered by the cancel, well before the poll's own 10 s (heldAt is at most 4 s).
      expect(elapsed).toBeLessThan(heldAt + 5_000)

      const again = await rejection(pay.payments.cancel(paymentId, { merchantId: merchant.id }))
      expect(again).toMatchObject({ status: 400, code: "invalid_state", source: "server" })
      expect(pay.payments.cancel.isError(again)).toBe(true)
    })

    it("an unknown payment: 404 payment_not_found", async () => {
      expect(await rejection(pay.payments.get(UNKNOWN_PAYMENT))).toMatchObject({
        status: 404,
        code: "payment_not_found"
      })
    })

    it("refunds: 409 invalid_state before success; then created once, replayable, 409 refund_exists", async () => {
      const merchant = await newMerchant()
      const { paymentId } = await pay.payments.create(merchant.id, {
        referenceId: "order-refund",
        amount: usd("1050")
      })
      expect(await rejection(pay.refunds.create(paymentId))).toMatchObject({
        status: 409,
        code: "invalid_state"
      })

      await startProcessing(server, paymentId)
      await succeed(server, paymentId)
      const key = `client-${uniqueToken()}`
      const { refund } = await pay.refunds.create(paymentId, { idempotencyKey: key })
      expect(refund.refundId).toMatch(REFUND_ID)
      expect(refund).toMatchObject({
        paymentId,
        status: "requested",
        amount: { unit: "iso4217/USD", value: "1050" }
      })
      const replay = await pay.refunds.create(paymentId, { idempotencyKey: key })
      expect(replay.refund.refundId).toBe(refund.refundId)
      const error = await rejection(pay.refunds.create(paymentId))
      expect(error).toMatchObject({ status: 409, code: "refund_exists" })
      expect((error as PayApiError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
      expect((await pay.payments.get(paymentId)).refund?.refundId).toBe(refund.refundId)
    })
  })

  describe("API keys", () => {
    it("create (secret once, replayable), list, rotate, revoke; the last active key is 409", async () => {
      const { apiKey } = await createPartner(server, `Keys ${uniqueToken()}`)
      const own = createPayClient({ baseUrl: server.baseUrl, apiKey, retryDelayMs: 20 })
      const created = await own.apiKeys.create({ name: "typed" }, { idempotencyKey: "k-1" })
      expect(created.secret).toMatch(/^pk_/)
      expect(await own.apiKeys.create({ name: "typed" }, { idempotencyKey: "k-1" })).toEqual(
        created
      )
      const listed = await own.apiKeys.list()
      expect(listed.data.map((k) => k.id)).toContain(created.id)
      expect(JSON.stringify(listed)).not.toContain(created.secret)
      const rotated = await own.apiKeys.rotate(created.id, { overlapSeconds: 0 })
      expect(rotated.previousKey.id).toBe(created.id)
      const withNew = createPayClient({ baseUrl: server.baseUrl, apiKey: rotated.secret })
      const first = listed.data.find((k) => k.id !== created.id)!
      expect((await withNew.apiKeys.revoke(first.id)).revokedAt).not.toBeNull()
      const error = await rejection(withNew.apiKeys.revoke(rotated.id))
      expect(error).toMatchObject({ status: 409, code: "last_active_api_key" })
      expect(withNew.apiKeys.revoke.isError(error)).toBe(true)
    })
  })

  describe("the Effect form", () => {
    it("HttpApiClient with the key: typed payloads and branded ids; declared errors as failures", async () => {
      const program = Effect.gen(function* () {
        const client = yield* makePayClient({ baseUrl: server.baseUrl, apiKey: PARTNER_KEY })
        const { merchant } = yield* client.merchants.create({
          payload: { merchantName: "Effect Shop", merchantEmail: "fx@shop.example" },
          headers: { "idempotency-key": `client-${uniqueToken()}` }
        })
        // Every endpoint declares the optional version headers, so `headers` is always given.
        const profile = yield* client.merchants.get({
          path: { merchantId: merchant.id as MerchantId },
          headers: {}
        })
        const missing = yield* Effect.flip(
          client.merchants.get({
            path: { merchantId: unknownId("mrch") as MerchantId },
            headers: { "pay-version": "2026-02-18" }
          })
        )
        return { merchant, profile, missing }
      }).pipe(Effect.provide(FetchHttpClient.layer))
      const { merchant, profile, missing } = await Effect.runPromise(program)
      expect(merchant.id).toMatch(MERCHANT_ID)
      expect(profile.merchant).toMatchObject({ id: merchant.id, name: "Effect Shop" })
      expect(missing).toMatchObject({ code: "not_found" })
    })
  })
})
