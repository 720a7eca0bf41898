/**
 * The network's own coin (issue 39), over HTTP on the real server and its
 * sandbox chain, on SQLite and on PostgreSQL: a USD payment paid in ETH at
 * the chain's ETH/USD feed by one transfer the buyer's wallet sends, settled
 * to the merchant less fees whose `network` part pays the settlement's own
 * gas; a transfer claimed by one payment refused on another; one without the
 * option's reference refused; and one of another value failing its payment
 * with `transaction_mismatch`, what it brought kept as returnable funds. Every
 * payment counts the transfers and the balances it moved.
 */
import { type Caip19, ChainJobStore } from "@pay/core"
import { Effect, Option } from "effect"
import { type Address, createWalletClient, type Hex, hexToBigInt } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { coinTransfersOnChain } from "./chain-work-support.js"
import {
  type Client,
  client,
  type E2eServer,
  eventually,
  type Json,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  type Buyer,
  confirm,
  fund,
  merchantSettledIn,
  newBuyer,
  options,
  paymentFor,
  walletClient
} from "./gateway-support.js"

const ETH = "eip155:31337/slip44:60" as Caip19
/** 10.50 USD at the sandbox's ETH/USD feed (3,000 USD): 0.0035 ETH. */
const TEN_FIFTY_IN_WEI = 3_500_000_000_000_000n

describe.each(STORES)("the native coin on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let merchantId: string
  let destination: Address

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    destination = privateKeyToAccount(generatePrivateKey()).address
    merchantId = (
      await merchantSettledIn(partner, [
        { asset: server.sandbox.token.asset, destination: `eip155:31337:${destination}` },
        { asset: ETH, destination: `eip155:31337:${destination}` }
      ])
    ).merchantId
  }, 120_000)

  afterAll(() => server?.stop())

  const chain = () => server.sandbox.publicClient
  const coin = (address: Address) => chain().getBalance({ address })
  /** Test ether from the faucet route, as a buyer would ask for it. */
  const faucet = async (buyer: Buyer, wei: bigint) => {
    const response = await fetch(`${server.baseUrl}/sandbox/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: buyer.account, amount: wei.toString(), token: "ETH" })
    })
    expect(response.status, await response.clone().text()).toBe(200)
  }
  /** The buyer's wallet sends a transaction; its hash once mined. */
  const send = async (buyer: Buyer, tx: { to: Address; value: bigint; data: Hex }) => {
    const hash = await createWalletClient({
      account: privateKeyToAccount(buyer.key),
      chain: server.sandbox.chain,
      transport: server.sandbox.transport
    }).sendTransaction(tx)
    await chain().waitForTransactionReceipt({ hash })
    return hash
  }
  /** The ETH option offered to a buyer holding ETH and USDC, for a new 10.50 USD payment. */
  const ethOption = async () => {
    const buyer = newBuyer()
    await faucet(buyer, 10n ** 18n)
    await fund(server, buyer, 20_000_000n)
    const payment = await paymentFor(partner, merchantId, "1050")
    const offered = await options(wallet, payment.paymentId, [buyer.account])
    expect(offered.status, offered.text).toBe(200)
    const units = offered.body.options.map((o: Json) => o.amount.unit)
    // Both affordable: the stablecoin first (the cheapest for the buyer, and no price risk).
    expect(units).toEqual([`caip19/${server.sandbox.token.asset}`, `caip19/${ETH}`])
    const option = offered.body.options[1]
    return { buyer, payment, option }
  }
  /** The transaction an option's one action asks the wallet to send. */
  const transferOf = (option: Json) => {
    expect(option.actions).toHaveLength(1)
    const action = option.actions[0]
    expect(action.type).toBe("walletRpc")
    expect(action.data.method).toBe("eth_sendTransaction")
    const tx = JSON.parse(action.data.params[0])
    return {
      from: tx.from as Address,
      to: tx.to as Address,
      value: hexToBigInt(tx.value),
      data: tx.data as Hex,
      chainId: tx.chainId as string
    }
  }
  const resultOf = (hash: Hex) => [{ type: "walletRpc", data: [hash] }]
  const viewOf = async (paymentId: string) => {
    const view = await partner.get(`/v1/payments/${paymentId}`)
    expect(view.status, view.text).toBe(200)
    return view.body
  }
  /** Every transaction of a block range from `from` to `to`: how many times the coin moved. */
  const coinTransfers = (from: Address, to: Address, fromBlock: bigint) =>
    coinTransfersOnChain(chain(), from, to, fromBlock)

  it("ETH: one transfer from the buyer, settled once, less fees that pay the settlement's own gas", async () => {
    // Blocks from the next one on: the current one may hold an earlier test's settlement.
    const startBlock = (await chain().getBlockNumber()) + 1n
    const { buyer, payment, option } = await ethOption()
    expect(option.amount.value).toBe(TEN_FIFTY_IN_WEI.toString())
    const tx = transferOf(option)
    expect(tx).toMatchObject({
      from: buyer.address,
      to: server.sandbox.collector.address,
      value: TEN_FIFTY_IN_WEI,
      chainId: "0x7a69"
    })
    expect(tx.data).toMatch(/^0x[0-9a-f]{64}$/)
    const collector = server.sandbox.collector.address
    const collectorBefore = await coin(collector)
    const destinationBefore = await coin(destination)

    const hash = await send(buyer, tx)
    const confirmed = await confirm(wallet, payment.paymentId, {
      optionId: option.id,
      results: resultOf(hash)
    })
    expect(confirmed.status, confirmed.text).toBe(200)

    const view = await eventually(
      async () => {
        const v = await viewOf(payment.paymentId)
        expect(v.settlement?.settled, JSON.stringify(v)).toBe(true)
        return v
      },
      { timeoutMs: 30_000 }
    )
    expect(view.status).toBe("succeeded")
    // The payment's transaction is the buyer's own transfer.
    expect(view.transaction).toMatchObject({ networkId: "31337", hash })
    // No fee is configured: the fees are the settlement's gas, kept from the coin paid.
    const network = BigInt(view.fees.network.value)
    expect(network).toBeGreaterThan(0n)
    expect(view.fees.total.value).toBe(network.toString())
    const settledAmount = BigInt(view.settlement.amount.value)
    expect(settledAmount).toBe(TEN_FIFTY_IN_WEI - network)

    // Exactly one transfer in, one out, of exactly those values.
    const paidIn = await coinTransfers(buyer.address, collector, startBlock)
    expect(paidIn).toEqual([{ hash, value: TEN_FIFTY_IN_WEI }])
    const paidOut = await coinTransfers(collector, destination, startBlock)
    expect(paidOut).toEqual([{ hash: view.settlement.txHash, value: settledAmount }])
    expect((await coin(destination)) - destinationBefore).toBe(settledAmount)
    // The collector keeps what the settlement did not burn of its gas money part: never less.
    const receipt = await chain().getTransactionReceipt({ hash: view.settlement.txHash })
    const burned = receipt.gasUsed * receipt.effectiveGasPrice
    expect(burned).toBeLessThanOrEqual(network)
    expect((await coin(collector)) - collectorBefore).toBe(network - burned)
  })

  it("a transfer one payment claimed cannot pay another; one without the option's reference is refused", async () => {
    const first = await ethOption()
    const hash = await send(first.buyer, transferOf(first.option))
    const paid = await confirm(wallet, first.payment.paymentId, {
      optionId: first.option.id,
      results: resultOf(hash)
    })
    expect(paid.status, paid.text).toBe(200)

    const second = await ethOption()
    const claimed = await confirm(wallet, second.payment.paymentId, {
      optionId: second.option.id,
      results: resultOf(hash)
    })
    expect(claimed.status, claimed.text).toBe(400)
    expect(claimed.body.message).toMatch(/not this option's transfer|another payment/)

    // The right value to the collector, but the data of another option: not this one's.
    const tx = transferOf(second.option)
    const unbound = await send(second.buyer, { ...tx, data: transferOf(first.option).data })
    const refused = await confirm(wallet, second.payment.paymentId, {
      optionId: second.option.id,
      results: resultOf(unbound)
    })
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.message).toMatch(/is not this option's transfer/)
    // Nothing was claimed: the payment still waits for its transfer, which pays it.
    expect((await viewOf(second.payment.paymentId)).status).toBe("requires_action")
    const own = await send(second.buyer, tx)
    const ok = await confirm(wallet, second.payment.paymentId, {
      optionId: second.option.id,
      results: resultOf(own)
    })
    expect(ok.status, ok.text).toBe(200)
    for (const id of [first.payment.paymentId, second.payment.paymentId]) {
      await eventually(async () => expect((await viewOf(id)).settlement?.settled).toBe(true), {
        timeoutMs: 30_000
      })
    }
  })

  it("a transfer of another value fails its payment (transaction_mismatch); what arrived is returnable", async () => {
    // Blocks from the next one on: the current one may hold an earlier test's settlement.
    const startBlock = (await chain().getBlockNumber()) + 1n
    const { buyer, payment, option } = await ethOption()
    const tx = transferOf(option)
    const wrong = tx.value + 1n
    const hash = await send(buyer, { ...tx, value: wrong })
    const confirmed = await confirm(wallet, payment.paymentId, {
      optionId: option.id,
      results: resultOf(hash)
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    const view = await eventually(
      async () => {
        const v = await viewOf(payment.paymentId)
        expect(v.status).toBe("failed")
        return v
      },
      { timeoutMs: 30_000 }
    )
    expect(view.failureCode).toBe("transaction_mismatch")
    expect(view.settlement).toBeUndefined()
    const returnable = await server.runEngine(
      Effect.flatMap(ChainJobStore, (s) => s.returnable(100))
    )
    expect(returnable.filter((f) => f.txHash === hash)).toEqual([
      expect.objectContaining({
        paymentId: payment.paymentId,
        asset: ETH,
        from: buyer.address,
        value: wrong,
        reason: "transaction_mismatch"
      })
    ])
    // The ledger counts it among what the collector owes.
    const owed = await server.runEngine(Effect.flatMap(ChainJobStore, (s) => s.owedIn(ETH)))
    expect(owed).toBeGreaterThanOrEqual(wrong)
    // Nothing was settled to the merchant for it.
    expect(
      (await coinTransfers(server.sandbox.collector.address, destination, startBlock)).length
    ).toBe(0)
  })
})

/**
 * The coin is sent before the confirm: a confirm that reaches the engine after the option's
 * price lock still pays when the transfer was mined within the lock, and only then.
 */
describe("a native transfer confirmed after its option's price lock", () => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer("sqlite", { quoteLockMs: Option.some(2_000) })
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    const destination = privateKeyToAccount(generatePrivateKey()).address
    merchantId = (
      await merchantSettledIn(partner, [{ asset: ETH, destination: `eip155:31337:${destination}` }])
    ).merchantId
  }, 120_000)

  afterAll(() => server?.stop())

  const offer = async () => {
    const buyer = newBuyer()
    await server.sandbox.faucet(buyer.address, 10n ** 18n, "ETH").pipe(Effect.runPromise)
    const payment = await paymentFor(partner, merchantId, "1050")
    const offered = await options(wallet, payment.paymentId, [buyer.account])
    expect(offered.status, offered.text).toBe(200)
    const option = offered.body.options[0]
    const tx = JSON.parse(option.actions[0].data.params[0])
    const send = async () => {
      const hash = await createWalletClient({
        account: privateKeyToAccount(buyer.key),
        chain: server.sandbox.chain,
        transport: server.sandbox.transport
      }).sendTransaction({ to: tx.to, value: hexToBigInt(tx.value), data: tx.data })
      await server.sandbox.publicClient.waitForTransactionReceipt({ hash })
      return hash
    }
    /** Until the lock has ended by the engine's clock (the option's expiresAt, in seconds). */
    const lockEnded = () =>
      eventually(async () => expect(Date.now()).toBeGreaterThan(option.expiresAt * 1000 + 50), {
        timeoutMs: 10_000
      })
    const confirmWith = (hash: Hex) =>
      confirm(wallet, payment.paymentId, { optionId: option.id, results: resultOf(hash) })
    return { payment, option, send, lockEnded, confirmWith }
  }
  const resultOf = (hash: Hex) => [{ type: "walletRpc", data: [hash] }]

  it("mined within the lock: paid", async () => {
    const { payment, send, lockEnded, confirmWith } = await offer()
    const hash = await send()
    await lockEnded()
    const confirmed = await confirmWith(hash)
    expect(confirmed.status, confirmed.text).toBe(200)
    await eventually(
      async () => {
        const view = await partner.get(`/v1/payments/${payment.paymentId}`)
        expect(view.body.status).toBe("succeeded")
      },
      { timeoutMs: 30_000 }
    )
  })

  it("mined after the lock: quote_expired, nothing claimed", async () => {
    const { payment, send, lockEnded, confirmWith } = await offer()
    await lockEnded()
    const hash = await send()
    const confirmed = await confirmWith(hash)
    expect(confirmed.status, confirmed.text).toBe(409)
    expect(confirmed.body.code).toBe("quote_expired")
    const view = await partner.get(`/v1/payments/${payment.paymentId}`)
    expect(view.body.status).toBe("requires_action")
  })
})
