/**
 * Durable chain work with more than one instance, and against a chain that
 * changes its mind (issue 6), on a real EVM in its own process:
 * - two engine processes on one PostgreSQL schema race for the same jobs:
 *   every payment is collected once and settled once, no nonce is used twice;
 * - with two confirmations required, a receipt undone by a reorganisation
 *   (evm_snapshot / evm_revert) sends the payment back to watching, never to a
 *   final state; the transfer is sent again and the payment pays once.
 */
import type { ChildProcess } from "node:child_process"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ChainProcess,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  engineSetup,
  fundedBuyer,
  isSettled,
  mineUntil,
  openLedger,
  openShop,
  removeSetup,
  requireChainWorkBundles,
  sleep,
  startChain,
  startEngine,
  startRpcProxy,
  TEN_FIFTY,
  tokenBalance,
  transfersOnChain,
  waitForPayment
} from "./chain-work-support.js"
import { eventually, type Json } from "./e2e-support.js"
import { type Instance, stopAll } from "./instances-support.js"
import type { RpcProxy } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
const setups: Array<EngineSetup> = []
let chain: ChainProcess
let proxy: RpcProxy

const { paid: PAID, fees: FEES, settled: SETTLED } = TEN_FIFTY

beforeAll(async () => {
  requireChainWorkBundles()
  chain = await startChain(spawned)
  proxy = await startRpcProxy(chain.rpcUrl)
}, 60_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  for (const setup of setups) removeSetup(setup)
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 30_000)

const balanceOf = (address: `0x${string}`) => tokenBalance(chain, address)

/** How many times an engine has asked the chain, through the proxy, for the receipt of `hash`. */
const receiptLooks = (hash: string): number =>
  proxy.seen.filter(
    (c) =>
      c.method === "eth_getTransactionReceipt" &&
      String(c.params[0]).toLowerCase() === hash.toLowerCase()
  ).length

/**
 * Waits until the engine has looked at `hash`'s receipt twice more than `from` (the count read
 * once the chain is as the test wants it): the first of them reached the chain after that, and
 * the step that made it has ended (the engine asks again only in its next step). What the
 * payment is then is what such a look decided, not what it was before the engine looked.
 */
const untilLookedAgain = (hash: string, from: number) =>
  eventually(
    async () => expect(receiptLooks(hash), `looks at ${hash}`).toBeGreaterThanOrEqual(from + 2),
    { timeoutMs: 15_000, intervalMs: 20 }
  )

describe("two engine instances on one PostgreSQL database race for the same jobs", () => {
  it("collects and settles every payment exactly once", async () => {
    const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
    const setup = engineSetup(chain, proxy, database)
    setups.push(setup)
    // The first migrates and creates the partner; then the second joins.
    const A = await startEngine("A", setup, spawned)
    const B = await startEngine("B", setup, spawned)
    const shop = await openShop(A, setup, chain)
    const COUNT = 8
    const buyers = await Promise.all(
      Array.from({ length: COUNT }, () => fundedBuyer(chain, 20_000_000n))
    )
    const nonceBefore = await chain.client.getTransactionCount({ address: chain.collector })
    const merchantBefore = await balanceOf(shop.destination)
    const collectorBefore = await balanceOf(chain.collector)
    const buyersBefore = await Promise.all(buyers.map((b) => balanceOf(b.address)))
    const instances: ReadonlyArray<Instance> = [A, B]
    const paymentIds = await Promise.all(
      buyers.map(async (buyer, i) => {
        const on = instances[i % 2]!
        const paymentId = await createPayment(on, shop, 1050)
        await confirmAsWallet(on, shop, paymentId, buyer)
        return paymentId
      })
    )
    const paid = await Promise.all(
      paymentIds.map((id, i) =>
        waitForPayment(() => instances[(i + 1) % 2]!, id, isSettled, 60_000)
      )
    )
    for (const [i, buyer] of buyers.entries()) {
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([PAID])
      expect(paid[i]).toMatchObject({ status: "succeeded", settlement: { settled: true } })
    }
    const settlements = await transfersOnChain(chain, chain.collector, shop.destination)
    expect(settlements).toEqual(Array.from({ length: COUNT }, () => SETTLED))
    expect(await balanceOf(shop.destination)).toBe(merchantBefore + BigInt(COUNT) * SETTLED)
    // Each buyer paid once; the collector kept exactly the fees of each payment.
    expect(await Promise.all(buyers.map((b) => balanceOf(b.address)))).toEqual(
      buyersBefore.map((before) => before - PAID)
    )
    expect(await balanceOf(chain.collector)).toBe(collectorBefore + BigInt(COUNT) * FEES)
    // One transaction per collection and per settlement: no nonce wasted or used twice.
    const nonces = paid.map((p: Json) => p.transaction.nonce)
    expect(new Set(nonces).size).toBe(COUNT)
    expect(await chain.client.getTransactionCount({ address: chain.collector })).toBe(
      nonceBefore + 2 * COUNT
    )
    // Both instances did some of the work.
    expect(A.output()).not.toMatch(/step failed/)
    expect(B.output()).not.toMatch(/step failed/)
  }, 120_000)
})

describe("a reorganisation with two confirmations required (SQLite)", () => {
  it("sends the payment back to watching when its receipt disappears; it pays once", async () => {
    const setup = engineSetup(chain, proxy, undefined, { confirmations: 2 })
    setups.push(setup)
    const engine = await startEngine("reorg", setup, spawned)
    const shop = await openShop(engine, setup, chain)
    const buyer = await fundedBuyer(chain, 20_000_000n)
    const paymentId = await createPayment(engine, shop, 1050)
    const ledger = await openLedger(
      chain,
      { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
      { paid: PAID, settled: SETTLED }
    )
    const snapshot = await chain.rpc("evm_snapshot")
    await confirmAsWallet(engine, shop, paymentId, buyer)
    const sent = await waitForPayment(
      () => engine,
      paymentId,
      (p) => p.transaction?.hash !== undefined
    )
    const hash = sent.transaction.hash
    // Mined (automine), but one block deep of the two required: still processing.
    const until = Date.now() + 10_000
    while ((await chain.rpc("eth_getTransactionReceipt", [hash])) === null) {
      if (Date.now() > until) throw new Error("the transfer was not mined")
      await sleep(20)
    }
    // The engine has looked at the receipt since it was mined, and its step has ended.
    await untilLookedAgain(hash, receiptLooks(hash))
    expect(
      (
        await waitForPayment(
          () => engine,
          paymentId,
          () => true
        )
      ).status
    ).toBe("processing")
    // The block holding it is undone: the receipt disappears.
    expect(await chain.rpc("evm_revert", [snapshot])).toBe(true)
    expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([])
    await ledger.expectNothingMoved()
    // The engine has looked again since the receipt disappeared, and its step has ended.
    await untilLookedAgain(hash, receiptLooks(hash))
    const watching = await waitForPayment(
      () => engine,
      paymentId,
      () => true
    )
    expect(watching.status).toBe("processing")
    // The engine sends the recorded transaction again; blocks on top give it its confirmations.
    const payment = await mineUntil(chain, () => engine, paymentId, isSettled, {
      timeoutMs: 30_000,
      // Never a final state on the way other than success.
      each: (p) => expect(["processing", "succeeded"]).toContain(p.status)
    })
    expect(payment.transaction.hash).toBe(hash)
    expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([PAID])
    expect(await transfersOnChain(chain, chain.collector, shop.destination)).toEqual([SETTLED])
    await ledger.expectMovedOnce()
  }, 90_000)
})

// Last in the file: it moves the chain's clock forward for good.
describe("a dropped transaction whose authorization has expired (SQLite)", () => {
  it("fails the payment with authorization_expired; its nonce goes to a cancel, nothing moves", async () => {
    const setup = engineSetup(chain, proxy, undefined)
    setups.push(setup)
    const engine = await startEngine("expiry", setup, spawned)
    const shop = await openShop(engine, setup, chain)
    const buyer = await fundedBuyer(chain, 20_000_000n)
    const paymentId = await createPayment(engine, shop, 1050)
    const ledger = await openLedger(
      chain,
      { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
      { paid: PAID, settled: SETTLED }
    )
    await chain.rpc("evm_setAutomine", [false])
    try {
      await confirmAsWallet(engine, shop, paymentId, buyer)
      const sent = await waitForPayment(
        () => engine,
        paymentId,
        (p) => p.transaction?.hash !== undefined
      )
      await chain.rpc("hardhat_dropTransaction", [sent.transaction.hash])
      // Past the authorization's validBefore (the quote lock, 300 s): it can no longer be sent.
      await chain.rpc("evm_increaseTime", [400])
      await chain.rpc("evm_mine")
      const payment = await mineUntil(
        chain,
        () => engine,
        paymentId,
        (p) => p.status !== "processing"
      )
      expect(payment).toMatchObject({ status: "failed", failureCode: "authorization_expired" })
      expect(payment.settlement).toBeUndefined()
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([])
      expect(await balanceOf(buyer.address)).toBe(20_000_000n)
      await ledger.expectNothingMoved()
      // Failed once a block past validBefore showed the authorization unused; the job goes on
      // to use the nonce its transfer held, by a cancel: the collector's next one is free.
      await eventually(
        async () => {
          await chain.rpc("evm_mine")
          const mined = await chain.client.getTransactionCount({ address: chain.collector })
          expect(mined).toBeGreaterThan(sent.transaction.nonce)
        },
        { timeoutMs: 20_000 }
      )
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([])
      await ledger.expectNothingMoved()
      const status = await engine.api.get(`/v1/payments/${paymentId}/status`, {
        headers: { "merchant-id": shop.merchantId }
      })
      expect(status.body).toMatchObject({
        status: "failed",
        isFinal: true,
        failureCode: "authorization_expired"
      })
    } finally {
      await chain.rpc("evm_setAutomine", [true])
    }
  }, 60_000)
})
