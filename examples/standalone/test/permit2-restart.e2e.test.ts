/**
 * A USDT payment through Permit2 while the engine is SIGKILLed between the
 * buyer's approval and the transfer (issue 39), on a real EVM in its own
 * process: the confirm is accepted with the approval still pending (the chain
 * mines nothing), the engine dies while its collect job waits for it, the
 * approval is mined, and the engine restarted on the same SQLite file
 * collects and settles exactly once: one transfer from the buyer, one to the
 * merchant, the ledger moved once. An approval that reverts instead fails the
 * payment (`approval_failed`) with nothing taken.
 */
import type { ChildProcess } from "node:child_process"
import { signTypedDataJson } from "@pay/sandbox"
import { type Address, encodeFunctionData, type Hex, hexToBigInt, parseAbi } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ChainProcess,
  createPayment,
  type EngineSetup,
  etherBuyer,
  isSettled,
  kill,
  openChainWork,
  removeSetup,
  type Shop,
  startEngine,
  TEN_FIFTY,
  transfersOnChain,
  waitForPayment,
  walletApi
} from "./chain-work-support.js"
import { eventually, exactlyAfterQuiet, type Json, newKey } from "./e2e-support.js"
import type { Instance } from "./instances-support.js"
import { stopAll } from "./instances-support.js"
import type { RpcProxy } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
let chain: ChainProcess
let proxy: RpcProxy
let setup: EngineSetup
let engine: Instance
let shop: Shop
let usdt: ChainProcess["tokens"][number]

const { cents: CENTS, paid: PAID, settled: SETTLED } = TEN_FIFTY
const approveAbi = parseAbi(["function approve(address spender, uint256 amount)"])

beforeAll(async () => {
  ;({ chain, proxy, setup, engine, shop } = await openChainWork(spawned))
  usdt = chain.tokens.find((t) => t.symbol === "USDT")!
  expect(usdt.authorization).toBe("permit2")
  // The shop settles in USDT too.
  const settled = await engine.api.request(
    "POST",
    `/v1/merchants/${shop.merchantId}/settlements/crypto`,
    {
      idempotencyKey: newKey(),
      body: {
        settlements: [{ asset: usdt.asset, destination: `eip155:31337:${shop.destination}` }]
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

/** A buyer holding USDT and test ether, whose wallet sends over the chain's own RPC. */
const usdtBuyer = async () => {
  const buyer = await etherBuyer(chain)
  await chain.rpc("sandbox_faucet", [buyer.address, (PAID * 2n).toString(), "USDT"])
  return buyer
}

/** The buyer's USDT option for the payment: an approval, then the permit. */
const usdtOption = async (paymentId: string, buyer: { account: string }): Promise<Json> => {
  const offered = await walletApi(engine, shop).request(
    "POST",
    `/v1/gateway/payment/${paymentId}/options`,
    { body: { accounts: [buyer.account] } }
  )
  expect(offered.status, offered.text).toBe(200)
  const option = offered.body.options.find((o: Json) => o.amount.unit.endsWith(usdt.asset))
  expect(option.actions.map((a: Json) => a.data.method)).toEqual([
    "eth_sendTransaction",
    "eth_signTypedData_v4"
  ])
  return option
}

const usdtTransfers = (from: Address, to: Address) =>
  transfersOnChain(chain, from, to, 0n, usdt.address)

describe("Permit2 through a kill (SQLite, the chain in its own process)", () => {
  it("killed while the collect job waits for the buyer's approval: collected and settled once on restart", async () => {
    const buyer = await usdtBuyer()
    const paymentId = await createPayment(engine, shop, CENTS)
    const option = await usdtOption(paymentId, buyer)
    await chain.rpc("evm_setAutomine", [false])
    try {
      const tx = JSON.parse(option.actions[0].data.params[0])
      const approval = await buyer.wallet.sendTransaction({
        to: tx.to,
        data: tx.data,
        value: hexToBigInt(tx.value)
      })
      const signature = await signTypedDataJson(buyer.key, option.actions[1].data.params[1])
      const confirmed = await walletApi(engine, shop).request(
        "POST",
        `/v1/gateway/payment/${paymentId}/confirm`,
        {
          body: {
            optionId: option.id,
            results: [
              { type: "walletRpc", data: [approval] },
              { type: "walletRpc", data: [signature] }
            ]
          }
        }
      )
      expect(confirmed.status, confirmed.text).toBe(200)
      expect(confirmed.body.status).toBe("processing")
      // The collect job holds the payment while the approval is pending: nothing is sent.
      await kill(engine)
      expect(await usdtTransfers(buyer.address, chain.collector)).toEqual([])
      await chain.rpc("evm_mine", [])
    } finally {
      await chain.rpc("evm_setAutomine", [true])
    }
    engine = await startEngine("engine", setup, spawned)
    const payment = await waitForPayment(() => engine, paymentId, isSettled)
    expect(payment.status).toBe("succeeded")
    expect(payment.tokenAmount).toMatchObject({
      unit: `caip19/${usdt.asset}`,
      value: PAID.toString()
    })
    await exactlyAfterQuiet(
      async () => ({
        collected: await usdtTransfers(buyer.address, chain.collector),
        settled: await usdtTransfers(chain.collector, shop.destination)
      }),
      { collected: [PAID], settled: [SETTLED] },
      { what: "the USDT transfers from the buyer and to the merchant" }
    )
  }, 90_000)

  it("an approval that reverts fails the payment approval_failed, and nothing is taken", async () => {
    const buyer = await usdtBuyer()
    const paymentId = await createPayment(engine, shop, CENTS)
    const option = await usdtOption(paymentId, buyer)
    // USDT refuses to change one non-zero allowance to another: another approval landing
    // after the options makes the option's approve(max) revert.
    const late = await buyer.wallet.sendTransaction({
      to: usdt.address,
      data: encodeFunctionData({
        abi: approveAbi,
        functionName: "approve",
        args: ["0x000000000022D473030F116dDEE9F6B43aC78BA3", 5n]
      })
    })
    await chain.client.waitForTransactionReceipt({ hash: late })
    await chain.rpc("evm_setAutomine", [false])
    let approval: Hex
    try {
      const tx = JSON.parse(option.actions[0].data.params[0])
      expect(hexToBigInt(tx.value)).toBe(0n)
      // Gas given: an estimate would see the revert and refuse to send it.
      approval = await buyer.wallet.sendTransaction({ to: tx.to, data: tx.data, gas: 100_000n })
      const signature = await signTypedDataJson(buyer.key, option.actions[1].data.params[1])
      const confirmed = await walletApi(engine, shop).request(
        "POST",
        `/v1/gateway/payment/${paymentId}/confirm`,
        {
          body: {
            optionId: option.id,
            results: [
              { type: "walletRpc", data: [approval] },
              { type: "walletRpc", data: [signature] }
            ]
          }
        }
      )
      expect(confirmed.status, confirmed.text).toBe(200)
      await chain.rpc("evm_mine", [])
    } finally {
      await chain.rpc("evm_setAutomine", [true])
    }
    const receipt = await chain.client.getTransactionReceipt({ hash: approval })
    expect(receipt.status).toBe("reverted")
    const payment = await eventually(
      async () => {
        const view = await engine.api.get(`/v1/payments/${paymentId}`)
        expect(view.body.status).toBe("failed")
        return view.body
      },
      { timeoutMs: 30_000 }
    )
    expect(payment.failureCode).toBe("approval_failed")
    expect(await usdtTransfers(buyer.address, chain.collector)).toEqual([])
  }, 90_000)
})
