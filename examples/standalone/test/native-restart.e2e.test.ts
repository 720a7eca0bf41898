/**
 * The native coin through a kill and through reorganisations (issue 39), on
 * a real EVM in its own process, the engine (the `npm start` bundle) on a
 * SQLite file and asking 3 confirmations:
 *
 * - SIGKILLed while its collect job watches the buyer's transfer (mined, not
 *   deep enough yet), restarted on the same file: the payment succeeds once,
 *   with exactly one transfer in and one settlement out;
 * - a reorganisation that undoes the block holding the transfer leaves the
 *   payment processing, and the same transfer mined again pays it, once;
 * - a reorganisation after which the buyer's nonce goes to another
 *   transaction fails the payment `transaction_dropped`, nothing settled.
 */
import type { ChildProcess } from "node:child_process"
import { type Address, type Hex, hexToBigInt } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ChainProcess,
  coinTransfersOnChain,
  createPayment,
  type EngineSetup,
  etherBuyer,
  isSettled,
  kill,
  mineUntil,
  NATIVE_ETH,
  openChainWork,
  removeSetup,
  type Shop,
  startEngine,
  waitForPayment,
  walletApi
} from "./chain-work-support.js"
import { exactlyAfterQuiet, type Json, newKey } from "./e2e-support.js"
import type { Instance } from "./instances-support.js"
import { stopAll } from "./instances-support.js"
import type { RpcProxy } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
let chain: ChainProcess
let proxy: RpcProxy
let setup: EngineSetup
let engine: Instance
let shop: Shop

/** 10.50 USD at the chain's ETH/USD feed (3,000 USD): 0.0035 ETH. */
const PAID = 3_500_000_000_000_000n

beforeAll(async () => {
  ;({ chain, proxy, setup, engine, shop } = await openChainWork(spawned, {
    native: true,
    confirmations: 3,
    // A percentage only: a fixed part is in whole units of the coin paid (0.10 ETH).
    fees: { default: { fixed: "0", percentage: "1.5" } }
  }))
  const settled = await engine.api.request(
    "POST",
    `/v1/merchants/${shop.merchantId}/settlements/crypto`,
    {
      idempotencyKey: newKey(),
      body: {
        settlements: [{ asset: NATIVE_ETH.asset, destination: `eip155:31337:${shop.destination}` }]
      }
    }
  )
  expect(settled.status, settled.text).toBe(201)
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  if (setup) removeSetup(setup)
}, 30_000)

/** A buyer holding test ether, whose wallet signs and sends over the chain's own RPC. */
const ethBuyer = () => etherBuyer(chain)
type EthBuyer = Awaited<ReturnType<typeof ethBuyer>>

/** The ETH option for a new 10.50 USD payment; the payment and the transfer it asks for. */
const ethPayment = async (buyer: EthBuyer) => {
  const paymentId = await createPayment(engine, shop, 1050)
  const offered = await walletApi(engine, shop).request(
    "POST",
    `/v1/gateway/payment/${paymentId}/options`,
    { body: { accounts: [buyer.account] } }
  )
  expect(offered.status, offered.text).toBe(200)
  const option = offered.body.options.find((o: Json) => o.amount.unit.endsWith(NATIVE_ETH.asset))
  expect(option, offered.text).toBeDefined()
  expect(option.amount.value).toBe(PAID.toString())
  const tx = JSON.parse(option.actions[0].data.params[0])
  return {
    paymentId,
    option,
    transfer: { to: tx.to as Address, value: hexToBigInt(tx.value), data: tx.data as Hex }
  }
}

/** The transfer signed by the buyer's wallet, kept raw to be sent again after a reorg. */
const signedTransfer = async (
  buyer: EthBuyer,
  transfer: { to: Address; value: bigint; data: Hex }
) => {
  const request = await buyer.wallet.prepareTransactionRequest(transfer)
  return buyer.wallet.signTransaction(request)
}

const sendRaw = (raw: Hex): Promise<Hex> => chain.rpc("eth_sendRawTransaction", [raw])

const confirmWith = async (paymentId: string, optionId: string, hash: Hex) => {
  const confirmed = await walletApi(engine, shop).request(
    "POST",
    `/v1/gateway/payment/${paymentId}/confirm`,
    { body: { optionId, results: [{ type: "walletRpc", data: [hash] }] } }
  )
  expect(confirmed.status, confirmed.text).toBe(200)
  expect(confirmed.body.status).toBe("processing")
}

/** Every coin transfer from `from` to `to` on the chain as it is now: its hash and value. */
const coinTransfers = (from: Address, to: Address) => coinTransfersOnChain(chain.client, from, to)

/** Succeeded and settled once: one transfer in of the amount paid, one out of the settlement. */
const expectSettledOnce = async (
  paymentId: string,
  buyer: EthBuyer,
  hash: Hex,
  settledBefore: ReadonlyArray<unknown>
) => {
  const payment = await mineUntil(chain, () => engine, paymentId, isSettled, {
    timeoutMs: 40_000
  })
  expect(payment.status).toBe("succeeded")
  expect(payment.transaction).toMatchObject({ hash })
  const settledAmount = BigInt(payment.settlement.amount.value)
  // 1.5 % of the amount, and the settlement's gas.
  const network = BigInt(payment.fees.network.value)
  expect(BigInt(payment.fees.total.value)).toBe((PAID * 15n) / 1000n + network)
  expect(settledAmount).toBe(PAID - BigInt(payment.fees.total.value))
  await exactlyAfterQuiet(
    async () => ({
      paid: await coinTransfers(buyer.address, chain.collector),
      // The merchant's earlier settlements (of earlier payments) stay as they were.
      settled: (await coinTransfers(chain.collector, shop.destination)).slice(settledBefore.length)
    }),
    {
      paid: [{ hash, value: PAID }],
      settled: [{ hash: payment.settlement.txHash, value: settledAmount }]
    },
    { what: "the coin moved from the buyer and to the merchant" }
  )
}

describe("the native coin through a kill and reorganisations (SQLite, the chain in its own process)", () => {
  it("killed while the collect job watches the transfer: succeeded and settled once on restart", async () => {
    const buyer = await ethBuyer()
    const settledBefore = await coinTransfers(chain.collector, shop.destination)
    const { paymentId, option, transfer } = await ethPayment(buyer)
    const hash = await sendRaw(await signedTransfer(buyer, transfer))
    await chain.client.waitForTransactionReceipt({ hash })
    await confirmWith(paymentId, option.id, hash)
    // One block of three: the job watches; killed, nothing of the payment moves meanwhile.
    await kill(engine)
    await chain.rpc("evm_mine", [])
    await chain.rpc("evm_mine", [])
    engine = await startEngine("engine", setup, spawned)
    await expectSettledOnce(paymentId, buyer, hash, settledBefore)
  }, 90_000)

  it("a reorganisation undoes the transfer's block: processing until it is mined again, then paid once", async () => {
    const buyer = await ethBuyer()
    const settledBefore = await coinTransfers(chain.collector, shop.destination)
    const { paymentId, option, transfer } = await ethPayment(buyer)
    const snapshot = await chain.rpc("evm_snapshot", [])
    const raw = await signedTransfer(buyer, transfer)
    const hash = await sendRaw(raw)
    await chain.client.waitForTransactionReceipt({ hash })
    await confirmWith(paymentId, option.id, hash)
    await chain.rpc("evm_mine", [])
    // Two blocks of three, then undone: the transfer is nowhere.
    expect(await chain.rpc("evm_revert", [snapshot])).toBe(true)
    expect(await chain.client.getTransaction({ hash }).catch(() => undefined)).toBeUndefined()
    for (let i = 0; i < 4; i++) await chain.rpc("evm_mine", [])
    // Deeper than the confirmations the block had: still processing, nothing settled.
    const waiting = await waitForPayment(
      () => engine,
      paymentId,
      () => true
    )
    expect(waiting.status).toBe("processing")
    expect(await coinTransfers(chain.collector, shop.destination)).toEqual(settledBefore)
    // The same signed transfer again (as a node re-includes a reorganised transaction).
    expect(await sendRaw(raw)).toBe(hash)
    await expectSettledOnce(paymentId, buyer, hash, settledBefore)
  }, 90_000)

  it("the transfer undone and its nonce used by another transaction: transaction_dropped, nothing settled", async () => {
    const buyer = await ethBuyer()
    const settledBefore = await coinTransfers(chain.collector, shop.destination)
    const { paymentId, option, transfer } = await ethPayment(buyer)
    const snapshot = await chain.rpc("evm_snapshot", [])
    const hash = await sendRaw(await signedTransfer(buyer, transfer))
    await chain.client.waitForTransactionReceipt({ hash })
    await confirmWith(paymentId, option.id, hash)
    expect(await chain.rpc("evm_revert", [snapshot])).toBe(true)
    // The buyer's wallet uses the nonce for something else (a "cancel": to itself, nothing).
    const other = await buyer.wallet.sendTransaction({ to: buyer.address, value: 0n })
    await chain.client.waitForTransactionReceipt({ hash: other })
    const payment = await mineUntil(
      chain,
      () => engine,
      paymentId,
      (p) => p.status === "failed"
    )
    expect(payment.failureCode).toBe("transaction_dropped")
    expect(payment.settlement).toBeUndefined()
    expect(await coinTransfers(buyer.address, chain.collector)).toEqual([])
    expect(await coinTransfers(chain.collector, shop.destination)).toEqual(settledBefore)
  }, 90_000)
})
