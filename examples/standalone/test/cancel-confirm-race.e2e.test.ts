/**
 * A merchant's cancel racing a wallet's confirm, run both ways on purpose
 * (issue 20), over HTTP on the real server and its sandbox chain, on SQLite
 * and on PostgreSQL. A pause point (test/pause-points.ts) holds one side's
 * status write after it has read the payment (`requires_action`) and decided
 * its change, until the other side has won; then the held write is let go
 * and finds the payment changed (the store's compare-and-set), so:
 * - cancel first: the cancel answers 200 `cancelled`, the confirm 409
 *   `invalid_state`; the payment stays cancelled with one `payment.cancelled`
 *   event, and nothing moves on chain;
 * - confirm first: the confirm answers 200, the cancel 400 `invalid_state`;
 *   the payment succeeds and settles with the wallet's events only, and
 *   exactly one collection and one settlement move the funds.
 */
import type { Hex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Client,
  client,
  type E2eServer,
  eventually,
  expectError,
  type Json,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  type Buyer,
  confirm,
  fund,
  gatewayStatus,
  MERCHANT_DESTINATION,
  newBuyer,
  onlyOption,
  paymentFor,
  settledMerchant,
  signAction,
  signed,
  usdcBalance,
  walletClient
} from "./gateway-support.js"
import { type PausePoints, pausePoints } from "./pause-points.js"
import { cancel } from "./payments-support.js"

/** $10.50 in the sandbox's USDC (6 decimals); the sandbox takes no fees. */
const PRICE = 10_500_000n

describe.each(STORES)("a cancel racing a confirm on %s, each order forced", (store) => {
  let server: E2eServer
  let points: PausePoints
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    points = pausePoints()
    server = await startServer(store, {}, { wrapStorage: points.wrap })
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  /** A funded buyer, a $10.50 payment, its one option and the buyer's signature of it. */
  const ready = async () => {
    const buyer: Buyer = newBuyer()
    await fund(server, buyer, 100_000_000n)
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const option = await onlyOption(wallet, paymentId, buyer)
    const signature = await signAction(buyer.key, option.actions[0])
    return { buyer, paymentId, option, signature }
  }

  const collector = () => server.sandbox.collector.address as Hex

  /** The buyer's, the collector's and the merchant's destination's balances, and the next block. */
  const ledger = async (buyer: Buyer) => ({
    buyer: await usdcBalance(server, buyer.address),
    collector: await usdcBalance(server, collector()),
    destination: await usdcBalance(server, MERCHANT_DESTINATION),
    block: (await server.sandbox.publicClient.getBlockNumber()) + 1n
  })

  /** The amounts of the token transfers from `from` to `to` since `fromBlock`. */
  const transfers = async (from: Hex, to: Hex, fromBlock: bigint) =>
    (
      await server.sandbox.publicClient.getContractEvents({
        address: server.sandbox.token.address,
        abi: server.sandbox.token.abi,
        eventName: "Transfer",
        args: { from, to },
        fromBlock
      })
    ).map((log) => (log.args as { value: bigint }).value)

  /** The types of the payment's events, oldest first. */
  const eventTypes = async (paymentId: string): Promise<Array<string>> => {
    const listed = await partner.get(`/v1/events?paymentId=${paymentId}&limit=100`)
    expect(listed.status, listed.text).toBe(200)
    return (listed.body.data as Array<Json>).map((e) => e.type).reverse()
  }

  const isPayment = (paymentId: string, status: string) => (c: { id: string; change: Json }) =>
    c.id === paymentId && c.change.status === status

  it("cancel first: the cancel wins, the confirm gets 409 invalid_state, nothing moves", async () => {
    const { buyer, paymentId, option, signature } = await ready()
    const before = await ledger(buyer)
    // The confirm has checked everything and decided `processing`; its write waits.
    const confirmWrite = points.holdTransition(isPayment(paymentId, "processing"))
    const confirming = confirm(wallet, paymentId, signed(option.id, signature))
    await confirmWrite.reached

    const cancelled = await cancel(partner, paymentId, merchantId)
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body.status).toBe("cancelled")

    confirmWrite.release()
    // The held write finds the payment no longer `requires_action`: nothing written.
    expect(await confirmWrite.answered).toMatchObject({ _tag: "None" })
    expectError(await confirming, 409, "invalid_state")

    const status = await gatewayStatus(wallet, paymentId)
    expect(status.body).toEqual({ status: "cancelled", isFinal: true, info: null })
    const view = await partner.get(`/v1/payments/${paymentId}`)
    expect(view.body).toMatchObject({
      status: "cancelled",
      cancelledReason: "cancelled_by_merchant"
    })
    expect(await eventTypes(paymentId)).toEqual(["payment.cancelled"])
    // Nothing moved: no transfer, every balance as it was.
    expect(await transfers(buyer.address, collector(), before.block)).toEqual([])
    expect(await ledger(buyer)).toEqual({
      ...before,
      block: (await server.sandbox.publicClient.getBlockNumber()) + 1n
    })
  }, 60_000)

  it("confirm first: the confirm wins, the cancel gets 400 invalid_state, paid and settled once", async () => {
    const { buyer, paymentId, option, signature } = await ready()
    const before = await ledger(buyer)
    // The cancel has read the payment, still `requires_action`, and decided; its write waits.
    const cancelWrite = points.holdTransition(isPayment(paymentId, "cancelled"))
    const cancelling = cancel(partner, paymentId, merchantId)
    await cancelWrite.reached

    const confirmed = await confirm(wallet, paymentId, signed(option.id, signature))
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(["processing", "succeeded"]).toContain(confirmed.body.status)

    cancelWrite.release()
    expect(await cancelWrite.answered).toMatchObject({ _tag: "None" })
    expectError(await cancelling, 400, "invalid_state")

    const settled = await eventually(
      async () => {
        const view = await partner.get(`/v1/payments/${paymentId}`)
        expect(view.body).toMatchObject({ status: "succeeded", settlement: { status: "settled" } })
        return view.body
      },
      { timeoutMs: 30_000 }
    )
    expect(settled.cancelledReason ?? null).toBeNull()
    expect(await eventTypes(paymentId)).toEqual([
      "payment.processing",
      "payment.succeeded",
      "payment.settled"
    ])
    // Exactly one collection and one settlement, of the whole price (no fees here).
    expect(await transfers(buyer.address, collector(), before.block)).toEqual([PRICE])
    expect(await transfers(collector(), MERCHANT_DESTINATION, before.block)).toEqual([PRICE])
    const after = await ledger(buyer)
    expect({
      buyer: after.buyer - before.buyer,
      collector: after.collector - before.collector,
      destination: after.destination - before.destination
    }).toEqual({ buyer: -PRICE, collector: 0n, destination: PRICE })
  }, 60_000)
})
