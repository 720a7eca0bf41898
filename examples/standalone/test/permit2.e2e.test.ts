/**
 * Any token, priced live (issue 39), over HTTP on the real server and its
 * sandbox chain, on SQLite and on PostgreSQL: USDT (no EIP-3009, no return
 * values) paid through Permit2 after the buyer's approval; DAI with an
 * allowance already in place (the one signature action); a short non-zero
 * allowance reset first; a permit replayed for another payment refused; a
 * euro payment paid in USDC at the chain's EUR/USD feed, a moved feed
 * changing the next quote and not an option already offered; and a stale
 * round leaving the option out. Every payment counts the transfers and the
 * balances it moved.
 */
import { payWithWallet, signTypedDataJson } from "@pay/sandbox"
import type { PriceFeedPair } from "@pay/sandbox-chain"
import { Effect } from "effect"
import {
  type Address,
  createWalletClient,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  maxUint256
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
  gatewayStatus,
  MERCHANT_DESTINATION,
  newBuyer,
  options,
  paymentFor,
  walletClient
} from "./gateway-support.js"
import {
  erc20,
  everyTokenMerchant,
  PERMIT2,
  tokenBalance,
  tokenOf,
  tokenTransfers
} from "./permit2-support.js"

const encodeApprove = (amount: bigint) =>
  encodeFunctionData({ abi: erc20, functionName: "approve", args: [PERMIT2, amount] })

describe.each(STORES)("Permit2 tokens and live prices on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let walletKey: string
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    const app = await walletClient(server)
    wallet = app.api
    walletKey = app.apiKey
    // Settled in every sandbox token, so each buyer is offered all three.
    merchantId = await everyTokenMerchant(partner, server)
  }, 120_000)

  afterAll(() => server?.stop())

  const token = (symbol: string) => tokenOf(server, symbol)
  const balanceOf = (symbol: string, owner: Address) => tokenBalance(server, symbol, owner)
  const transfers = (symbol: string, args: { from?: Address; to?: Address }) =>
    tokenTransfers(server, symbol, args)
  /** The faucet route, for a token (and test ether for the buyer's own transactions). */
  const faucet = async (buyer: Buyer, symbol: string, amount: bigint) => {
    const response = await fetch(`${server.baseUrl}/sandbox/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        account: buyer.account,
        amount: amount.toString(),
        token: symbol,
        gas: true
      })
    })
    expect(response.status, await response.clone().text()).toBe(200)
  }
  /** Sends a transaction from the buyer's key, as its wallet would; its hash. */
  const send = (buyer: Buyer, tx: { to: Address; data: Hex; value?: bigint }) =>
    createWalletClient({
      account: privateKeyToAccount(buyer.key),
      chain: server.sandbox.chain,
      transport: server.sandbox.transport
    }).sendTransaction(tx)
  const approve = async (buyer: Buyer, symbol: string, amount: bigint) => {
    const hash = await send(buyer, {
      to: token(symbol).address,
      data: encodeApprove(amount)
    })
    await server.sandbox.publicClient.waitForTransactionReceipt({ hash })
  }
  const optionIn = (offered: Json, symbol: string) => {
    const option = offered.options.find((o: Json) => o.amount.unit.endsWith(token(symbol).asset))
    expect(option, `an option in ${symbol}: ${JSON.stringify(offered.options)}`).toBeDefined()
    return option
  }
  const offeredTo = async (paymentId: string, buyer: Buyer) => {
    const offered = await options(wallet, paymentId, [buyer.account])
    expect(offered.status, offered.text).toBe(200)
    return offered.body
  }
  /** The wallet's results for an option's actions: each approval sent, then the signature. */
  const walletResults = async (buyer: Buyer, actions: ReadonlyArray<Json>) => {
    const results = []
    for (const action of actions) {
      if (action.data.method === "eth_sendTransaction") {
        // As on the wire (EIP-1193: numbers in hex), sent as the buyer's wallet would.
        const tx = JSON.parse(action.data.params[0])
        expect(tx.chainId).toBe("0x7a69")
        const hash = await send(buyer, { to: tx.to, data: tx.data, value: hexToBigInt(tx.value) })
        results.push({ type: "walletRpc", data: [hash] })
      } else {
        const signature = await signTypedDataJson(buyer.key, action.data.params[1])
        results.push({ type: "walletRpc", data: [signature] })
      }
    }
    return results
  }
  const settled = (paymentId: string) =>
    eventually(
      async () => {
        const view = await partner.get(`/v1/payments/${paymentId}`)
        expect(view.body.status).toBe("succeeded")
        expect(view.body.settlement?.settled, JSON.stringify(view.body.settlement)).toBe(true)
        return view.body
      },
      { timeoutMs: 30_000 }
    )
  const setPrice = (
    pair: PriceFeedPair,
    answer: bigint,
    round?: { startedAt: bigint; updatedAt: bigint }
  ) => Effect.runPromise(server.sandbox.setPrice(pair, answer, round))

  it("USDT: the buyer approves Permit2, signs the permit; its amount moves once and is settled", async () => {
    const buyer = newBuyer()
    await faucet(buyer, "USDT", 50_000_000n)
    const destinationBefore = await balanceOf("USDT", MERCHANT_DESTINATION)
    const payment = await paymentFor(partner, merchantId, "1050")
    const offered = await offeredTo(payment.paymentId, buyer)
    // Every token the merchant settles in: USDC by EIP-3009, USDT and DAI through Permit2.
    expect(offered.options).toHaveLength(3)
    const option = optionIn(offered, "USDT")
    expect(option.amount.value).toBe("10500000")
    const [approval, permit] = option.actions
    expect(option.actions).toHaveLength(2)
    expect(approval.data.method).toBe("eth_sendTransaction")
    const tx = JSON.parse(approval.data.params[0])
    expect(tx.from).toBe(buyer.address)
    expect(tx.to).toBe(token("USDT").address)
    expect(decodeFunctionData({ abi: erc20, data: tx.data }).args).toEqual([PERMIT2, maxUint256])
    expect(permit.data.method).toBe("eth_signTypedData_v4")
    const typed = JSON.parse(permit.data.params[1])
    expect(typed.primaryType).toBe("PermitWitnessTransferFrom")
    expect(typed.domain).toEqual({ name: "Permit2", chainId: "0x7a69", verifyingContract: PERMIT2 })
    expect(typed.message.witness).toEqual({ paymentId: payment.paymentId, optionId: option.id })
    expect(typed.message.spender).toBe(server.sandbox.collector.address)
    expect(hexToBigInt(typed.message.permitted.amount)).toBe(10_500_000n)

    const results = await walletResults(buyer, option.actions)
    const confirmed = await confirm(wallet, payment.paymentId, { optionId: option.id, results })
    expect(confirmed.status, confirmed.text).toBe(200)
    const view = await settled(payment.paymentId)
    expect(view.tokenAmount ?? view.amount).toBeDefined()

    expect(await balanceOf("USDT", buyer.address)).toBe(50_000_000n - 10_500_000n)
    expect((await balanceOf("USDT", MERCHANT_DESTINATION)) - destinationBefore).toBe(10_500_000n)
    const out = await transfers("USDT", { from: buyer.address })
    expect(out).toHaveLength(1)
    expect(out[0]!.args).toMatchObject({ to: server.sandbox.collector.address, value: 10_500_000n })
    // Nothing else of the buyer's moved: no USDC, no DAI.
    expect(await transfers("USDC", { from: buyer.address })).toHaveLength(0)
    expect(await transfers("DAI", { from: buyer.address })).toHaveLength(0)
  })

  it("DAI with an allowance already in place: the one signature action, 18 decimals exactly", async () => {
    const buyer = newBuyer()
    await faucet(buyer, "DAI", 20n * 10n ** 18n)
    await approve(buyer, "DAI", maxUint256)
    const payment = await paymentFor(partner, merchantId, "1050")
    const option = optionIn(await offeredTo(payment.paymentId, buyer), "DAI")
    expect(option.amount.value).toBe((105n * 10n ** 17n).toString())
    expect(option.actions.map((a: Json) => a.data.method)).toEqual(["eth_signTypedData_v4"])
    const results = await walletResults(buyer, option.actions)
    const confirmed = await confirm(wallet, payment.paymentId, { optionId: option.id, results })
    expect(confirmed.status, confirmed.text).toBe(200)
    await settled(payment.paymentId)
    expect(await balanceOf("DAI", buyer.address)).toBe(20n * 10n ** 18n - 105n * 10n ** 17n)
    expect(await transfers("DAI", { from: buyer.address })).toHaveLength(1)
  })

  it("actions fetched after the approval ask for the permit alone, and it pays with the signature alone", async () => {
    const buyer = newBuyer()
    await faucet(buyer, "USDT", 20_000_000n)
    const payment = await paymentFor(partner, merchantId, "1050")
    const option = optionIn(await offeredTo(payment.paymentId, buyer), "USDT")
    expect(option.actions).toHaveLength(2)
    // The wallet approves, then fetches the actions again at once: the allowance is read
    // afresh, so USDT is not asked for a second approval (which it would refuse).
    await approve(buyer, "USDT", maxUint256)
    const fetched = await wallet.request("POST", `/v1/gateway/payment/${payment.paymentId}/fetch`, {
      body: { optionId: option.id, data: "" }
    })
    expect(fetched.status, fetched.text).toBe(200)
    expect(fetched.body.actions.map((a: Json) => a.data.method)).toEqual(["eth_signTypedData_v4"])
    const results = await walletResults(buyer, fetched.body.actions)
    const confirmed = await confirm(wallet, payment.paymentId, { optionId: option.id, results })
    expect(confirmed.status, confirmed.text).toBe(200)
    await settled(payment.paymentId)
    expect(await transfers("USDT", { from: buyer.address })).toHaveLength(1)
  })

  it("the sandbox wallet pays in DAI: its faucet gives whole tokens in DAI's 18 decimals, it approves, then signs", async () => {
    const payment = await paymentFor(partner, merchantId, "1050")
    const lines: Array<string> = []
    const outcome = await payWithWallet({
      engineUrl: server.baseUrl,
      payment: payment.paymentId,
      apiKey: walletKey,
      token: "DAI",
      faucetTokens: 20n,
      log: (line) => lines.push(line)
    })
    expect(outcome.status, lines.join("\n")).toBe("succeeded")
    const buyer = outcome.buyer.slice(outcome.buyer.lastIndexOf(":") + 1) as Address
    expect(lines.some((l) => l.startsWith("approval sent: 0x"))).toBe(true)
    expect(await balanceOf("DAI", buyer)).toBe(20n * 10n ** 18n - 105n * 10n ** 17n)
  })

  it("a short non-zero allowance: approve(0), then approve(max), then the permit", async () => {
    const buyer = newBuyer()
    await faucet(buyer, "USDT", 20_000_000n)
    await approve(buyer, "USDT", 1n)
    const payment = await paymentFor(partner, merchantId, "1050")
    const option = optionIn(await offeredTo(payment.paymentId, buyer), "USDT")
    expect(option.actions.map((a: Json) => a.data.method)).toEqual([
      "eth_sendTransaction",
      "eth_sendTransaction",
      "eth_signTypedData_v4"
    ])
    const amounts = option.actions
      .slice(0, 2)
      .map(
        (a: Json) =>
          decodeFunctionData({ abi: erc20, data: JSON.parse(a.data.params[0]).data }).args[1]
      )
    expect(amounts).toEqual([0n, maxUint256])
    const results = await walletResults(buyer, option.actions)
    const confirmed = await confirm(wallet, payment.paymentId, { optionId: option.id, results })
    expect(confirmed.status, confirmed.text).toBe(200)
    await settled(payment.paymentId)
    expect(await balanceOf("USDT", buyer.address)).toBe(20_000_000n - 10_500_000n)
  })

  it("ranks the options for what the buyer holds: affordable first, no approval before an approval", async () => {
    const buyer = newBuyer()
    // DAI with an allowance, USDT without one, no USDC at all.
    await faucet(buyer, "DAI", 20n * 10n ** 18n)
    await approve(buyer, "DAI", maxUint256)
    await faucet(buyer, "USDT", 20_000_000n)
    const payment = await paymentFor(partner, merchantId, "1050")
    const offered = await offeredTo(payment.paymentId, buyer)
    const symbolOf = (o: Json) =>
      server.sandbox.tokens.find((t) => o.amount.unit.endsWith(t.asset))?.symbol
    expect(offered.options.map((o: Json) => [symbolOf(o), o.affordable, o.actions.length])).toEqual(
      [
        ["DAI", true, 1],
        ["USDT", true, 2],
        ["USDC", false, 1]
      ]
    )
  })

  it("a permit replayed for another payment is refused, and nothing moves but the one paid", async () => {
    const buyer = newBuyer()
    await faucet(buyer, "USDT", 30_000_000n)
    await approve(buyer, "USDT", maxUint256)
    const first = await paymentFor(partner, merchantId, "1050")
    const second = await paymentFor(partner, merchantId, "1050")
    const firstOption = optionIn(await offeredTo(first.paymentId, buyer), "USDT")
    const secondOption = optionIn(await offeredTo(second.paymentId, buyer), "USDT")
    const results = await walletResults(buyer, firstOption.actions)
    // The same amount, the same buyer and spender: only the witness and nonce differ.
    const replayed = await confirm(wallet, second.paymentId, {
      optionId: secondOption.id,
      results
    })
    expect(replayed.status, replayed.text).toBe(400)
    expect(replayed.body.issues[0].field).toBe("results.0.data.0")
    expect((await gatewayStatus(wallet, second.paymentId)).body.status).toBe("requires_action")
    const paid = await confirm(wallet, first.paymentId, { optionId: firstOption.id, results })
    expect(paid.status, paid.text).toBe(200)
    await settled(first.paymentId)
    expect(await transfers("USDT", { from: buyer.address })).toHaveLength(1)
    expect(await balanceOf("USDT", buyer.address)).toBe(30_000_000n - 10_500_000n)
  })

  it("prices euros in USDC at the EUR/USD feed; a moved feed changes the next quote, not the option offered", async () => {
    const buyer = newBuyer()
    await faucet(buyer, "USDC", 50_000_000n)
    const eur = async () =>
      (
        await paymentFor(partner, merchantId, "1000", {
          amount: { unit: "iso4217/EUR", value: "1000" }
        })
      ).paymentId as string
    const early = await eur()
    const locked = optionIn(await offeredTo(early, buyer), "USDC")
    // 10.00 EUR at the feed's 1.08.
    expect(locked.amount.value).toBe("10800000")
    await setPrice("EUR/USD", 110_000_000n)
    // Read again once the engine's few-second cache of the feed has passed.
    await eventually(
      async () => {
        const later = optionIn(await offeredTo(await eur(), buyer), "USDC")
        expect(later.amount.value).toBe("11000000")
      },
      { timeoutMs: 30_000, intervalMs: 500 }
    )
    const results = await walletResults(buyer, locked.actions)
    const confirmed = await confirm(wallet, early, { optionId: locked.id, results })
    expect(confirmed.status, confirmed.text).toBe(200)
    const view = await settled(early)
    expect(view.tokenAmount?.value ?? JSON.stringify(view)).toBe("10800000")
    expect(await balanceOf("USDC", buyer.address)).toBe(50_000_000n - 10_800_000n)
    await setPrice("EUR/USD", 108_000_000n)
  })

  it("a stale round leaves the option out (no_price), and a fresh one brings it back", async () => {
    const buyer = newBuyer()
    const eur = async () =>
      (
        await paymentFor(partner, merchantId, "1000", {
          amount: { unit: "iso4217/EUR", value: "1000" }
        })
      ).paymentId as string
    const head = await server.sandbox.publicClient.getBlock()
    const threeDaysAgo = head.timestamp - 3n * 86_400n
    await setPrice("EUR/USD", 108_000_000n, { startedAt: threeDaysAgo, updatedAt: threeDaysAgo })
    await eventually(
      async () => {
        const offered = await offeredTo(await eur(), buyer)
        expect(offered.options).toEqual([])
        expect(offered.noOptionsReason?.code).toBe("no_price")
      },
      { timeoutMs: 30_000, intervalMs: 500 }
    )
    const metrics = await partner.get("/metrics", { key: null })
    expect(metrics.text).toMatch(
      /pay_price_refusals_total\{[^}]*pair="EUR\/USD"[^}]*reason="stale"[^}]*\} [1-9]/
    )
    // A USD payment needs no feed: still offered in every token.
    expect(
      (await offeredTo((await paymentFor(partner, merchantId, "1050")).paymentId, buyer)).options
    ).toHaveLength(3)
    await setPrice("EUR/USD", 108_000_000n)
    await eventually(
      async () => {
        expect(optionIn(await offeredTo(await eur(), buyer), "USDC").amount.value).toBe("10800000")
      },
      { timeoutMs: 30_000, intervalMs: 500 }
    )
  })
})
