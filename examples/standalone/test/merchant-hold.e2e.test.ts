/**
 * A merchant that stops being active (issue 20), over real HTTP on a real EVM
 * in its own process, on SQLite (one engine) and PostgreSQL (two engines on
 * one schema): the gateway refuses options, fetch and confirm with 409
 * merchant_inactive while the status routes still answer; a payment already
 * processing is collected once, its settlement held (no transfer to the
 * merchant) until the operator makes the merchant active again or settles it
 * with the CLI; then settled exactly once. Transfers are counted on chain.
 */
import type { ChildProcess } from "node:child_process"
import { signTypedDataJson } from "@pay/sandbox"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Buyer,
  type ChainProcess,
  cli,
  createPayment,
  type EngineSetup,
  engineSetup,
  fundedBuyer,
  isSettled,
  type Ledger,
  openLedger,
  openShop,
  removeSetup,
  requireChainWorkBundles,
  type Shop,
  startChain,
  startEngine,
  startRpcProxy,
  TEN_FIFTY,
  transfersOnChain,
  waitForPayment,
  walletApi
} from "./chain-work-support.js"
import { exactlyAfterQuiet } from "./e2e-support.js"
import { type Instance, stopAll } from "./instances-support.js"
import type { RpcProxy } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
const setups: Array<EngineSetup> = []
let chain: ChainProcess
let proxy: RpcProxy

const { cents: CENTS, paid: PAID, settled: SETTLED } = TEN_FIFTY

beforeAll(async () => {
  requireChainWorkBundles()
  chain = await startChain(spawned)
  proxy = await startRpcProxy(chain.rpcUrl)
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  for (const setup of setups) removeSetup(setup)
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 30_000)

/** The wallet's first option for the buyer, and its signature. */
const signedOption = async (instance: Instance, shop: Shop, paymentId: string, buyer: Buyer) => {
  const wallet = walletApi(instance, shop)
  const base = `/v1/gateway/payment/${paymentId}`
  const offered = await wallet.request("POST", `${base}/options`, {
    body: { accounts: [buyer.account] }
  })
  expect(offered.status, offered.text).toBe(200)
  const optionId: string = offered.body.options[0].id
  const fetched = await wallet.request("POST", `${base}/fetch`, { body: { optionId, data: "" } })
  expect(fetched.status, fetched.text).toBe(200)
  const signature = await signTypedDataJson(buyer.key, fetched.body.actions[0].data.params[1])
  return { optionId, signature }
}

const confirm = (
  instance: Instance,
  shop: Shop,
  paymentId: string,
  signed: { optionId: string; signature: string }
) =>
  walletApi(instance, shop).request("POST", `/v1/gateway/payment/${paymentId}/confirm`, {
    body: { optionId: signed.optionId, results: [{ type: "walletRpc", data: [signed.signature] }] }
  })

/**
 * A payment confirmed while the chain does not mine: `processing`, its
 * collection sent and not yet mined.
 */
const processing = async (instance: Instance, shop: Shop) => {
  const buyer = await fundedBuyer(chain, 20_000_000n)
  const paymentId = await createPayment(instance, shop, CENTS)
  const signed = await signedOption(instance, shop, paymentId, buyer)
  const ledger = await openLedger(
    chain,
    { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
    { paid: PAID, settled: SETTLED }
  )
  await chain.rpc("evm_setAutomine", [false])
  const confirmed = await confirm(instance, shop, paymentId, signed)
  expect(confirmed.status, confirmed.text).toBe(200)
  expect(confirmed.body.status).toBe("processing")
  await waitForPayment(
    () => instance,
    paymentId,
    (p) => typeof p.transaction?.hash === "string"
  )
  return { paymentId, buyer, ledger }
}

/** Mines what is pending and mines on from here. */
const mineOn = async () => {
  await chain.rpc("evm_setAutomine", [true])
  await chain.rpc("evm_mine")
}

/**
 * Settled once, and still through the quiet period after it (a second settlement sent a
 * moment later fails it): one collection, one settlement to the merchant.
 */
const expectSettledOnce = async (
  shop: Shop,
  buyer: Buyer,
  /** What the merchant had received before. */
  before: ReadonlyArray<bigint>,
  ledger: Ledger
) => {
  await exactlyAfterQuiet(
    async () => {
      await ledger.expectMovedOnce()
      return {
        collected: await transfersOnChain(chain, buyer.address, chain.collector),
        settled: await transfersOnChain(chain, chain.collector, shop.destination)
      }
    },
    { collected: [PAID], settled: [...before, SETTLED] },
    { what: "transfers from the buyer and to the merchant; the ledger moved once" }
  )
}

/** Collected once, and held: succeeded, settlement held, nothing sent to the merchant. */
const expectHeld = async (
  instances: ReadonlyArray<Instance>,
  shop: Shop,
  paymentId: string,
  buyer: Buyer,
  /** What the merchant had received before. */
  before: ReadonlyArray<bigint>,
  ledger: Ledger
) => {
  const held = await waitForPayment(
    () => instances[0]!,
    paymentId,
    (p) => p.status === "succeeded" && p.settlement?.status !== "pending"
  )
  expect(held.settlement).toMatchObject({ settled: false, status: "held" })
  // Collected once and nothing to the merchant, still so through a quiet period of 1.5 s:
  // long enough for any instance to have sent a settlement, were it not held.
  await exactlyAfterQuiet(
    async () => {
      // The collector holds all of it: nothing passed on to the merchant.
      await ledger.expectCollectedOnly()
      return {
        collected: await transfersOnChain(chain, buyer.address, chain.collector),
        settled: await transfersOnChain(chain, chain.collector, shop.destination)
      }
    },
    { collected: [PAID], settled: before },
    { quietMs: 1_500, what: "transfers from the buyer and to the merchant while held" }
  )
  for (const instance of instances) {
    const seen = await waitForPayment(
      () => instance,
      paymentId,
      () => true
    )
    expect(seen.settlement).toMatchObject({ settled: false, status: "held" })
  }
}

const scenario = (
  label: string,
  open: () => Promise<{ instances: ReadonlyArray<Instance>; setup: EngineSetup }>
) =>
  describe(label, () => {
    let instances: ReadonlyArray<Instance>
    let setup: EngineSetup
    let shop: Shop
    /** The instance a step runs on: the next one each time. */
    let turn = 0
    const next = () => instances[turn++ % instances.length]!

    beforeAll(async () => {
      ;({ instances, setup } = await open())
      shop = await openShop(instances[0]!, setup, chain)
    }, 120_000)

    it("refuses options, fetch and confirm with 409 merchant_inactive; the status still answers", async () => {
      const buyer = await fundedBuyer(chain, 20_000_000n)
      const paymentId = await createPayment(next(), shop, CENTS)
      const signed = await signedOption(next(), shop, paymentId, buyer)
      for (const status of ["inactive", "suspended"]) {
        expect(
          await cli(setup, ["merchants", "set-status", shop.merchantId, status])
        ).toMatchObject({
          status
        })
        for (const instance of instances) {
          const wallet = walletApi(instance, shop)
          const base = `/v1/gateway/payment/${paymentId}`
          const refusals = [
            await wallet.request("POST", `${base}/options`, {
              body: { accounts: [buyer.account] }
            }),
            await wallet.request("POST", `${base}/fetch`, {
              body: { optionId: signed.optionId, data: "" }
            }),
            await confirm(instance, shop, paymentId, signed)
          ]
          for (const refused of refusals) {
            expect(refused.status, refused.text).toBe(409)
            expect(refused.body.code).toBe("merchant_inactive")
          }
          const info = await wallet.get(base)
          expect(info.status, info.text).toBe(200)
          expect(info.body.status).toBe("requires_action")
          const polled = await wallet.get(`${base}/status`)
          expect(polled.status, polled.text).toBe(200)
          expect(polled.body.status).toBe("requires_action")
        }
      }
      const active = await cli(setup, ["merchants", "set-status", shop.merchantId, "active"])
      expect(active).toMatchObject({ status: "active", settlementsResumed: 0 })
      // Active again: the same option confirms, and nothing moved before.
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([])
      const confirmed = await confirm(next(), shop, paymentId, signed)
      expect(confirmed.status, confirmed.text).toBe(200)
      await waitForPayment(() => instances[0]!, paymentId, isSettled)
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([PAID])
    }, 60_000)

    it("collects a processing payment, holds its settlement while suspended, settles it once active again", async () => {
      const before = await transfersOnChain(chain, chain.collector, shop.destination)
      const { paymentId, buyer, ledger } = await processing(next(), shop)
      await cli(setup, ["merchants", "set-status", shop.merchantId, "suspended"])
      await mineOn()
      await expectHeld(instances, shop, paymentId, buyer, before, ledger)

      const active = await cli(setup, ["merchants", "set-status", shop.merchantId, "active"])
      expect(active).toMatchObject({ status: "active", settlementsResumed: 1 })
      const settled = await waitForPayment(() => next(), paymentId, isSettled)
      expect(settled.settlement).toMatchObject({
        status: "settled",
        amount: { value: SETTLED.toString() }
      })
      await expectSettledOnce(shop, buyer, before, ledger)
      // Once only: running the status change again queues nothing.
      expect(
        await cli(setup, ["merchants", "set-status", shop.merchantId, "active"])
      ).toMatchObject({
        settlementsResumed: 0
      })
    }, 60_000)

    it("the operator settles a held payment with the CLI while the merchant is still inactive", async () => {
      const before = await transfersOnChain(chain, chain.collector, shop.destination)
      const { paymentId, buyer, ledger } = await processing(next(), shop)
      await cli(setup, ["merchants", "set-status", shop.merchantId, "inactive"])
      await mineOn()
      await expectHeld(instances, shop, paymentId, buyer, before, ledger)

      expect(await cli(setup, ["payments", "settle", paymentId])).toEqual({
        paymentId,
        queued: true
      })
      await waitForPayment(() => next(), paymentId, isSettled)
      await expectSettledOnce(shop, buyer, before, ledger)
      // Settled already: making the merchant active again sends nothing more.
      expect(
        await cli(setup, ["merchants", "set-status", shop.merchantId, "active"])
      ).toMatchObject({
        settlementsResumed: 0
      })
      await exactlyAfterQuiet(
        async () => (await transfersOnChain(chain, chain.collector, shop.destination)).length,
        before.length + 1,
        { what: "settlements to the merchant after it is active again" }
      )
    }, 60_000)
  })

scenario("a merchant no longer active, on SQLite (one engine)", async () => {
  const setup = engineSetup(chain, proxy, undefined)
  setups.push(setup)
  return { instances: [await startEngine("sqlite", setup, spawned)], setup }
})

scenario("a merchant no longer active, on PostgreSQL (two engines)", async () => {
  const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  const setup = engineSetup(chain, proxy, database)
  setups.push(setup)
  // The first migrates and creates the partner; then the second joins.
  const A = await startEngine("A", setup, spawned)
  const B = await startEngine("B", setup, spawned)
  return { instances: [A, B], setup }
})
