/**
 * Money that is never lost (issue 6), on a real EVM in its own process: the
 * engine (the `npm start` bundle, on a SQLite file) is SIGKILLed at each point
 * where a payment is between two records, and restarted on the same file
 * while the chain lives on. Each time the payment ends succeeded and settled,
 * with exactly one transfer from the buyer and exactly one settlement to the
 * merchant on chain, the amounts less the configured fees, and the balances
 * say the same: the buyer down by the amount, the merchant's destination up by
 * the amount less the fees, the collector up by exactly the fees. Also: the RPC down
 * and back, a dropped transaction sent again, a stuck one replaced at a
 * higher fee, a receipt undone by a reorganisation, and a merchant without a
 * settlement destination settled later by the operator.
 */
import type { ChildProcess } from "node:child_process"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type Buyer,
  type ChainProcess,
  cli,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  fundedBuyer,
  isSettled,
  kill,
  type Ledger,
  mineUntil,
  openChainWork,
  openLedger,
  removeSetup,
  type Shop,
  sleep,
  startEngine,
  TEN_FIFTY,
  transfersOnChain,
  waitForPayment
} from "./chain-work-support.js"
import { eventually, exactlyAfterQuiet, type Json } from "./e2e-support.js"
import type { Instance } from "./instances-support.js"
import { stopAll } from "./instances-support.js"
import { type RpcProxy, SELECTORS, sendsCallTo } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
let chain: ChainProcess
let proxy: RpcProxy
let setup: EngineSetup
let engine: Instance
let shop: Shop

const { cents: CENTS, paid: PAID, fees: FEES, settled: SETTLED } = TEN_FIFTY

beforeAll(async () => {
  ;({ chain, proxy, setup, engine, shop } = await openChainWork(spawned, { stuckAfterSeconds: 2 }))
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  if (setup) removeSetup(setup)
}, 30_000)

afterEach(async () => {
  // Whatever a test did to the chain or the proxy, the next starts from a chain that mines.
  if (!proxy.isUp()) await proxy.up()
  await chain.rpc("evm_setAutomine", [true])
  await chain.rpc("evm_mine")
})

const current = () => engine

const restart = async () => {
  engine = await startEngine("engine", setup, spawned)
  return engine
}

/**
 * A paid payment: the buyer funded, the ledger of the buyer's, the collector's
 * and the merchant's balances opened, the wallet's confirm answered.
 */
const confirmed = async (
  funded?: Buyer
): Promise<{ paymentId: string; buyer: Buyer; status: Json; ledger: Ledger }> => {
  const buyer = funded ?? (await fundedBuyer(chain, 20_000_000n))
  const paymentId = await createPayment(engine, shop, CENTS)
  const ledger = await openLedger(
    chain,
    { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
    { paid: PAID, settled: SETTLED }
  )
  const status = await confirmAsWallet(engine, shop, paymentId, buyer)
  return { paymentId, buyer, status, ledger }
}

/**
 * Exactly one transfer in (the amount paid) and one out (the amount less
 * fees), the balances moved by exactly those, and the views say so; still
 * exactly those through the quiet period after the settlement (a second
 * transfer sent a moment later fails it).
 */
const expectPaidAndSettledOnce = async (paymentId: string, buyer: Buyer, ledger: Ledger) => {
  const payment = await waitForPayment(current, paymentId, isSettled)
  expect(payment.status).toBe("succeeded")
  await exactlyAfterQuiet(
    async () => {
      await ledger.expectMovedOnce()
      return transfersOnChain(chain, buyer.address, chain.collector)
    },
    [PAID],
    { what: "transfers from the buyer; the ledger moved once" }
  )
  expect(payment.settlement).toMatchObject({
    settled: true,
    status: "settled",
    amount: { unit: `caip19/${chain.token.asset}`, value: SETTLED.toString() }
  })
  expect(payment.settlement.txHash).toMatch(/^0x[0-9a-f]{64}$/)
  expect(payment.fees).toMatchObject({
    total: { value: FEES.toString() },
    fixed: { value: "100000" },
    percentage: "1.5"
  })
  expect(Date.parse(payment.settledAt)).toBeGreaterThan(0)
  const receipt = await chain.client.getTransactionReceipt({ hash: payment.settlement.txHash })
  expect(receipt.status).toBe("success")
  return payment
}

describe("durable chain work on a real EVM in its own process (SQLite)", () => {
  it("pays, takes the fees and settles the rest to the merchant's destination", async () => {
    const { paymentId, buyer, status, ledger } = await confirmed()
    expect(status.status).toMatch(/processing|succeeded/)
    const payment = await expectPaidAndSettledOnce(paymentId, buyer, ledger)
    expect(payment.transaction).toMatchObject({ networkId: "31337" })
    // The legacy list carries the settlement too.
    const legacy = await engine.api.get(`/v1/merchants/${shop.merchantId}/payments?limit=200`)
    const item = legacy.body.data.find((p: Json) => p.payment_id === paymentId)
    expect(item).toMatchObject({
      settlement_status: "settled",
      settlement_tx_hash: payment.settlement.txHash,
      settled_at: payment.settledAt
    })
  }, 60_000)

  it("killed between confirm and submit: resumes on restart and pays once", async () => {
    // The job's first chain call is the transfer's gas estimate: hold it, then kill.
    const holder = proxy.hold((call) => call.method === "eth_estimateGas")
    const { paymentId, buyer, status, ledger } = await confirmed()
    expect(status.status).toBe("processing")
    await holder.waitForHeld()
    await kill(engine)
    holder.stop()
    await holder.release("drop")
    expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([])
    await ledger.expectNothingMoved()
    await restart()
    await expectPaidAndSettledOnce(paymentId, buyer, ledger)
  }, 60_000)

  it.each([
    // The transaction reaches the chain; the engine that sent it never hears back.
    { lost: "its answer", release: "forward" as const, onChain: [PAID] },
    // The transaction never reaches the chain: the restarted engine sends it again.
    { lost: "the transfer itself", release: "drop" as const, onChain: [] }
  ])(
    "killed after the transfer was recorded and sent, $lost lost: pays once on restart",
    async ({ release, onChain }) => {
      const holder = proxy.hold(sendsCallTo([SELECTORS.receiveWithAuthorization]))
      const { paymentId, buyer, ledger } = await confirmed()
      await holder.waitForHeld()
      await kill(engine)
      holder.stop()
      await holder.release(release)
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual(onChain)
      if (onChain.length === 0) await ledger.expectNothingMoved()
      else await ledger.expectCollectedOnly()
      await restart()
      await expectPaidAndSettledOnce(paymentId, buyer, ledger)
    },
    60_000
  )

  it("killed between success and settlement: settles once on restart", async () => {
    const holder = proxy.hold(sendsCallTo([SELECTORS.transfer]))
    const { paymentId, buyer, ledger } = await confirmed()
    await holder.waitForHeld()
    const paid = await waitForPayment(current, paymentId, (p) => p.status === "succeeded")
    expect(paid.settlement).toMatchObject({ settled: false, status: "pending" })
    await kill(engine)
    await ledger.expectCollectedOnly()
    holder.stop()
    // Sent, but the answer lost: the restarted engine must recognise it, not send another.
    await holder.release("forward-then-drop")
    await restart()
    await expectPaidAndSettledOnce(paymentId, buyer, ledger)
  }, 60_000)

  it("the RPC down for a while: the payment stays processing, then pays and settles", async () => {
    const holder = proxy.hold((call) => call.method === "eth_estimateGas")
    const { paymentId, buyer, ledger } = await confirmed()
    await holder.waitForHeld()
    await proxy.down()
    holder.stop()
    // Processing, nothing settled and nothing moved, and still so through 3 s of the outage
    // (the engine's chain calls failing all the while).
    await exactlyAfterQuiet(
      async () => {
        await ledger.expectNothingMoved()
        const waiting = await waitForPayment(current, paymentId, () => true)
        return { status: waiting.status, settlement: waiting.settlement }
      },
      { status: "processing", settlement: undefined },
      { quietMs: 3_000, what: "the payment while the RPC is down" }
    )
    await proxy.up()
    await expectPaidAndSettledOnce(paymentId, buyer, ledger)
  }, 60_000)

  it("a dropped transaction is sent again while its authorization holds", async () => {
    const funded = await fundedBuyer(chain, 20_000_000n)
    await chain.rpc("evm_setAutomine", [false])
    const { paymentId, buyer, ledger } = await confirmed(funded)
    const sent = await waitForPayment(current, paymentId, (p) => p.transaction?.hash !== undefined)
    await chain.rpc("hardhat_dropTransaction", [sent.transaction.hash])
    expect(await chain.rpc("eth_getTransactionByHash", [sent.transaction.hash])).toBeNull()
    // The engine sees it gone and sends the same transaction again.
    const until = Date.now() + 10_000
    while ((await chain.rpc("eth_getTransactionByHash", [sent.transaction.hash])) === null) {
      if (Date.now() > until) throw new Error("the dropped transaction was not sent again")
      await sleep(50)
    }
    await chain.rpc("evm_setAutomine", [true])
    await chain.rpc("evm_mine")
    const payment = await mineUntil(chain, current, paymentId, isSettled)
    expect(payment.transaction.hash).toBe(sent.transaction.hash)
    await expectPaidAndSettledOnce(paymentId, buyer, ledger)
  }, 60_000)

  it("a stuck transaction is replaced at the same nonce with a higher fee", async () => {
    const funded = await fundedBuyer(chain, 20_000_000n)
    await chain.rpc("evm_setAutomine", [false])
    const { paymentId, buyer, ledger } = await confirmed(funded)
    const sent = await waitForPayment(current, paymentId, (p) => p.transaction?.hash !== undefined)
    // The engine records a transaction before it sends it: wait until the chain has it.
    const onChain = (hash: `0x${string}`) =>
      eventually(() => chain.client.getTransaction({ hash }), { timeoutMs: 15_000 })
    const first = await onChain(sent.transaction.hash)
    // The next block asks more than the transaction offers: it is left out, stuck.
    await chain.rpc("hardhat_setNextBlockBaseFeePerGas", [
      `0x${(first.maxFeePerGas! * 4n).toString(16)}`
    ])
    await chain.rpc("evm_mine")
    expect(await chain.rpc("eth_getTransactionReceipt", [sent.transaction.hash])).toBeNull()
    // After stuckAfterSeconds (2 s) the engine replaces it: a new hash, the same nonce.
    const replaced = await waitForPayment(
      current,
      paymentId,
      (p) => p.transaction?.hash !== sent.transaction.hash,
      15_000
    )
    expect(replaced.transaction.nonce).toBe(sent.transaction.nonce)
    const second = await onChain(replaced.transaction.hash)
    expect(second.maxFeePerGas! > first.maxFeePerGas!).toBe(true)
    await chain.rpc("evm_setAutomine", [true])
    await mineUntil(chain, current, paymentId, isSettled)
    const payment = await expectPaidAndSettledOnce(paymentId, buyer, ledger)
    expect(payment.transaction.hash).toBe(replaced.transaction.hash)
  }, 60_000)

  it("a settlement deleted while the payment was processing: the funds stay, the operator settles later", async () => {
    const holder = proxy.hold((call) => call.method === "eth_estimateGas")
    const { paymentId, buyer, ledger } = await confirmed()
    await holder.waitForHeld()
    const listed = await engine.api.get(`/v1/merchants/${shop.merchantId}/settlements`)
    const settlementId = listed.body.crypto[0].id
    const removed = await engine.api.request(
      "DELETE",
      `/v1/merchants/${shop.merchantId}/settlements/crypto/${settlementId}`
    )
    expect(removed.status, removed.text).toBe(200)
    holder.stop()
    await holder.release("forward")
    const kept = await waitForPayment(
      current,
      paymentId,
      (p) => p.settlement?.status === "no_destination"
    )
    expect(kept).toMatchObject({ status: "succeeded", settlement: { settled: false } })
    // Collected, and all of it kept by the collector until the operator settles: still so
    // through the quiet period (a settlement sent a moment later fails it).
    await exactlyAfterQuiet(
      async () => {
        await ledger.expectCollectedOnly()
        return transfersOnChain(chain, buyer.address, chain.collector)
      },
      [PAID],
      { what: "transfers from the buyer; collected, nothing settled" }
    )
    const legacy = await engine.api.get(`/v1/merchants/${shop.merchantId}/payments?limit=200`)
    expect(legacy.body.data.find((p: Json) => p.payment_id === paymentId)).toMatchObject({
      settlement_status: "no_destination",
      settled_at: null
    })
    // The operator adds a destination, then settles again with the CLI.
    const added = await engine.api.request(
      "POST",
      `/v1/merchants/${shop.merchantId}/settlements/crypto`,
      {
        idempotencyKey: `again-${paymentId}`,
        body: {
          settlements: [
            { asset: chain.token.asset, destination: `eip155:31337:${shop.destination}` }
          ]
        }
      }
    )
    expect(added.status, added.text).toBe(201)
    expect(await cli(setup, ["payments", "settle", paymentId])).toEqual({ paymentId, queued: true })
    await expectPaidAndSettledOnce(paymentId, buyer, ledger)
  }, 60_000)
})
