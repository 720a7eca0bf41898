/**
 * What the wallet gateway refuses, over HTTP on the real server and its
 * sandbox chain, on SQLite and on PostgreSQL: a signature by another key, a
 * tampered amount or recipient, too small a balance, a stale quote, an
 * expired payment, a confirm of a final payment, two confirms racing (one
 * wins, one transfer on chain; freely, and each side forced to win by a pause
 * point), an authorization the chain refuses (the
 * payment fails), bad credentials, bad path ids, a buyer's cancel and bad
 * options requests. Where money could move, the balances on chain are checked.
 */
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Client,
  client,
  type E2eServer,
  expectError,
  PARTNER_KEY,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  authorizationUsed,
  type Buyer,
  cancelOnChain,
  confirm,
  fund,
  gatewayStatus,
  newBuyer,
  onlyOption,
  options,
  paymentFor,
  receivedBalance,
  settledMerchant,
  signAction,
  signed,
  transfersFrom,
  usdcBalance,
  walletClient
} from "./gateway-support.js"
import { pausePoints } from "./pause-points.js"
import { cancel, sleep, UNKNOWN_PAYMENT } from "./payments-support.js"

/** $10.50 in the sandbox's USDC (6 decimals). */
const PRICE = 10_500_000n
const FUNDS = 100_000_000n

/** Waits until the wall clock is `ms` into a second (0 to 999). */
const atMillisecond = async (ms: number) => {
  const into = Date.now() % 1000
  await sleep((ms - into + 1000) % 1000)
}

describe.each(STORES)("the wallet gateway's refusals on %s", (store) => {
  /** Holds a status write when a test asks, to force the order of a race. */
  const points = pausePoints()
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let appId: string
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store, {}, { wrapStorage: points.wrap })
    partner = client(() => server.baseUrl)
    const app = await walletClient(server)
    wallet = app.api
    appId = app.appId
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  /** A funded buyer, a new $10.50 payment and the buyer's one option for it. */
  const ready = async (funds = FUNDS) => {
    const buyer: Buyer = newBuyer()
    await fund(server, buyer, funds)
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const option = await onlyOption(wallet, paymentId, buyer)
    return { buyer, paymentId, option }
  }

  /** The balances that a transfer would change. */
  const balances = async (buyer: Buyer) => ({
    buyer: await usdcBalance(server, buyer.address),
    received: await receivedBalance(server)
  })

  const expectStatus = async (paymentId: string, status: string) => {
    const now = await gatewayStatus(wallet, paymentId)
    expect(now.status, now.text).toBe(200)
    expect(now.body.status).toBe(status)
  }

  describe("signatures", () => {
    it("a signature by another key: 400 naming results.0.data.0; nothing moves; the buyer's own then pays", async () => {
      const { buyer, paymentId, option } = await ready()
      const before = await balances(buyer)

      const stranger = newBuyer()
      const forged = await signAction(stranger.key, option.actions[0])
      const refused = await confirm(wallet, paymentId, signed(option.id, forged))
      expectError(refused, 400, "params_validation", ["results.0.data.0"])
      expect(refused.body.issues).toHaveLength(1)
      expect(refused.body.issues[0].message).toContain(buyer.address)

      await expectStatus(paymentId, "requires_action")
      expect(await balances(buyer)).toEqual(before)
      expect(await transfersFrom(server, buyer.address)).toHaveLength(0)

      // The refusal spoiled nothing: the buyer's own signature of the same option pays.
      const honest = await signAction(buyer.key, option.actions[0])
      const paid = await confirm(wallet, paymentId, signed(option.id, honest))
      expect(paid.status, paid.text).toBe(200)
      expect(paid.body).toMatchObject({ status: "succeeded", isFinal: true })
      expect(await balances(buyer)).toEqual({
        buyer: before.buyer - PRICE,
        received: before.received + PRICE
      })
    })

    it("a malformed signature: 400 naming results.0.data.0; a wrong number of results: 400 naming results", async () => {
      const { buyer, paymentId, option } = await ready()
      const before = await balances(buyer)
      expectError(
        await confirm(wallet, paymentId, signed(option.id, "0x1234")),
        400,
        "params_validation",
        ["results.0.data.0"]
      )
      const signature = await signAction(buyer.key, option.actions[0])
      const result = { type: "walletRpc", data: [signature] }
      const twice = { optionId: option.id, results: [result, result] }
      expectError(await confirm(wallet, paymentId, twice), 400, "params_validation", ["results"])
      expectError(
        await confirm(wallet, paymentId, { optionId: option.id, results: [] }),
        400,
        "params_validation",
        ["results"]
      )
      await expectStatus(paymentId, "requires_action")
      expect(await balances(buyer)).toEqual(before)
    })

    it("a tampered amount (a lower value signed): 400; nothing moves", async () => {
      const { buyer, paymentId, option } = await ready()
      const before = await balances(buyer)
      const lower = await signAction(buyer.key, option.actions[0], (m) => ({
        ...m,
        value: `0x${(PRICE - 1n).toString(16)}`
      }))
      const refused = await confirm(wallet, paymentId, signed(option.id, lower))
      expectError(refused, 400, "params_validation", ["results.0.data.0"])
      await expectStatus(paymentId, "requires_action")
      expect(await balances(buyer)).toEqual(before)
      expect(await transfersFrom(server, buyer.address)).toHaveLength(0)
    })

    it("a tampered recipient (the buyer's own other address signed as `to`): 400; nothing moves", async () => {
      const { buyer, paymentId, option } = await ready()
      const before = await balances(buyer)
      const other = newBuyer()
      const elsewhere = await signAction(buyer.key, option.actions[0], (m) => ({
        ...m,
        to: other.address
      }))
      const refused = await confirm(wallet, paymentId, signed(option.id, elsewhere))
      expectError(refused, 400, "params_validation", ["results.0.data.0"])
      await expectStatus(paymentId, "requires_action")
      expect(await balances(buyer)).toEqual(before)
      expect(await usdcBalance(server, other.address)).toBe(0n)
      expect(await transfersFrom(server, buyer.address)).toHaveLength(0)
    })
  })

  it("too small a balance: 409 insufficient_balance; the payment still requires action", async () => {
    const { buyer, paymentId, option } = await ready(PRICE - 1n)
    const before = await balances(buyer)
    const signature = await signAction(buyer.key, option.actions[0])
    const refused = await confirm(wallet, paymentId, signed(option.id, signature))
    expectError(refused, 409, "insufficient_balance")
    await expectStatus(paymentId, "requires_action")
    expect(await balances(buyer)).toEqual(before)
    expect(before.buyer).toBe(PRICE - 1n)

    // Topped up, the same signature pays.
    await fund(server, buyer, 1n)
    const paid = await confirm(wallet, paymentId, signed(option.id, signature))
    expect(paid.status, paid.text).toBe(200)
    expect(paid.body.status).toBe("succeeded")
    expect(await usdcBalance(server, buyer.address)).toBe(0n)
  })

  it("an option of another payment: 400 naming optionId", async () => {
    const { buyer, option } = await ready()
    const { paymentId: other } = await paymentFor(partner, merchantId, "1050")
    const signature = await signAction(buyer.key, option.actions[0])
    expectError(
      await confirm(wallet, other, signed(option.id, signature)),
      400,
      "params_validation",
      ["optionId"]
    )
    expectError(
      await wallet.request("POST", `/v1/gateway/payment/${other}/fetch`, {
        body: { optionId: option.id, data: "" }
      }),
      400,
      "params_validation",
      ["optionId"]
    )
    await expectStatus(other, "requires_action")
    expect(await usdcBalance(server, buyer.address)).toBe(FUNDS)
  })

  it("an expired payment: confirm and options 410 payment_expired; nothing moves", async () => {
    const buyer = newBuyer()
    await fund(server, buyer, FUNDS)
    const expiresAt = Math.floor(Date.now() / 1000) + 3
    const created = await paymentFor(partner, merchantId, "1050", { expiresAt })
    expect(created.expiresAt).toBe(expiresAt)
    const paymentId = created.paymentId as string
    const option = await onlyOption(wallet, paymentId, buyer)
    // The quote never outlives the payment.
    expect(option.expiresAt).toBeLessThanOrEqual(expiresAt)
    const signature = await signAction(buyer.key, option.actions[0])
    const before = await balances(buyer)

    await sleep(expiresAt * 1000 - Date.now() + 200)
    expectError(
      await confirm(wallet, paymentId, signed(option.id, signature)),
      410,
      "payment_expired"
    )
    expectError(await options(wallet, paymentId, [buyer.account]), 410, "payment_expired")
    const status = await gatewayStatus(wallet, paymentId)
    expect(status.body).toEqual({ status: "expired", isFinal: true, info: null })
    expect(await balances(buyer)).toEqual(before)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(0)
  }, 15_000)

  it("a payment the merchant cancelled: confirm 409 invalid_state, options too; nothing moves", async () => {
    const { buyer, paymentId, option } = await ready()
    const signature = await signAction(buyer.key, option.actions[0])
    const before = await balances(buyer)
    const cancelled = await cancel(partner, paymentId, merchantId)
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body.status).toBe("cancelled")

    expectError(
      await confirm(wallet, paymentId, signed(option.id, signature)),
      409,
      "invalid_state"
    )
    expectError(await options(wallet, paymentId, [buyer.account]), 409, "invalid_state")
    const status = await gatewayStatus(wallet, paymentId)
    expect(status.body).toEqual({ status: "cancelled", isFinal: true, info: null })
    expect(await balances(buyer)).toEqual(before)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(0)
  })

  describe("two confirms racing", () => {
    it("the same signature twice at once: one 200, one 409 invalid_state, one transfer", async () => {
      const { buyer, paymentId, option } = await ready()
      const before = await balances(buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      const answers = await Promise.all([
        confirm(wallet, paymentId, signed(option.id, signature)),
        confirm(wallet, paymentId, signed(option.id, signature))
      ])
      const won = answers.filter((a) => a.status === 200)
      const lost = answers.filter((a) => a.status !== 200)
      expect(won, answers.map((a) => a.text).join("\n")).toHaveLength(1)
      expect(lost).toHaveLength(1)
      expectError(lost[0]!, 409, "invalid_state")
      expect(won[0]!.body.status).toBe("succeeded")

      expect(await transfersFrom(server, buyer.address)).toHaveLength(1)
      expect(await balances(buyer)).toEqual({
        buyer: before.buyer - PRICE,
        received: before.received + PRICE
      })
      await expectStatus(paymentId, "succeeded")
    })

    it("two options of one payment, each signed, confirmed at once: one wins, one transfer", async () => {
      const { buyer, paymentId, option: first } = await ready()
      const second = await onlyOption(wallet, paymentId, buyer)
      expect(second.id).not.toBe(first.id)
      const before = await balances(buyer)
      const [a, b] = await Promise.all([
        signAction(buyer.key, first.actions[0]),
        signAction(buyer.key, second.actions[0])
      ])
      const answers = await Promise.all([
        confirm(wallet, paymentId, signed(first.id, a)),
        confirm(wallet, paymentId, signed(second.id, b))
      ])
      const won = answers.filter((r) => r.status === 200)
      const lost = answers.filter((r) => r.status !== 200)
      expect(won, answers.map((r) => r.text).join("\n")).toHaveLength(1)
      expect(lost).toHaveLength(1)
      expectError(lost[0]!, 409, "invalid_state")
      expect(won[0]!.body.status).toBe("succeeded")

      expect(await transfersFrom(server, buyer.address)).toHaveLength(1)
      expect(await balances(buyer)).toEqual({
        buyer: before.buyer - PRICE,
        received: before.received + PRICE
      })
      await expectStatus(paymentId, "succeeded")
      // The winner's authorization was used on chain; the loser's never was.
      const winner = answers[0]!.status === 200 ? first : second
      const loser = winner === first ? second : first
      expect(await authorizationUsed(server, buyer, winner)).toBe(true)
      expect(await authorizationUsed(server, buyer, loser)).toBe(false)
    })

    it.each(["first", "second"] as const)(
      "two options of one payment, each signed, the %s one's confirm forced to win: the other 409 invalid_state, one transfer",
      async (wins) => {
        const { buyer, paymentId, option: first } = await ready()
        const second = await onlyOption(wallet, paymentId, buyer)
        const [winner, loser] = wins === "first" ? [first, second] : [second, first]
        const [winnerSignature, loserSignature] = await Promise.all([
          signAction(buyer.key, winner.actions[0]),
          signAction(buyer.key, loser.actions[0])
        ])
        const before = await balances(buyer)
        // The loser's confirm has checked its signature and decided `processing`; its write waits.
        const loserWrite = points.holdTransition(
          (c) =>
            c.id === paymentId &&
            c.change.enqueue?.payload.kind === "collect" &&
            c.change.enqueue.payload.optionId === loser.id
        )
        const losing = confirm(wallet, paymentId, signed(loser.id, loserSignature))
        await loserWrite.reached
        const won = await confirm(wallet, paymentId, signed(winner.id, winnerSignature))
        expect(won.status, won.text).toBe(200)
        expect(won.body.status).toBe("succeeded")
        loserWrite.release()
        // The held write found the payment no longer `requires_action`: nothing written.
        expect(await loserWrite.answered).toMatchObject({ _tag: "None" })
        expectError(await losing, 409, "invalid_state")

        expect(await transfersFrom(server, buyer.address)).toHaveLength(1)
        expect(await balances(buyer)).toEqual({
          buyer: before.buyer - PRICE,
          received: before.received + PRICE
        })
        await expectStatus(paymentId, "succeeded")
        expect(await authorizationUsed(server, buyer, winner)).toBe(true)
        expect(await authorizationUsed(server, buyer, loser)).toBe(false)
      }
    )
  })

  it("an authorization the chain refuses (cancelled on chain first): the payment fails, transaction_reverted; nothing moves", async () => {
    const { buyer, paymentId, option } = await ready()
    const signature = await signAction(buyer.key, option.actions[0])
    await cancelOnChain(server, buyer, option)
    const before = await balances(buyer)

    // Every check the engine makes before submitting passes: the signature is the buyer's.
    const confirmed = await confirm(wallet, paymentId, signed(option.id, signature), "")
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(["processing", "failed"]).toContain(confirmed.body.status)

    const settled = await gatewayStatus(wallet, paymentId, 10_000)
    expect(settled.status, settled.text).toBe(200)
    expect(settled.body).toEqual({
      status: "failed",
      isFinal: true,
      failureCode: "transaction_reverted",
      info: null
    })
    expect(await balances(buyer)).toEqual(before)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(0)

    // Final: another confirm is refused, and the partner sees the failure.
    expectError(
      await confirm(wallet, paymentId, signed(option.id, signature)),
      409,
      "invalid_state"
    )
    const details = await partner.get(`/v1/payments/${paymentId}`)
    expect(details.body).toMatchObject({ status: "failed", failureCode: "transaction_reverted" })
  })

  describe("credentials", () => {
    it("none: 401 missing_auth_headers; a partner's key: 401 invalid_api_key", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const path = `/v1/gateway/payment/${paymentId}`
      expectError(await wallet.get(path, { key: null }), 401, "missing_auth_headers")
      expectError(await wallet.get(path, { key: PARTNER_KEY }), 401, "invalid_api_key")
      expectError(
        await wallet.request("POST", `${path}/options`, {
          key: null,
          body: { accounts: [newBuyer().account] }
        }),
        401,
        "missing_auth_headers"
      )
      expectError(
        await wallet.request("POST", `${path}/confirm`, {
          key: PARTNER_KEY,
          body: signed("opt_x", "0x00")
        }),
        401,
        "invalid_api_key"
      )
    })

    it("App-Id alone identifies the app; an unknown App-Id: 401 invalid_app_id", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const path = `/v1/gateway/payment/${paymentId}`
      const byId = await wallet.get(path, { key: null, headers: { "app-id": appId } })
      expect(byId.status, byId.text).toBe(200)
      expect(byId.body.status).toBe("requires_action")
      const unknown = `app_${"0".repeat(10)}${"Z".repeat(10)}`
      expect(unknown.length).toBe(appId.length)
      expectError(
        await wallet.get(path, { key: null, headers: { "app-id": unknown } }),
        401,
        "invalid_app_id"
      )
      expectError(
        await wallet.get(path, { key: null, headers: { "app-id": "not-an-app" } }),
        401,
        "invalid_app_id"
      )
    })
  })

  describe("path ids", () => {
    it("an unknown id or garbage: 404 payment_not_found on every route", async () => {
      const buyer = newBuyer()
      for (const id of [UNKNOWN_PAYMENT, "garbage", encodeURIComponent("https://shop.example/x")]) {
        expectError(await wallet.get(`/v1/gateway/payment/${id}`), 404, "payment_not_found")
        expectError(await options(wallet, id, [buyer.account]), 404, "payment_not_found")
        expectError(
          await confirm(wallet, id, signed("opt_x", `0x${"11".repeat(65)}`)),
          404,
          "payment_not_found"
        )
        expectError(await gatewayStatus(wallet, id), 404, "payment_not_found")
        expectError(
          await wallet.request("POST", `/v1/gateway/payment/${id}/cancel`),
          404,
          "payment_not_found"
        )
      }
    })

    it("a buyer link with ?pid=…, percent-encoded twice, names the payment", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const link = `http://host:8080/?pid=${paymentId}`
      const twice = encodeURIComponent(encodeURIComponent(link))
      expect(twice).toBe(`http%253A%252F%252Fhost%253A8080%252F%253Fpid%253D${paymentId}`)
      const info = await wallet.get(`/v1/gateway/payment/${twice}`)
      expect(info.status, info.text).toBe(200)
      expect(info.body.status).toBe("requires_action")
      const offered = await options(wallet, twice, [newBuyer().account])
      expect(offered.status, offered.text).toBe(200)
      expect(offered.body.options).toHaveLength(1)
      const status = await gatewayStatus(wallet, twice)
      expect(status.body).toMatchObject({ status: "requires_action", isFinal: false })
      // A link whose pid is not a payment id names nothing.
      const bad = encodeURIComponent(encodeURIComponent("http://host:8080/?pid=nope"))
      expectError(await wallet.get(`/v1/gateway/payment/${bad}`), 404, "payment_not_found")
    })
  })

  it("the buyer cancels: 200 cancelled_by_user; then options 409 invalid_state and a second cancel 400 invalid_state", async () => {
    const { buyer, paymentId, option } = await ready()
    const signature = await signAction(buyer.key, option.actions[0])
    const cancelled = await wallet.request("POST", `/v1/gateway/payment/${paymentId}/cancel`)
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body).toEqual({
      paymentId,
      status: "cancelled",
      cancelledReason: "cancelled_by_user",
      cancelledAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      livemode: false
    })
    expectError(await options(wallet, paymentId, [buyer.account]), 409, "invalid_state")
    expectError(
      await confirm(wallet, paymentId, signed(option.id, signature)),
      409,
      "invalid_state"
    )
    expectError(
      await wallet.request("POST", `/v1/gateway/payment/${paymentId}/cancel`),
      400,
      "invalid_state"
    )
    const details = await partner.get(`/v1/payments/${paymentId}`)
    expect(details.body).toMatchObject({
      status: "cancelled",
      cancelledReason: "cancelled_by_user"
    })
    expect(await usdcBalance(server, buyer.address)).toBe(FUNDS)
  })

  describe("options requests", () => {
    it("no accounts: 400 naming accounts", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      expectError(await options(wallet, paymentId, []), 400, "params_validation", ["accounts"])
      expectError(
        await wallet.request("POST", `/v1/gateway/payment/${paymentId}/options`, { body: {} }),
        400,
        "params_validation",
        ["accounts"]
      )
    })

    it("a malformed CAIP-10 account: 400 naming accounts.N, each one", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const good = newBuyer().account
      const refused = await options(wallet, paymentId, [good, "0x1234", good, "eip155:31337:nope"])
      expectError(refused, 400, "params_validation", ["accounts.1", "accounts.3"])
      expect(refused.body.issues.map((i: { field: string }) => i.field)).toEqual([
        "accounts.1",
        "accounts.3"
      ])
      // Nothing was offered: the payment still has no buyer.
      const info = await wallet.get(`/v1/gateway/payment/${paymentId}`)
      expect(info.body).toMatchObject({ status: "requires_action", buyer: null })
    })

    it("more accounts than allowed: 400 naming accounts", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const many = Array.from({ length: 21 }, () => newBuyer().account)
      expectError(await options(wallet, paymentId, many), 400, "params_validation", ["accounts"])
    })

    it("past 200 options with a locked price on one payment: 409 invalid_state, nothing stored; earlier options still fetch", async () => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const accounts = Array.from({ length: 20 }, () => newBuyer().account)
      const first = await options(wallet, paymentId, accounts)
      expect(first.status).toBe(200)
      const perRequest = first.body.options.length as number
      expect(perRequest).toBeGreaterThan(0)
      // The default lock is 120 s: every option asked for here keeps its price throughout.
      for (let held = perRequest; held + perRequest <= 200; held += perRequest) {
        expect((await options(wallet, paymentId, accounts)).status).toBe(200)
      }
      const refused = await options(wallet, paymentId, accounts)
      expectError(refused, 409, "invalid_state")
      expect(refused.body.message).toMatch(/200 options/)
      // The first answer's options are still there to be fetched (and so confirmed).
      const fetched = await wallet.request("POST", `/v1/gateway/payment/${paymentId}/fetch`, {
        body: { optionId: first.body.options[0].id }
      })
      expect(fetched.status, fetched.text).toBe(200)
    })
  })
})

describe.each(STORES)("a stale quote on %s", (store) => {
  const LOCK_MS = 1500
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store, { quoteLockMs: Option.some(LOCK_MS) })
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  it("past the option's expiresAt: 409 quote_expired, nothing moves; fresh options then pay", async () => {
    const buyer = newBuyer()
    await fund(server, buyer, FUNDS)
    const { paymentId } = await paymentFor(partner, merchantId, "1050")

    // Asked for early in a second, so the lock ends well inside a later one: the shown
    // expiresAt (whole seconds) and the engine's own clock are then far apart.
    await atMillisecond(100)
    const asked = Date.now()
    const stale = await onlyOption(wallet, paymentId, buyer)
    expect(stale.expiresAt).toBeGreaterThan(asked / 1000)
    expect(stale.expiresAt).toBeLessThanOrEqual((asked + LOCK_MS) / 1000)
    const validBefore = Number(JSON.parse(stale.actions[0].data.params[1]).message.validBefore)
    expect(validBefore).toBe(stale.expiresAt)
    const signature = await signAction(buyer.key, stale.actions[0])
    const before = {
      buyer: await usdcBalance(server, buyer.address),
      received: await receivedBalance(server)
    }

    // Just past the expiry the wallet was shown (and the authorization carries).
    await sleep(stale.expiresAt * 1000 - Date.now() + 100)
    const refused = await confirm(wallet, paymentId, signed(stale.id, signature))
    expectError(refused, 409, "quote_expired")
    const status = await gatewayStatus(wallet, paymentId)
    expect(status.body).toMatchObject({ status: "requires_action", isFinal: false })
    expect(await usdcBalance(server, buyer.address)).toBe(before.buyer)
    expect(await receivedBalance(server)).toBe(before.received)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(0)

    // Fresh options (asked late in a second, so the lock spans more than a second) pay.
    await atMillisecond(600)
    const fresh = await onlyOption(wallet, paymentId, buyer)
    expect(fresh.id).not.toBe(stale.id)
    expect(fresh.expiresAt).toBeGreaterThan(Date.now() / 1000)
    const paid = await confirm(
      wallet,
      paymentId,
      signed(fresh.id, await signAction(buyer.key, fresh.actions[0]))
    )
    expect(paid.status, paid.text).toBe(200)
    expect(paid.body).toMatchObject({ status: "succeeded", isFinal: true })
    expect(await usdcBalance(server, buyer.address)).toBe(before.buyer - PRICE)
    expect(await receivedBalance(server)).toBe(before.received + PRICE)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(1)
  }, 20_000)
})
