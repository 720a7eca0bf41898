/**
 * `createTestEngine`: the engine `createPaymentEngine` makes, over the
 * in-memory stores, a scripted chain and a clock the test moves, with a
 * scripted buyer and webhooks captured. Nothing native, nothing on the
 * network: a platform's unit tests run its "order paid" code against the
 * engine's real routes, state machine, chain work and webhook delivery. With
 * `eth`, the network's own coin is offered too, paid by a transfer the
 * scripted buyer sends onto the scripted chain.
 */
import {
  type Caip2,
  ChainWork,
  defaultNetworks,
  defaultTokens,
  type EmbeddedPaymentEngine,
  embedPaymentEngine,
  isFinal,
  type Payment,
  type PaymentEngineSettings,
  type PaymentId,
  Payments,
  Prices,
  parseRate,
  TokenRegistry,
  WebhookSigningTime,
  WebhookWork
} from "@pay/core"
import { Effect, Either } from "effect"
import type { Address, Hex } from "viem"
import { type CapturedDelivery, CapturedWebhooks, type WebhookHandler } from "./CapturedWebhooks.js"
import { ControlledClock } from "./ControlledClock.js"
import { openMemoryStorage } from "./MemoryStorage.js"
import { type BuyerKey, gatewayOf, signPayment, type WalletTransaction } from "./ScriptedBuyer.js"
import { ScriptedChain } from "./ScriptedChain.js"

/** Base Sepolia and its USDC: a test network, so the engine runs in test mode. */
const TEST_CHAIN_ID = "eip155:84532" as Caip2
const TEST_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Address

/** How far a scripted step moves time at most before it gives up (test time). */
const STEP_WITHIN_MS = 10 * 60_000

export interface TestEngineOptions {
  /**
   * The engine's settings, as `createPaymentEngine` takes them (fees, payment
   * lifetimes, webhook retries, rate limits…). `publicUrl` defaults to
   * `http://pay.test`; logging to none.
   */
  readonly settings?: Partial<PaymentEngineSettings>
  /** Where the clock starts: a Date or milliseconds since the epoch. Default: now. */
  readonly startAt?: Date | number
  /**
   * The platform's webhook receiver, given each delivery as a `Request`
   * (signed); its `Response` is what the engine sees (a 500 is retried).
   * Default: every delivery answered 200, kept for `deliveries()`.
   */
  readonly webhooks?: WebhookHandler
  /**
   * The network's own coin beside its USDC: ETH (`network.eth`), offered for
   * a merchant settled in it, priced at `usdPrice` USD an ETH ("3000" unless
   * given), paid by a transfer the buyer's wallet sends (`pay(id, { token:
   * "ETH" })`). The chain then counts the coin: the collector holds 1 ETH of
   * gas money, and every transaction burns gas. Default: off, USDC only.
   */
  readonly eth?: boolean | { readonly usdPrice?: string }
}

export interface PayOptions {
  /** The token to pay with: its symbol (`USDC`) or CAIP-19 asset. Default: the first offered. */
  readonly token?: string
  /** The buyer's private key. Default: a new key each payment. */
  readonly account?: BuyerKey
  /**
   * Mint the option's amount to the buyer first, as a funded wallet (for an
   * ETH option, the coin its transfer may cost: value and gas). Default true.
   */
  readonly fund?: boolean
  /**
   * An ETH option: the transaction the buyer's wallet sends instead of the
   * one asked, given that one (another `value`: the payment fails
   * `transaction_mismatch`, and what arrived is kept returnable).
   */
  readonly transfer?: (asked: WalletTransaction) => WalletTransaction
}

export interface ScriptedPayment {
  readonly paymentId: string
  /** The status it ended in: `succeeded`, or `failed` with `failureCode`. */
  readonly status: string
  readonly failureCode: string | null
  /** The buyer's CAIP-10 account. */
  readonly buyer: string
  /** The collection's transaction hash, once mined. */
  readonly txId: string | null
}

export interface TestEngine extends EmbeddedPaymentEngine {
  /** The buyer pays: options, signature, confirm, the chain's success; resolves once final. */
  readonly pay: (paymentId: string, options?: PayOptions) => Promise<ScriptedPayment>
  /** The buyer cancels in the wallet (`cancelled`, `cancelled_by_user`). */
  readonly decline: (paymentId: string) => Promise<void>
  /** The buyer pays and the chain reverts the transfer: resolves once `failed`. */
  readonly failOnChain: (paymentId: string, options?: PayOptions) => Promise<ScriptedPayment>
  /** Moves the clock on: expiry, webhook retries, settlement; everything due runs in order. */
  readonly advance: (ms: number) => Promise<void>
  /** Runs a succeeded payment's settlement to its end; the payment's settlement then. */
  readonly settle: (paymentId: string) => Promise<Payment["settlement"]>
  /** The clock's time. */
  readonly now: () => Date
  /** Every webhook delivery so far (with the default receiver, or the handler's answers). */
  readonly deliveries: () => ReadonlyArray<CapturedDelivery>
  /** Forgets the deliveries captured so far. */
  readonly clearDeliveries: () => void
  /** Waits until the engine has done everything due at the current instant. */
  readonly settled: () => Promise<void>
  /** The scripted chain, for what the helpers above do not script (a node down, a balance). */
  readonly chain: ScriptedChain
  /** The network the chain is (`eip155:84532`, Base Sepolia), its USDC, and its ETH with `eth`. */
  readonly network: { readonly chainId: string; readonly usdc: string; readonly eth?: string }
}

const startOf = (startAt: Date | number | undefined): number => {
  const ms = startAt instanceof Date ? startAt.getTime() : (startAt ?? Date.now())
  if (!Number.isSafeInteger(ms))
    throw new RangeError(`startAt must be a date; got ${String(startAt)}`)
  return ms
}

/** ETH's price in USD, as `eth` gives it; undefined without `eth`. */
const ethPriceOf = (eth: TestEngineOptions["eth"]): string | undefined => {
  if (eth === undefined || eth === false) return undefined
  const price = eth === true ? undefined : eth.usdPrice
  if (price === undefined) return "3000"
  if (Either.isLeft(parseRate(price))) {
    throw new RangeError(
      `eth.usdPrice must be a positive decimal number such as "3000"; got ${price}`
    )
  }
  return price
}

export const createTestEngine = async (options: TestEngineOptions = {}): Promise<TestEngine> => {
  const clock = new ControlledClock(startOf(options.startAt))
  const ethPrice = ethPriceOf(options.eth)
  const chain = new ScriptedChain({
    chainId: TEST_CHAIN_ID,
    token: TEST_USDC,
    name: "Base Sepolia (scripted)",
    testnet: true,
    now: () => clock.now(),
    pollIntervalMs: 1_000,
    ...(ethPrice === undefined ? {} : { native: true })
  })
  const eth = chain.nativeAsset
  // ETH named in amounts' displays, and priced: the default registry and rates know neither.
  const forEth =
    eth === undefined || ethPrice === undefined
      ? {}
      : {
          tokens: TokenRegistry.layer(defaultNetworks, [
            ...defaultTokens,
            { asset: eth, symbol: "ETH", name: "Ether", decimals: 18, iconUrl: null }
          ]),
          prices: Prices.fromTable({ "ETH/USD": Either.getOrThrow(parseRate(ethPrice)) })
        }
  const webhooks = new CapturedWebhooks(clock, options.webhooks)
  const storage = openMemoryStorage()
  const settings = options.settings ?? {}
  const engine = await embedPaymentEngine(
    {
      publicUrl: "http://pay.test",
      logging: { level: "none" },
      // Polls and the sweep's period are the fallback of what the clock does here
      // (it stops where stored work falls due and wakes the loops): sparse, so
      // moving the clock by hours takes few steps.
      expirySweepMs: 3_600_000,
      ...settings,
      chainWork: { pollMs: 60_000, ...settings.chainWork },
      webhookDelivery: { pollMs: 60_000, ...settings.webhookDelivery },
      storage: storage.layer,
      chain: chain.layer,
      webhookSender: webhooks.layer,
      ...forEth
    },
    // Signatures stamped with the real time, so the platform's check of the stamp passes.
    (effect) =>
      clock.within(Effect.provideService(effect, WebhookSigningTime, { of: () => new Date() }))
  )
  const { context: _, run, ...embedded } = engine
  const paymentOf = async (id: string): Promise<Payment> => {
    const found = await run(Effect.either(Payments.use((p) => p.find(id as PaymentId))))
    if (found._tag === "Left") throw new Error(`no payment ${id} in this test engine`)
    return found.right
  }
  clock.watch({
    underWay: () => storage.deliveriesClaimed() > 0,
    nextDueAt: storage.nextDueAt,
    wake: () =>
      run(
        Effect.all(
          [
            // The sweep's own pass, at the instant a payment's time runs out.
            Payments.use((p) => p.sweepExpired),
            ChainWork.use((w) => w.wake),
            WebhookWork.use((w) => w.wake)
          ],
          { discard: true }
        )
      )
  })

  const wallet = await engine.walletApps.create({ name: "Test wallet" })
  const origin = `http://pay.test${engine.basePath}`
  const gateway = gatewayOf(engine.fetch, origin, wallet.apiKey)

  /** Moves the clock until the payment is final, then lets its webhooks go out. */
  const finalOf = async (paymentId: string, buyer: string): Promise<ScriptedPayment> => {
    await clock.until(
      async () => isFinal((await paymentOf(paymentId)).status),
      STEP_WITHIN_MS,
      `payment ${paymentId} did not reach a final status`
    )
    const payment = await paymentOf(paymentId)
    return {
      paymentId,
      status: payment.status,
      failureCode: payment.failureCode ?? null,
      buyer,
      txId: payment.txId ?? null
    }
  }

  const payThrough = async (
    paymentId: string,
    given: PayOptions,
    onChain: "succeeds" | "reverts"
  ): Promise<ScriptedPayment> => {
    await clock.settled()
    /** The wallet sends an ETH option's transfer (funded first): pooled, mined after the confirm. */
    const send = (asked: WalletTransaction): Hex => {
      const tx = given.transfer?.(asked) ?? asked
      if (given.fund !== false) chain.mintCoin(tx.from, chain.sendCost(tx))
      const hash = chain.sendTransaction(tx)
      if (onChain === "reverts") {
        const before = chain.revertIf
        chain.revertIf = (t) => t.hash === hash || before(t)
      }
      return hash
    }
    const signed = await signPayment(gateway, paymentId, chain.chainId, { ...given, send })
    if (given.fund !== false && signed.asset !== eth) chain.mint(signed.address, signed.amount)
    if (onChain === "reverts") {
      const nonces = new Set(signed.authorizationNonces.map((n) => n.toLowerCase()))
      const before = chain.revertIf
      chain.revertIf = (tx) =>
        (tx.call.kind === "receive" && nonces.has(tx.call.authNonce.toLowerCase())) || before(tx)
    }
    try {
      await gateway.call(
        "POST",
        `/v1/gateway/payment/${encodeURIComponent(paymentId)}/confirm?maxPollMs=0`,
        {
          optionId: signed.optionId,
          results: signed.results
        }
      )
    } finally {
      // The buyer's transfer, confirmed while pending, is mined at the network's next block.
      if (signed.sent.length > 0) chain.mine()
    }
    return finalOf(paymentId, signed.buyer)
  }

  return {
    ...embedded,
    pay: (paymentId, given = {}) => payThrough(paymentId, given, "succeeds"),
    failOnChain: (paymentId, given = {}) => payThrough(paymentId, given, "reverts"),
    decline: async (paymentId) => {
      await clock.settled()
      await gateway.call("POST", `/v1/gateway/payment/${encodeURIComponent(paymentId)}/cancel`, {})
      await clock.settled()
    },
    advance: (ms) => clock.advance(ms),
    settle: async (paymentId) => {
      const payment = await paymentOf(paymentId)
      if (payment.status !== "succeeded") {
        throw new Error(
          `payment ${paymentId} is ${payment.status}: only a succeeded payment settles`
        )
      }
      const status = payment.settlement?.status
      // Held or without a destination: the operator's move (`pay payments settle`), then its run.
      if (status === "held" || status === "no_destination") {
        await run(ChainWork.use((w) => w.settleAgain(payment.id)))
      }
      await clock.until(
        async () => {
          const now = (await paymentOf(paymentId)).settlement?.status
          return now !== "pending" && now !== undefined
        },
        STEP_WITHIN_MS,
        `payment ${paymentId}'s settlement did not end`
      )
      return (await paymentOf(paymentId)).settlement
    },
    now: () => new Date(clock.now()),
    deliveries: () => webhooks.all(),
    clearDeliveries: () => webhooks.clear(),
    settled: () => clock.settled(),
    chain,
    network: { chainId: chain.chainId, usdc: chain.asset, ...(eth === undefined ? {} : { eth }) }
  }
}
