/**
 * The chain work's decisions, on the in-memory stores and a scripted EVM
 * (testing/ScriptedChain.ts), under the test clock: collect and settle jobs driven by
 * `drain` (or `runForever`, for two instances) while the test moves time on
 * and scripts the chain. Each case checks the payment, its fees and
 * settlement, the transfers the jobs recorded and what the chain mined.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ASSET,
  CHAIN_ID,
  COLLECTOR,
  DEPLOYER,
  type FakeTx,
  type MinedTx,
  makeMemoryStorage,
  ScriptedChain,
  type ScriptedChainOptions
} from "@pay/testing"
import { Clock, Context, Effect, Fiber, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { type Address, getAddress, type Hex, serializeErc6492Signature } from "viem"
import { partnerWithMerchant } from "../../test/PartnerFixture.js"
import { cliActor, embedderActor } from "../audit/AuditEntry.js"
import { AuditStore } from "../audit/AuditStore.js"
import { payEngineLayer } from "../Engine.js"
import { engineConfig, type PaymentEngineSettings } from "../EngineOptions.js"
import { EventStore } from "../events/Event.js"
import type { FeeSchedule } from "../fees/Fees.js"
import { Gateway } from "../gateway/Gateway.js"
import { checkReadiness } from "../health/Readiness.js"
import { StorageProbe } from "../health/StorageProbe.js"
import type { Partner } from "../identity/Partner.js"
import { Merchants } from "../merchants/Merchants.js"
import { Settlements } from "../merchants/Settlements.js"
import type { ChainJob, ChainJobKind, ChainTransfer } from "../payments/ChainJob.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import { GatewayStore, type OptionId, type PaymentOption } from "../payments/PaymentOption.js"
import { Payments } from "../payments/Payments.js"
import type { PayStorage } from "../Storage.js"
import type { Caip10 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { makeIdBody } from "../shared/Ids.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { ChainWork, newChainJob } from "./ChainWork.js"

/** The chain work's settings as an embedder gives them. */
type ChainWorkGiven = NonNullable<PaymentEngineSettings["chainWork"]>

const USD = { kind: "fiat", currency: findCurrency("USD")! } as const
const BUYER = "0x00000000000000000000000000000000000000B0" as Address
const MERCHANT = "0x00000000000000000000000000000000000000D0" as Address
const MERCHANT_ACCOUNT = `${CHAIN_ID}:${MERCHANT}` as Caip10
const SIGNATURE = `0x${"ab".repeat(65)}` as Hex
/** 10.50 USD paid in USDC (6 decimals); fees 0.10 + 1.5 % = 0.2575 USDC. */
const PAID = 10_500_000n
const FEES: FeeSchedule = { default: { fixed: "0.10", percentage: "1.5" } }
const FEE_TOTAL = 100_000n + 157_500n
const SETTLED = PAID - FEE_TOTAL
/** The authorization's end, in Unix seconds; the fake chain's head starts at 1000. */
const VALID_BEFORE = 5_000n
const GWEI = 1_000_000_000n

const POLL_MS = 100
const TICK_MS = 50

// ---------------------------------------------------------------------------
// The world: a fake chain and one memory storage, shared by every engine built on them

interface World {
  readonly fake: ScriptedChain
  readonly storage: Layer.Layer<PayStorage>
  readonly engine: (leaseMs?: number) => ReturnType<typeof engineOn>
}

const engineOn = (
  fake: ScriptedChain,
  storage: Layer.Layer<PayStorage>,
  fees: FeeSchedule,
  leaseMs: number,
  chainWork: ChainWorkGiven = {}
) =>
  Layer.merge(
    payEngineLayer({
      storage,
      config: engineConfig({
        publicUrl: "http://pay.test",
        maxBodyBytes: 1024,
        fees,
        chainWork: { pollMs: 50, leaseMs, ...chainWork }
      }),
      chain: fake.layer
    }),
    // The engine warns of every retry it makes: the cases below make many on purpose.
    Logger.minimumLogLevel(LogLevel.Error)
  )

const makeWorld = (
  options: { fees?: FeeSchedule; chain?: ScriptedChainOptions; chainWork?: ChainWorkGiven } = {}
): World => {
  const fake = new ScriptedChain({ pollIntervalMs: POLL_MS, ...options.chain })
  const storage = makeMemoryStorage()
  return {
    fake,
    storage,
    engine: (leaseMs = 1_000) =>
      engineOn(fake, storage, options.fees ?? FEES, leaseMs, options.chainWork)
  }
}

/** Every service of one engine instance. */
type EngineServices = Layer.Layer.Success<ReturnType<typeof engineOn>>

/** Every service of one engine instance, built. */
type EngineContext = Context.Context<Layer.Layer.Success<ReturnType<World["engine"]>>>

// ---------------------------------------------------------------------------
// A shop and its payments

interface Shop {
  readonly partner: Partner
  readonly merchantId: Payment["merchantId"]
}

const openShop = (withSettlement = true) =>
  Effect.gen(function* () {
    const { partner, merchant } = yield* partnerWithMerchant
    if (withSettlement) yield* addSettlement({ partner, merchantId: merchant.id })
    return { partner, merchantId: merchant.id } satisfies Shop
  })

const addSettlement = (shop: Shop) =>
  Effect.flatMap(Settlements, (s) =>
    s.register(
      shop.partner,
      shop.merchantId,
      [{ asset: ASSET, destination: MERCHANT_ACCOUNT }],
      embedderActor
    )
  )

let authNonces = 0

/**
 * A payment confirmed as the gateway would: its option stored, the buyer
 * funded, and the payment in `processing` with its collect job queued.
 */
const confirmedPayment = (
  fake: ScriptedChain,
  shop: Shop,
  validBefore = VALID_BEFORE,
  /** Queued as the gateway queues it: held by this process when its runner runs. */
  queuedHeld = false
) =>
  Effect.gen(function* () {
    const payments = yield* Payments
    const { payment, option } = yield* offeredPayment(fake, shop, validBefore)
    const at = new Date(yield* Clock.currentTimeMillis)
    const collect = newChainJob(
      payment.id,
      CHAIN_ID,
      { kind: "collect", optionId: option.id, signature: SIGNATURE },
      at
    )
    const start = (job: typeof collect) =>
      payments.transition(payment.id, {
        _tag: "StartProcessing",
        tokenAmount: { asset: ASSET, value: PAID },
        buyer: { account: option.account, providerName: "W", providerIcon: null },
        transaction: null,
        collect: job
      })
    if (queuedHeld) yield* (yield* ChainWork).queueHeld(collect, start)
    else yield* start(collect)
    return payment.id
  })

/** A payment with an option offered (stored) and the buyer funded, not yet confirmed. */
const offeredPayment = (
  fake: ScriptedChain,
  shop: Shop,
  validBefore = VALID_BEFORE,
  from: Address = BUYER
) =>
  Effect.gen(function* () {
    const payments = yield* Payments
    const payment = yield* payments.create(shop.partner, shop.merchantId, {
      referenceId: `r${++authNonces}`,
      amount: { unit: USD, value: 1050n }
    })
    const at = new Date(yield* Clock.currentTimeMillis)
    const option: PaymentOption = {
      id: `opt_${makeIdBody(at.getTime())}` as OptionId,
      paymentId: payment.id,
      account: `${CHAIN_ID}:${from}` as Caip10,
      asset: ASSET,
      method: "eip3009",
      approvals: [],
      rate: null,
      authorization: {
        from,
        to: COLLECTOR,
        value: PAID,
        validAfter: 0n,
        validBefore,
        nonce: `0x${authNonces.toString(16).padStart(64, "0")}` as Hex
      },
      expiresAt: new Date(at.getTime() + 60_000),
      quoted: true,
      collectData: false,
      clientId: null,
      createdAt: at
    }
    yield* (yield* GatewayStore).insertOptions([option])
    fake.mint(from, PAID)
    return { payment, option }
  })

// ---------------------------------------------------------------------------
// Moving time

interface Drive<R = never> {
  /** Stop (interrupting the work) once this holds. */
  readonly until?: Effect.Effect<boolean, never, R>
  /** Called after every tick, with the test time gone by since the start. */
  readonly onTick?: (elapsedMs: number) => void
  readonly maxMs?: number
}

/**
 * Runs `work` forked while moving the test clock on by ticks; true when it
 * ended (or `until` held) within `maxMs` of test time, false when it was cut off.
 */
const drive = <E, R, R2 = never>(work: Effect.Effect<unknown, E, R>, options: Drive<R2> = {}) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(work)
    const maxMs = options.maxMs ?? 30_000
    for (let elapsed = 0; elapsed <= maxMs; elapsed += TICK_MS) {
      if (options.until !== undefined && (yield* options.until)) {
        yield* Fiber.interrupt(fiber)
        return true
      }
      if (Option.isSome(yield* Fiber.poll(fiber))) {
        yield* Fiber.join(fiber)
        return true
      }
      yield* TestClock.adjust(TICK_MS)
      options.onTick?.(elapsed + TICK_MS)
    }
    yield* Fiber.interrupt(fiber)
    return false
  })

const drain = <R = never>(options: Drive<R> = {}) =>
  Effect.flatMap(ChainWork, (w) => drive(w.drain, options))

/** The background loop, until `until` holds: for work that waits longer than a drain should. */
const runUntil = <R>(until: Effect.Effect<boolean, never, R>, options: Omit<Drive, "until"> = {}) =>
  Effect.flatMap(ChainWork, (w) => drive(w.runForever, { ...options, until }))

// ---------------------------------------------------------------------------
// Reading what happened

const paymentOf = (id: PaymentId) => Effect.flatMap(Payments, (p) => p.find(id))

const jobOf = (id: PaymentId, kind: ChainJobKind) =>
  Effect.flatMap(ChainJobStore, (s) => s.findByPayment(id, kind)).pipe(
    Effect.map(Option.getOrUndefined)
  )

const transfersOf = (job: ChainJob | undefined) =>
  job === undefined
    ? Effect.succeed([] as ReadonlyArray<ChainTransfer>)
    : Effect.flatMap(ChainJobStore, (s) => s.transfersOf(job.id))

const minedOf = (fake: ScriptedChain, kind: FakeTx["call"]["kind"]): ReadonlyArray<MinedTx> =>
  fake.mined.filter((t) => t.call.kind === kind)

const isSettled = (id: PaymentId) =>
  Effect.orDie(Effect.map(paymentOf(id), (p) => p.settlement?.status === "settled"))

/** At least 12.5 % more: what a replacement must pay on both fees. */
const bumpedEnough = (next: bigint, previous: bigint) => next * 1000n >= previous * 1125n

// ---------------------------------------------------------------------------

describe("ChainWork", () => {
  it.effect("collects, succeeds with the schedule's fees, then settles the rest once", () => {
    const world = makeWorld()
    const { fake } = world
    return Effect.gen(function* () {
      const shop = yield* openShop()
      const id = yield* confirmedPayment(fake, shop)
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("succeeded")
      expect(payment.failureCode).toBeNull()
      expect(payment.fees).toEqual({ fixed: 100_000n, percentage: "1.5", total: FEE_TOTAL })

      const collect = yield* jobOf(id, "collect")
      const settle = yield* jobOf(id, "settle")
      expect(collect?.state).toBe("done")
      expect(settle?.state).toBe("done")
      const collected = yield* transfersOf(collect)
      const settled = yield* transfersOf(settle)
      expect(collected.map((t) => [t.purpose, t.nonce])).toEqual([["call", 0]])
      expect(settled.map((t) => [t.purpose, t.nonce])).toEqual([["call", 1]])
      expect(payment.txId).toBe(collected[0]!.hash)
      expect(payment.transaction).toEqual({ networkId: "8453", hash: collected[0]!.hash, nonce: 0 })
      expect(payment.settlement).toEqual({
        amount: SETTLED,
        status: "settled",
        destination: MERCHANT_ACCOUNT,
        txHash: settled[0]!.hash,
        settledAt: expect.any(Date)
      })

      expect(fake.mined.map((t) => [t.call.kind, t.hash, t.success])).toEqual([
        ["receive", collected[0]!.hash, true],
        ["transfer", settled[0]!.hash, true]
      ])
      expect(fake.mined[1]!.call).toEqual({ kind: "transfer", to: MERCHANT, value: SETTLED })
      expect(fake.balance(BUYER)).toBe(0n)
      expect(fake.balance(MERCHANT)).toBe(SETTLED)
      expect(fake.balance(COLLECTOR)).toBe(FEE_TOTAL)
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("fails a payment whose collect transaction reverted, and settles nothing", () => {
    const world = makeWorld()
    const { fake } = world
    fake.revertIf = (tx) => tx.call.kind === "receive"
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("failed")
      expect(payment.failureCode).toBe("transaction_reverted")
      expect(payment.fees).toBeNull()
      expect(payment.settlement).toBeNull()
      expect(yield* jobOf(id, "settle")).toBeUndefined()
      const collected = yield* transfersOf(yield* jobOf(id, "collect"))
      expect(collected).toHaveLength(1)
      expect(fake.mined.map((t) => [t.hash, t.success])).toEqual([[collected[0]!.hash, false]])
      expect(fake.balance(BUYER)).toBe(PAID)
      expect(fake.balance(COLLECTOR)).toBe(0n)
    }).pipe(Effect.provide(world.engine()))
  })

  describe("a call the token refuses before anything is sent", () => {
    for (const { title, expired, reason, failureCode } of [
      {
        title: "fails it reverted",
        expired: false,
        reason: "ERC20: transfer amount exceeds balance",
        failureCode: "transaction_reverted"
      },
      {
        // The account refused its own signature (a delegation switched since the confirm).
        title: "fails it signature_rejected when the token finds the signature invalid",
        expired: false,
        reason: "FiatTokenV2: invalid signature",
        failureCode: "signature_rejected"
      },
      {
        title: "fails it expired past validBefore",
        expired: true,
        reason: undefined,
        failureCode: "authorization_expired"
      }
    ] as const) {
      it.effect(title, () => {
        const world = makeWorld()
        const { fake } = world
        if (expired) fake.timestamp = VALID_BEFORE
        else fake.refuseReceive = () => reason
        return Effect.gen(function* () {
          const id = yield* confirmedPayment(fake, yield* openShop())
          expect(yield* drain()).toBe(true)

          const payment = yield* paymentOf(id)
          expect(payment.status).toBe("failed")
          expect(payment.failureCode).toBe(failureCode)
          expect(payment.transaction).toBeNull()
          const collect = yield* jobOf(id, "collect")
          expect(collect?.state).toBe("done")
          expect(collect?.nonce).toBeNull()
          expect(yield* transfersOf(collect)).toEqual([])
          expect(yield* jobOf(id, "settle")).toBeUndefined()
          expect(fake.calls.get("receiveCall")).toBe(1)
          expect(fake.signed).toEqual([])
          expect(fake.calls.get("broadcast")).toBeUndefined()
          expect(fake.mined).toEqual([])
        }).pipe(Effect.provide(world.engine()))
      })
    }
  })

  it.effect("gives up a nonce another transaction took and collects on a fresh one", () => {
    const world = makeWorld()
    const { fake } = world
    let taken: MinedTx | undefined
    // Another sender with the collector's key uses the nonce just before ours reaches the node.
    fake.onBroadcast = (tx) => {
      if (taken === undefined && tx.call.kind === "receive") taken = fake.mineExternal(tx.nonce)
    }
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("succeeded")
      const collect = yield* jobOf(id, "collect")
      // Both signed in one tick of the test clock: stores break that tie by hash, so by nonce here.
      const collected = [...(yield* transfersOf(collect))].sort((a, b) => a.nonce - b.nonce)
      expect(collected.map((t) => [t.purpose, t.nonce])).toEqual([
        ["call", 0],
        ["call", 1]
      ])
      const [old, fresh] = collected
      expect(taken?.nonce).toBe(0)
      expect(fake.stateOf(old!.hash)).toBe("Unknown")
      expect(fake.mined.some((t) => t.hash === old!.hash)).toBe(false)
      expect(payment.txId).toBe(fresh!.hash)
      expect(payment.transaction).toEqual({ networkId: "8453", hash: fresh!.hash, nonce: 1 })
      expect(fake.mined.map((t) => [t.call.kind, t.nonce, t.success])).toEqual([
        ["external", 0, true],
        ["receive", 1, true],
        ["transfer", 2, true]
      ])
      expect(payment.settlement?.status).toBe("settled")
      expect(fake.balance(BUYER)).toBe(0n)
      expect(fake.balance(MERCHANT)).toBe(SETTLED)
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect(
    "sends a reverted settlement again on a fresh nonce, and pays the merchant once",
    () => {
      const world = makeWorld()
      const { fake } = world
      let reverted = 0
      fake.revertIf = (tx) => tx.call.kind === "transfer" && reverted++ === 0
      return Effect.gen(function* () {
        const id = yield* confirmedPayment(fake, yield* openShop())
        expect(yield* drain()).toBe(true)

        const payment = yield* paymentOf(id)
        expect(payment.status).toBe("succeeded")
        const settle = yield* jobOf(id, "settle")
        expect(settle?.state).toBe("done")
        const settled = yield* transfersOf(settle)
        expect(settled.map((t) => [t.purpose, t.nonce])).toEqual([
          ["call", 1],
          ["call", 2]
        ])
        expect(minedOf(fake, "transfer").map((t) => [t.hash, t.success])).toEqual([
          [settled[0]!.hash, false],
          [settled[1]!.hash, true]
        ])
        expect(payment.settlement).toMatchObject({
          amount: SETTLED,
          status: "settled",
          destination: MERCHANT_ACCOUNT,
          txHash: settled[1]!.hash
        })
        expect(fake.balance(MERCHANT)).toBe(SETTLED)
        expect(fake.balance(COLLECTOR)).toBe(FEE_TOTAL)
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect("settles a payment whose fees take it all without any transfer", () => {
    const world = makeWorld({ fees: { default: { fixed: "25", percentage: "1.5" } } })
    const { fake } = world
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("succeeded")
      expect(payment.fees).toEqual({ fixed: PAID, percentage: "1.5", total: PAID })
      expect(payment.settlement).toEqual({
        amount: 0n,
        status: "settled",
        destination: MERCHANT_ACCOUNT,
        txHash: null,
        settledAt: expect.any(Date)
      })
      const settle = yield* jobOf(id, "settle")
      expect(settle?.state).toBe("done")
      expect(settle?.nonce).toBeNull()
      expect(yield* transfersOf(settle)).toEqual([])
      expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive"])
      expect(fake.calls.get("transferCall")).toBeUndefined()
      expect(fake.balance(COLLECTOR)).toBe(PAID)
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("keeps the funds without a destination, then settles them when asked again", () => {
    const world = makeWorld()
    const { fake } = world
    return Effect.gen(function* () {
      const shop = yield* openShop(false)
      const id = yield* confirmedPayment(fake, shop)
      expect(yield* drain()).toBe(true)

      const kept = yield* paymentOf(id)
      expect(kept.status).toBe("succeeded")
      expect(kept.settlement).toEqual({
        amount: SETTLED,
        status: "no_destination",
        destination: null,
        txHash: null,
        settledAt: null
      })
      const settle = yield* jobOf(id, "settle")
      expect(settle?.state).toBe("done")
      expect(yield* transfersOf(settle)).toEqual([])
      expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive"])
      expect(fake.balance(COLLECTOR)).toBe(PAID)

      yield* addSettlement(shop)
      const work = yield* ChainWork
      expect(yield* work.settleAgain(id)).toBe(true)
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      const settled = yield* transfersOf(yield* jobOf(id, "settle"))
      expect(settled.map((t) => [t.purpose, t.nonce])).toEqual([["call", 1]])
      expect(payment.settlement).toMatchObject({
        amount: SETTLED,
        status: "settled",
        destination: MERCHANT_ACCOUNT,
        txHash: settled[0]!.hash
      })
      expect(fake.balance(MERCHANT)).toBe(SETTLED)
      expect(yield* work.settleAgain(id)).toBe(false)

      // Each outcome written with its event: held, then settled when asked again.
      const events = yield* (yield* EventStore).list({
        partnerId: kept.partnerId,
        paymentId: id,
        limit: 10
      })
      expect(events.map((e) => e.type).reverse()).toEqual([
        "payment.processing",
        "payment.succeeded",
        "payment.settlement_held",
        "payment.settled"
      ])
      expect(JSON.parse(events[1]!.data).settlement).toMatchObject({ status: "no_destination" })
      expect(JSON.parse(events[0]!.data).settlement).toMatchObject({
        status: "settled",
        txHash: settled[0]!.hash
      })
    }).pipe(Effect.provide(world.engine()))
  })

  describe("a merchant no longer active", () => {
    const eventTypes = (payment: Payment) =>
      Effect.flatMap(EventStore, (store) =>
        store.list({ partnerId: payment.partnerId, paymentId: payment.id, limit: 10 })
      ).pipe(Effect.map((events) => [...events].reverse()))

    it.effect("the gateway refuses options, fetch and confirm: merchant_inactive", () => {
      const world = makeWorld()
      const { fake } = world
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const gateway = yield* Gateway
        const merchants = yield* Merchants
        const { payment, option } = yield* offeredPayment(fake, shop)
        const confirm = gateway.confirm(
          payment.id,
          { optionId: option.id, results: [{ type: "walletRpc", data: [SIGNATURE] }] },
          undefined
        )
        const refusals = Effect.all([
          Effect.flip(gateway.optionsFor(payment.id, [option.account])),
          Effect.flip(gateway.fetchActions(payment.id, option.id)),
          Effect.flip(confirm)
        ])
        for (const status of ["inactive", "suspended"] as const) {
          yield* merchants.setStatus(shop.merchantId, status)
          for (const refused of yield* refusals) {
            expect(refused).toMatchObject({
              _tag: "MerchantInactive",
              merchantId: shop.merchantId,
              status
            })
          }
        }
        // Active again: the wallet gets its actions once more.
        yield* merchants.setStatus(shop.merchantId, "active")
        expect(yield* gateway.fetchActions(payment.id, option.id)).toHaveLength(1)

        yield* merchants.remove(shop.partner, shop.merchantId)
        for (const refused of yield* refusals) {
          expect(refused).toMatchObject({ _tag: "MerchantInactive", status: "deleted" })
        }
        // The status still answers, and nothing moved.
        const { payment: seen } = yield* gateway.status(payment.id, 0)
        expect(seen.status).toBe("requires_action")
        expect(fake.mined).toEqual([])
      }).pipe(Effect.provide(world.engine()))
    })

    it.effect(
      "collects a payment already processing, holds its settlement, settles it once the merchant is active again",
      () => {
        const world = makeWorld()
        const { fake } = world
        return Effect.gen(function* () {
          const shop = yield* openShop()
          const merchants = yield* Merchants
          const work = yield* ChainWork
          const id = yield* confirmedPayment(fake, shop)
          yield* merchants.setStatus(shop.merchantId, "suspended")
          expect(yield* drain()).toBe(true)

          const held = yield* paymentOf(id)
          expect(held.status).toBe("succeeded")
          // Held with the destination in force when it succeeded: where it will be sent.
          expect(held.settlement).toEqual({
            amount: SETTLED,
            status: "held",
            destination: MERCHANT_ACCOUNT,
            txHash: null,
            settledAt: null
          })
          const settle = yield* jobOf(id, "settle")
          expect(settle?.state).toBe("done")
          expect(yield* transfersOf(settle)).toEqual([])
          // Exactly one collection, no settlement.
          expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive"])
          expect(fake.balance(COLLECTOR)).toBe(PAID)
          expect(fake.balance(MERCHANT)).toBe(0n)

          // Still not active: nothing to resume.
          yield* merchants.setStatus(shop.merchantId, "inactive")
          expect(yield* work.resumeHeld(shop.merchantId)).toBe(0)
          expect(yield* drain()).toBe(true)
          expect(fake.mined).toHaveLength(1)

          yield* merchants.setStatus(shop.merchantId, "active")
          expect(yield* work.resumeHeld(shop.merchantId)).toBe(1)
          // Queued again: no longer held, on its way.
          expect((yield* paymentOf(id)).settlement?.status).toBe("pending")
          // Queued and not yet run: a second resume (or the operator) leaves it alone.
          expect(yield* work.resumeHeld(shop.merchantId)).toBe(0)
          expect(yield* work.settleAgain(id)).toBe(false)
          expect(yield* drain()).toBe(true)

          const payment = yield* paymentOf(id)
          expect(payment.settlement).toMatchObject({
            amount: SETTLED,
            status: "settled",
            destination: MERCHANT_ACCOUNT
          })
          // Exactly one collection and one settlement.
          expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive", "transfer"])
          expect(fake.balance(MERCHANT)).toBe(SETTLED)
          expect(fake.balance(COLLECTOR)).toBe(FEE_TOTAL)
          expect(yield* work.resumeHeld(shop.merchantId)).toBe(0)

          const events = yield* eventTypes(payment)
          expect(events.map((e) => e.type)).toEqual([
            "payment.processing",
            "payment.succeeded",
            "payment.settlement_held",
            "payment.settled"
          ])
          expect(JSON.parse(events[2]!.data).settlement).toMatchObject({
            status: "held",
            settled: false
          })
        }).pipe(Effect.provide(world.engine()))
      }
    )

    it.effect(
      "a destination changed after the payment succeeded redirects none of its money: the settlement goes where it was due",
      () => {
        const world = makeWorld()
        const { fake } = world
        return Effect.gen(function* () {
          const shop = yield* openShop()
          const merchants = yield* Merchants
          const work = yield* ChainWork
          const id = yield* confirmedPayment(fake, shop)
          yield* merchants.setStatus(shop.merchantId, "suspended")
          expect(yield* drain()).toBe(true)
          expect((yield* paymentOf(id)).settlement?.status).toBe("held")

          // A key that can change settlements (a stolen one, say) points them elsewhere.
          const settlements = yield* Settlements
          const [current] = yield* settlements.list(shop.partner, shop.merchantId)
          const elsewhere = "0x00000000000000000000000000000000000000E1" as Address
          yield* settlements.changeDestination(
            shop.partner,
            shop.merchantId,
            current!.id,
            `${CHAIN_ID}:${elsewhere}` as Caip10,
            embedderActor
          )
          yield* merchants.setStatus(shop.merchantId, "active")
          expect(yield* work.resumeHeld(shop.merchantId)).toBe(1)
          expect(yield* drain()).toBe(true)

          expect((yield* paymentOf(id)).settlement).toMatchObject({
            status: "settled",
            destination: MERCHANT_ACCOUNT
          })
          expect(fake.balance(MERCHANT)).toBe(SETTLED)
          expect(fake.balance(elsewhere)).toBe(0n)
          expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive", "transfer"])

          // A payment that succeeds after the change settles to the new one.
          const next = yield* confirmedPayment(fake, shop)
          expect(yield* drain()).toBe(true)
          expect((yield* paymentOf(next)).settlement).toMatchObject({
            status: "settled",
            destination: `${CHAIN_ID}:${elsewhere}`
          })
          expect(fake.balance(elsewhere)).toBe(SETTLED)
        }).pipe(Effect.provide(world.engine()))
      }
    )

    it.effect(
      "an operator redirects a held settlement: sent to the destination given, the change audited",
      () => {
        const world = makeWorld()
        const { fake } = world
        return Effect.gen(function* () {
          const shop = yield* openShop()
          const work = yield* ChainWork
          const id = yield* confirmedPayment(fake, shop)
          yield* (yield* Merchants).setStatus(shop.merchantId, "suspended")
          expect(yield* drain()).toBe(true)
          expect((yield* paymentOf(id)).settlement?.status).toBe("held")

          // Another chain's account cannot receive the asset: refused, nothing queued.
          const foreign = yield* Effect.flip(
            work.settleAgain(id, {
              destination: "eip155:1:0x00000000000000000000000000000000000000E2" as Caip10,
              actor: cliActor
            })
          )
          expect(foreign).toMatchObject({ _tag: "InvalidInput" })
          expect((yield* paymentOf(id)).settlement?.status).toBe("held")

          const elsewhere = "0x00000000000000000000000000000000000000E2" as Address
          expect(
            yield* work.settleAgain(id, {
              destination: `${CHAIN_ID}:${elsewhere}` as Caip10,
              actor: cliActor
            })
          ).toBe(true)
          expect(yield* drain()).toBe(true)
          expect((yield* paymentOf(id)).settlement).toMatchObject({
            status: "settled",
            destination: `${CHAIN_ID}:${elsewhere}`
          })
          expect(fake.balance(elsewhere)).toBe(SETTLED)
          expect(fake.balance(MERCHANT)).toBe(0n)
          const entries = yield* (yield* AuditStore).list({ limit: 10 })
          expect(
            entries
              .filter((e) => e.action === "payment.settlement_redirected")
              .map((e) => ({
                actor: e.actor,
                subject: e.subject,
                before: e.before,
                after: e.after
              }))
          ).toEqual([
            {
              actor: cliActor,
              subject: id,
              before: { destination: MERCHANT_ACCOUNT },
              after: { destination: `${CHAIN_ID}:${elsewhere}` }
            }
          ])
        }).pipe(Effect.provide(world.engine()))
      }
    )

    it.effect("an operator settles a held settlement while the merchant is still deleted", () => {
      const world = makeWorld()
      const { fake } = world
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const work = yield* ChainWork
        const id = yield* confirmedPayment(fake, shop)
        yield* (yield* Merchants).remove(shop.partner, shop.merchantId)
        expect(yield* drain()).toBe(true)
        expect((yield* paymentOf(id)).settlement?.status).toBe("held")
        expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive"])
        expect(yield* work.resumeHeld(shop.merchantId)).toBe(0)

        expect(yield* work.settleAgain(id)).toBe(true)
        expect((yield* paymentOf(id)).settlement?.status).toBe("pending")
        expect(yield* work.settleAgain(id)).toBe(false)
        expect(yield* drain()).toBe(true)
        expect((yield* paymentOf(id)).settlement).toMatchObject({
          status: "settled",
          destination: MERCHANT_ACCOUNT
        })
        expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive", "transfer"])
        expect(fake.balance(MERCHANT)).toBe(SETTLED)
      }).pipe(Effect.provide(world.engine()))
    })

    it.effect("a settlement already signed when the merchant is suspended is not held", () => {
      const world = makeWorld()
      const { fake } = world
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const id = yield* confirmedPayment(fake, shop)
        // Until the collection is mined: the settlement is signed with the success.
        expect(
          yield* drain({
            until: Effect.map(jobOf(id, "settle"), (job) => job !== undefined)
          })
        ).toBe(true)
        yield* (yield* Merchants).setStatus(shop.merchantId, "suspended")
        expect(yield* drain()).toBe(true)
        expect((yield* paymentOf(id)).settlement?.status).toBe("settled")
        expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive", "transfer"])
        expect(fake.balance(MERCHANT)).toBe(SETTLED)
      }).pipe(Effect.provide(world.engine()))
    })
  })

  it.effect(
    "replaces a transaction stuck past stuckAfterMs at the same nonce, 12.5 % dearer",
    () => {
      const world = makeWorld({ chain: { stuckAfterMs: 1_000 } })
      const { fake } = world
      // The quote (2 gwei) is under the base fee: nothing at it gets in.
      fake.baseFee = 2_100_000_000n
      return Effect.gen(function* () {
        const id = yield* confirmedPayment(fake, yield* openShop())
        let pendingAt: number | undefined
        expect(
          yield* drain({
            onTick: (ms) => {
              if (pendingAt === undefined && fake.mempool.length > 0) pendingAt = ms
            }
          })
        ).toBe(true)

        const payment = yield* paymentOf(id)
        expect(payment.status).toBe("succeeded")
        const collected = yield* transfersOf(yield* jobOf(id, "collect"))
        expect(collected.map((t) => [t.purpose, t.nonce])).toEqual([
          ["call", 0],
          ["call", 0]
        ])
        const [stuck, replacement] = collected
        expect(
          replacement!.createdAt.getTime() - stuck!.createdAt.getTime()
        ).toBeGreaterThanOrEqual(1_000)
        expect({ to: replacement!.to, data: replacement!.data, gas: replacement!.gas }).toEqual({
          to: stuck!.to,
          data: stuck!.data,
          gas: stuck!.gas
        })
        expect(bumpedEnough(replacement!.maxFeePerGas, stuck!.maxFeePerGas)).toBe(true)
        expect(bumpedEnough(replacement!.maxPriorityFeePerGas, stuck!.maxPriorityFeePerGas)).toBe(
          true
        )
        expect(fake.mined.some((t) => t.hash === stuck!.hash)).toBe(false)
        expect(minedOf(fake, "receive").map((t) => t.hash)).toEqual([replacement!.hash])
        expect(payment.txId).toBe(replacement!.hash)
        expect(payment.settlement?.status).toBe("settled")
        expect(fake.balance(MERCHANT)).toBe(SETTLED)
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect("sends again a replacement the node did not take while the stuck one waits", () => {
    const world = makeWorld({ chain: { stuckAfterMs: 1_000 } })
    const { fake } = world
    fake.baseFee = 2_100_000_000n
    let blips = 0
    // The replacement (a second transaction at nonce 0) meets an RPC blip, once.
    fake.unreachableFor = (tx) => {
      const blip =
        blips === 0 &&
        tx.call.kind === "receive" &&
        fake.mempool.some((t) => t.nonce === tx.nonce && t.hash !== tx.hash)
      if (blip) blips++
      return blip
    }
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      // Five times stuckAfterMs; the authorization is good for another 4000 s of chain time.
      const ended = yield* runUntil(isSettled(id), { maxMs: 5_000 })

      expect(blips).toBe(1)
      expect((yield* paymentOf(id)).status).toBe("succeeded")
      expect(ended).toBe(true)
      const collected = yield* transfersOf(yield* jobOf(id, "collect"))
      expect(collected.every((t) => t.purpose === "call" && t.nonce === 0)).toBe(true)
      expect(minedOf(fake, "receive").map((t) => t.hash)).toEqual([collected.at(-1)?.hash])
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect(
    "takes no nonce for a call whose signing failed: once its authorization is over, it fails and sends nothing",
    () => {
      const world = makeWorld()
      const { fake } = world
      // Signing fails before anything is recorded; by the next look the authorization is over.
      fake.failNext("sign")
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const id = yield* confirmedPayment(fake, shop)
        expect(
          yield* drain({
            onTick: () => {
              if (fake.calls.get("sign") === 1) fake.timestamp = VALID_BEFORE
            }
          })
        ).toBe(true)

        const payment = yield* paymentOf(id)
        expect(payment.status).toBe("failed")
        expect(payment.failureCode).toBe("authorization_expired")
        expect(yield* jobOf(id, "settle")).toBeUndefined()
        const collect = yield* jobOf(id, "collect")
        expect(collect?.nonce).toBeNull()
        expect(yield* transfersOf(collect)).toEqual([])
        expect(fake.mined).toEqual([])
        expect(fake.balance(BUYER)).toBe(PAID)

        // No gap: the next payment's transfer takes the first nonce.
        fake.timestamp = 1_000n
        const next = yield* confirmedPayment(fake, shop, VALID_BEFORE)
        expect(yield* drain()).toBe(true)
        expect((yield* paymentOf(next)).status).toBe("succeeded")
        expect(fake.mined.map((t) => [t.call.kind, t.nonce, t.success])).toEqual([
          ["receive", 0, true],
          ["transfer", 1, true]
        ])
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect("cancels a pending call at its nonce once its authorization has expired", () => {
    const world = makeWorld()
    const { fake } = world
    fake.baseFee = 2_100_000_000n
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      expect(
        yield* drain({
          onTick: (ms) => {
            if (ms === 500) fake.timestamp = VALID_BEFORE
          }
        })
      ).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("failed")
      expect(payment.failureCode).toBe("authorization_expired")
      const collected = yield* transfersOf(yield* jobOf(id, "collect"))
      expect(collected.map((t) => [t.purpose, t.nonce])).toEqual([
        ["call", 0],
        ["cancel", 0]
      ])
      const [call, cancel] = collected
      expect(bumpedEnough(cancel!.maxFeePerGas, call!.maxFeePerGas)).toBe(true)
      expect(bumpedEnough(cancel!.maxPriorityFeePerGas, call!.maxPriorityFeePerGas)).toBe(true)
      expect(fake.mined.map((t) => [t.hash, t.call.kind])).toEqual([[cancel!.hash, "cancel"]])
      expect(fake.stateOf(call!.hash)).toBe("Unknown")
      expect(fake.balance(BUYER)).toBe(PAID)
      expect(yield* jobOf(id, "settle")).toBeUndefined()
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("sends a transaction the node lost again as it was recorded", () => {
    const world = makeWorld()
    const { fake } = world
    fake.automine = false
    let lost: Hex | undefined
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      expect(
        yield* drain({
          onTick: () => {
            const pooled = fake.mempool[0]
            if (lost === undefined && pooled !== undefined) {
              lost = pooled.hash
              fake.drop(pooled.hash)
              fake.automine = true
            }
          }
        })
      ).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("succeeded")
      const collected = yield* transfersOf(yield* jobOf(id, "collect"))
      expect(collected.map((t) => t.hash)).toEqual([lost])
      expect(fake.broadcasts.filter((t) => t.hash === lost)).toHaveLength(2)
      expect(minedOf(fake, "receive").map((t) => t.hash)).toEqual([lost])
      expect(payment.settlement?.status).toBe("settled")
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("succeeds only once the transfer has the network's confirmations", () => {
    const world = makeWorld({ chain: { confirmations: 3 } })
    const { fake } = world
    return Effect.gen(function* () {
      const id = yield* confirmedPayment(fake, yield* openShop())
      const status = Effect.map(paymentOf(id), (p) => p.status)
      // Mined in block 101, the head: one confirmation of three.
      expect(yield* drain({ maxMs: 500 })).toBe(false)
      expect(minedOf(fake, "receive").map((t) => t.blockNumber)).toEqual([101n])
      expect(yield* status).toBe("processing")
      fake.mine()
      expect(yield* drain({ maxMs: 500 })).toBe(false)
      expect(yield* status).toBe("processing")
      fake.mine()
      expect(
        yield* drain({
          maxMs: 500,
          until: Effect.orDie(Effect.map(status, (s) => s === "succeeded"))
        })
      ).toBe(true)
      expect(yield* isSettled(id)).toBe(false)
      // The settlement waits for its own confirmations the same way.
      expect(yield* drain({ onTick: () => fake.mine() })).toBe(true)
      expect(yield* isSettled(id)).toBe(true)
      expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive", "transfer"])
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect(
    "runs a job it queued held at once, in its own process: collected and settled without a claim",
    () => {
      const fake = new ScriptedChain({ pollIntervalMs: POLL_MS })
      const claimed: Array<string> = []
      // Every job a claim hands out, seen on the store's port.
      const storage = Layer.map(makeMemoryStorage(), (context) => {
        const jobs = Context.get(context, ChainJobStore)
        return Context.add(
          context,
          ChainJobStore,
          ChainJobStore.of({
            ...jobs,
            claimDue: (now, limit, leaseMs) =>
              Effect.tap(jobs.claimDue(now, limit, leaseMs), (claims) =>
                Effect.sync(() => claimed.push(...claims.map((c) => c.job.kind)))
              )
          })
        )
      })
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const runner = yield* Effect.fork((yield* ChainWork).runForever)
        yield* Effect.yieldNow()
        const id = yield* confirmedPayment(fake, shop, VALID_BEFORE, true)
        expect(yield* drive(Effect.never, { until: isSettled(id), maxMs: 5_000 })).toBe(true)
        yield* Fiber.interrupt(runner)

        expect(claimed).toEqual([])
        const payment = yield* paymentOf(id)
        expect(payment.status).toBe("succeeded")
        expect(payment.settlement).toMatchObject({ status: "settled", amount: SETTLED })
        for (const kind of ["collect", "settle"] as const) {
          const job = yield* jobOf(id, kind)
          expect(job).toMatchObject({ state: "done", attempts: 1 })
        }
        expect(fake.mined.map((t) => [t.call.kind, t.nonce, t.success])).toEqual([
          ["receive", 0, true],
          ["transfer", 1, true]
        ])
      }).pipe(Effect.provide(engineOn(fake, storage, FEES, 1_000)))
    }
  )

  describe("two instances on one store", () => {
    /**
     * Both instances' background loops (B's from the first tick on) until `done`
     * holds and 2 s have passed, long enough for a stalled instance to wake and
     * try its write.
     */
    const race = <R>(
      a: EngineContext,
      b: EngineContext,
      done: Effect.Effect<boolean, never, R>,
      onTick?: (ms: number) => void
    ) => {
      let elapsed = 0
      const loop = (ctx: EngineContext) =>
        Effect.provide(
          Effect.flatMap(ChainWork, (w) => w.runForever),
          ctx
        )
      return drive(
        Effect.all([loop(a), Effect.delay(loop(b), TICK_MS)], { concurrency: "unbounded" }),
        {
          until: Effect.map(done, (d) => d && elapsed >= 2_000),
          onTick: (ms) => {
            elapsed = ms
            onTick?.(ms)
          },
          maxMs: 10_000
        }
      )
    }

    const twoEngines = (world: World) =>
      Effect.all([Layer.build(world.engine(300)), Layer.build(world.engine(300))])

    it.scoped("a stalled instance's signed transaction is never recorded nor sent", () => {
      const world = makeWorld()
      const { fake } = world
      return Effect.gen(function* () {
        const [a, b] = yield* twoEngines(world)
        const id = yield* Effect.flatMap(openShop(), (shop) => confirmedPayment(fake, shop)).pipe(
          Effect.provide(a)
        )
        // A signs for a second; its lease runs out meanwhile and B takes the job over,
        // quoted a lower fee. Nothing is mined until A has woken: had A's dearer
        // transaction been sent, it would have replaced B's in the pool.
        fake.quote = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_500_000_000n }
        fake.automine = false
        fake.pauseNext("sign", 1_000)
        const ended = yield* race(a, b, isSettled(id), (ms) => {
          if (ms === 100) fake.quote = { maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI }
          if (ms >= 1_500) {
            fake.automine = true
            fake.mine()
          }
        }).pipe(Effect.provide(a))

        const signed = fake.signed.filter((t) => t.call.kind === "receive")
        // Both signed, for the same nonce: the race did happen.
        expect(new Set(signed.map((t) => t.hash)).size).toBe(2)
        expect(new Set(signed.map((t) => t.nonce))).toEqual(new Set([0]))
        // Only B's, the one recorded, ever reached the node.
        const recorded = yield* Effect.flatMap(jobOf(id, "collect"), transfersOf).pipe(
          Effect.provide(a)
        )
        expect(recorded.map((t) => t.maxFeePerGas)).toEqual([2n * GWEI])
        expect(fake.broadcasts.filter((t) => t.call.kind === "receive").map((t) => t.hash)).toEqual(
          recorded.map((t) => t.hash)
        )
        expect(ended).toBe(true)
        yield* assertOnce(id, fake).pipe(Effect.provide(a))
      })
    })

    it.scoped("a transaction recorded by a stalled instance is the one the other sends", () => {
      const world = makeWorld()
      const { fake } = world
      return Effect.gen(function* () {
        const [a, b] = yield* twoEngines(world)
        const id = yield* Effect.flatMap(openShop(), (shop) => confirmedPayment(fake, shop)).pipe(
          Effect.provide(a)
        )
        // A records its transaction, then its broadcast hangs past its lease: B takes over.
        fake.pauseNext("broadcast", 1_000)
        expect(yield* race(a, b, isSettled(id)).pipe(Effect.provide(a))).toBe(true)
        const collect = yield* jobOf(id, "collect").pipe(Effect.provide(a))
        expect(collect?.attempts).toBeGreaterThanOrEqual(2)
        yield* assertOnce(id, fake).pipe(Effect.provide(a))
      })
    })

    it.scoped("many payments, stalls everywhere: one nonce and one transfer per job", () => {
      const world = makeWorld()
      const { fake } = world
      return Effect.gen(function* () {
        const [a, b] = yield* twoEngines(world)
        const shop = yield* openShop().pipe(Effect.provide(a))
        const ids: Array<PaymentId> = []
        for (let i = 0; i < 3; i++)
          ids.push(yield* confirmedPayment(fake, shop).pipe(Effect.provide(a)))
        for (const method of [
          "receiveCall",
          "collectorNonce",
          "sign",
          "broadcast",
          "transactionState",
          "head",
          "transferCall"
        ] as const) {
          fake.pauseNext(method, 400)
          fake.pauseNext(method, 700)
        }
        const all = Effect.map(Effect.all(ids.map(isSettled)), (settled) => settled.every(Boolean))
        const ended = yield* race(a, b, all).pipe(Effect.provide(a))
        expect(ended).toBe(true)
        for (const id of ids) yield* assertOnce(id, fake).pipe(Effect.provide(a))
        // Jobs were taken over: the stalls outlasted leases.
        const attempts = yield* Effect.forEach(ids, (id) =>
          Effect.map(jobOf(id, "collect"), (job) => job?.attempts ?? 0)
        ).pipe(Effect.provide(a))
        expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2)
        const nonces = fake.mined.map((t) => t.nonce)
        expect(nonces).toEqual([0, 1, 2, 3, 4, 5])
        expect(fake.balance(MERCHANT)).toBe(3n * SETTLED)
      })
    })
  })
})

/** The payment succeeded and settled, each of its jobs held one nonce and sent one transaction, mined once. */
const assertOnce = (id: PaymentId, fake: ScriptedChain) =>
  Effect.gen(function* () {
    const payment = yield* paymentOf(id)
    expect(payment.status).toBe("succeeded")
    expect(payment.settlement?.status).toBe("settled")
    for (const [kind, call] of [
      ["collect", "receive"],
      ["settle", "transfer"]
    ] as const) {
      const transfers = yield* transfersOf(yield* jobOf(id, kind))
      expect(transfers).toHaveLength(1)
      const sent = transfers[0]!
      expect(fake.broadcasts.filter((t) => t.nonce === sent.nonce).map((t) => t.hash)).toEqual([
        sent.hash
      ])
      expect(
        fake.mined.filter((t) => t.hash === sent.hash && t.call.kind === call && t.success)
      ).toHaveLength(1)
    }
    expect(payment.txId).toBe((yield* transfersOf(yield* jobOf(id, "collect")))[0]!.hash)
    expect(payment.settlement?.txHash).toBe(
      (yield* transfersOf(yield* jobOf(id, "settle")))[0]!.hash
    )
  })

// ---------------------------------------------------------------------------
// When the node refuses, or the chain forgets (issue 34)

/** The engine's log lines at warning and above, by message, with their annotations. */
const capturedLogs = () => {
  const lines: Array<{ readonly level: string; readonly message: unknown }> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel.label, message: Array.isArray(message) ? message[0] : message })
  })
  const count = (message: string) => lines.filter((l) => l.message === message).length
  /** Wraps a test's body: its lines (and its chain work's) kept here, from warnings up. */
  const capture = <A, E, R>(body: Effect.Effect<A, E, R>) =>
    body.pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  return { lines, count, capture }
}

const REFUSED = "insufficient funds for gas * price + value"

describe("ChainWork when the node refuses or the chain forgets", () => {
  it.effect(
    "a send the node keeps refusing backs off with one warning a step, is marked stuck past the bound, and goes again",
    () => {
      const world = makeWorld({
        chainWork: { backoffCapMs: 4_000, stuckAfterFailures: 6, stuckAfterMs: 3_600_000 }
      })
      const { fake } = world
      let refusing = true
      let elapsed = 0
      const tries: Array<number> = []
      fake.onBroadcast = (tx) => {
        if (tx.call.kind === "receive") tries.push(elapsed)
      }
      fake.rejectBroadcast = (tx) => (refusing && tx.call.kind === "receive" ? REFUSED : undefined)
      const logs = capturedLogs()
      return Effect.gen(function* () {
        const id = yield* confirmedPayment(fake, yield* openShop())
        const probe = yield* StorageProbe
        const stuck = Effect.orDie(Effect.map(probe.stuckJobs(10), (jobs) => jobs.length > 0))
        const onTick = (ms: number) => {
          elapsed = ms
        }
        expect(yield* runUntil(stuck, { maxMs: 60_000, onTick })).toBe(true)

        const job = yield* jobOf(id, "collect")
        expect(job).toMatchObject({ failures: 6, lastError: REFUSED })
        expect(job?.stuckSince).toBeInstanceOf(Date)
        // The first send, then one try per back-off step, each with its one warning line.
        expect(tries).toHaveLength(7)
        expect(logs.count("chain job retry")).toBe(6)
        expect(logs.count("chain job stuck")).toBe(1)
        // The waits double (each between half and all of its step's): two steps on is longer.
        const waits = tries.slice(1).map((t, i) => t - tries[i]!)
        for (let i = 2; i < waits.length; i++) {
          expect(waits[i]!).toBeGreaterThanOrEqual(waits[i - 2]!)
        }
        expect(waits.at(-1)!).toBeGreaterThanOrEqual(800)

        const readiness = yield* checkReadiness()
        expect(readiness.status).toBe("degraded")
        expect(readiness.stuckJobs).toEqual([
          {
            id: job!.id,
            kind: "collect",
            paymentId: id,
            chainId: CHAIN_ID,
            stuckSince: job!.stuckSince!.toISOString(),
            failingSince: job!.failingSince!.toISOString(),
            failures: 6,
            lastError: REFUSED
          }
        ])
        const queue = yield* Effect.orDie(
          probe.chainJobQueue(new Date(yield* Clock.currentTimeMillis))
        )
        expect(queue).toMatchObject({ active: 1, stuck: 1, oldestDueAt: job!.failingSince })
        expect((yield* paymentOf(id)).status).toBe("processing")

        // The node takes it: paid and settled once, the job's failing steps cleared.
        refusing = false
        expect(yield* runUntil(isSettled(id), { maxMs: 30_000 })).toBe(true)
        expect((yield* checkReadiness()).status).toBe("ready")
        expect(yield* Effect.orDie(probe.stuckJobs(10))).toEqual([])
        expect(minedOf(fake, "receive")).toHaveLength(1)
        expect(minedOf(fake, "transfer")).toHaveLength(1)
      }).pipe(logs.capture, Effect.provide(world.engine()))
    }
  )

  it.effect(
    "a nonce the chain lacks below a refused send, held by a job that is over: a cancel takes it, its call is never sent again",
    () => {
      const world = makeWorld()
      const { fake } = world
      fake.rejectNonceGaps = true
      let lost: Hex | undefined
      // The first collect never reaches the node, however often it is sent.
      fake.unreachableFor = (tx) => {
        if (lost === undefined && tx.call.kind === "receive") lost = tx.hash
        return tx.hash === lost
      }
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const first = yield* confirmedPayment(fake, shop)
        const recorded = Effect.map(jobOf(first, "collect"), (j) => j?.nonce === 0)
        expect(yield* runUntil(recorded, { maxMs: 5_000 })).toBe(true)
        // Decided without it (as by an operator), its job over: its nonce 0 is nobody's to watch.
        const firstJob = (yield* jobOf(first, "collect"))!
        yield* (yield* Payments).transition(first, {
          _tag: "Fail",
          failureCode: "transaction_dropped"
        })
        expect(
          yield* (yield* ChainJobStore).endJob(firstJob.id, "ended by the test", new Date())
        ).toBe(true)

        const second = yield* confirmedPayment(fake, shop)
        expect(yield* runUntil(isSettled(second), { maxMs: 10_000 })).toBe(true)

        const firstTransfers = yield* transfersOf(firstJob)
        expect(firstTransfers.map((t) => [t.purpose, t.nonce, t.hash === lost])).toEqual([
          ["call", 0, true],
          ["cancel", 0, false]
        ])
        const [call, cancel] = firstTransfers
        expect(bumpedEnough(cancel!.maxFeePerGas, call!.maxFeePerGas)).toBe(true)
        expect(fake.mined.map((t) => [t.call.kind, t.nonce, t.hash])).toEqual([
          ["cancel", 0, cancel!.hash],
          ["receive", 1, (yield* paymentOf(second)).txId],
          ["transfer", 2, (yield* paymentOf(second)).settlement?.txHash]
        ])
        expect(fake.broadcasts.some((t) => t.hash === lost)).toBe(false)
        // The first buyer's authorization was never used: only the second payment moved money.
        expect(fake.balance(BUYER)).toBe(PAID)
        expect(fake.balance(MERCHANT)).toBe(SETTLED)
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect(
    "a nonce the chain lacks that nothing recorded is never filled: the job waits until the chain has it",
    () => {
      const world = makeWorld()
      const { fake } = world
      fake.rejectNonceGaps = true
      fake.automine = false
      // Another sender's transaction at nonce 0, pooled: the collect is signed at nonce 1.
      const external = {
        to: COLLECTOR,
        data: "0x" as Hex,
        gas: 21_000n,
        maxFeePerGas: GWEI,
        maxPriorityFeePerGas: GWEI,
        nonce: 0,
        hash: `0x${"ee".repeat(32)}` as Hex,
        raw: "0x00" as Hex,
        sender: COLLECTOR,
        call: { kind: "external" as const }
      }
      fake.mempool.push(external)
      return Effect.gen(function* () {
        const id = yield* confirmedPayment(fake, yield* openShop())
        const signed = Effect.sync(() => fake.signed.length > 0 && fake.mempool.length === 2)
        expect(yield* runUntil(signed, { maxMs: 5_000 })).toBe(true)
        // The node loses both: it now expects nonce 0, which nothing of the engine's holds.
        fake.drop(external.hash)
        fake.drop(fake.signed[0]!.hash)
        fake.automine = true
        const waiting = Effect.map(jobOf(id, "collect"), (j) => (j?.failures ?? 0) >= 3)
        expect(yield* runUntil(waiting, { maxMs: 30_000 })).toBe(true)
        const job = yield* jobOf(id, "collect")
        expect(job?.lastError).toMatch(/expects nonce 0, which has no recorded transaction/)
        expect(fake.signed.map((t) => [t.call.kind, t.nonce])).toEqual([["receive", 1]])
        expect(fake.mined).toEqual([])

        // The other sender's transaction lands after all: the collect goes through, once.
        fake.mineExternal(0)
        expect(yield* runUntil(isSettled(id), { maxMs: 30_000 })).toBe(true)
        expect(fake.mined.map((t) => [t.call.kind, t.nonce])).toEqual([
          ["external", 0],
          ["receive", 1],
          ["transfer", 2]
        ])
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect(
    "a collection that cannot go through fails only once a block past validBefore exists and the authorization is unused",
    () => {
      const world = makeWorld()
      const { fake } = world
      let refusing = true
      fake.rejectBroadcast = () => (refusing ? REFUSED : undefined)
      return Effect.gen(function* () {
        const id = yield* confirmedPayment(fake, yield* openShop())
        // Tries refused so far (kept in memory between short back-offs, so counted at the node).
        const tried = (n: number) => Effect.sync(() => (fake.calls.get("broadcast") ?? 0) >= n)
        expect(yield* runUntil(tried(2), { maxMs: 10_000 })).toBe(true)
        expect((yield* paymentOf(id)).status).toBe("processing")
        // A block at validBefore: the authorization could not be used in it, but it is not past.
        fake.timestamp = VALID_BEFORE
        fake.mine()
        expect(yield* runUntil(tried(5), { maxMs: 30_000 })).toBe(true)
        expect((yield* paymentOf(id)).status).toBe("processing")
        // A block past it, the authorization unused on chain: nothing can collect it any more.
        fake.timestamp = VALID_BEFORE + 1n
        fake.mine()
        const failed = Effect.map(paymentOf(id), (p) => p.status === "failed")
        expect(yield* runUntil(Effect.orDie(failed), { maxMs: 30_000 })).toBe(true)
        expect((yield* paymentOf(id)).failureCode).toBe("authorization_expired")
        // The job goes on to use its nonce: a cancel, once the node takes it.
        expect((yield* jobOf(id, "collect"))?.state).toBe("active")
        refusing = false
        const over = Effect.map(jobOf(id, "collect"), (j) => j?.state === "done")
        expect(yield* runUntil(over, { maxMs: 120_000 })).toBe(true)
        expect(fake.mined.map((t) => [t.call.kind, t.nonce])).toEqual([["cancel", 0]])
        expect(fake.balance(BUYER)).toBe(PAID)
        expect(yield* jobOf(id, "settle")).toBeUndefined()
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect(
    "a chain on a new run starts afresh: its nonces forgotten, a collect under way fails chain_reset, a settlement under way ends",
    () => {
      const storage = makeMemoryStorage()
      const firstRun = new ScriptedChain({ pollIntervalMs: POLL_MS, instance: "run-1" })
      const nextRun = new ScriptedChain({ pollIntervalMs: POLL_MS, instance: "run-2" })
      // The first run's last settlement and last collect never get through.
      const refusing = { transfers: false, collects: false }
      firstRun.refuseTransfer = () =>
        refusing.transfers ? "ERC20: transfer amount exceeds balance" : undefined
      firstRun.rejectBroadcast = (tx) =>
        refusing.collects && tx.call.kind === "receive" ? REFUSED : undefined
      const onRun = (fake: ScriptedChain, body: Effect.Effect<void, unknown, EngineServices>) =>
        Effect.gen(function* () {
          const work = yield* ChainWork
          yield* work.startFresh
          yield* body
        }).pipe(Effect.provide(engineOn(fake, storage, FEES, 1_000)))
      let shop: Shop | undefined
      const ids: Array<PaymentId> = []
      return Effect.gen(function* () {
        yield* onRun(
          firstRun,
          Effect.gen(function* () {
            expect(yield* (yield* ChainWork).freshRuns).toEqual([
              { chainId: CHAIN_ID, previous: null, paymentsFailed: 0, settlementsEnded: 0 }
            ])
            shop = yield* openShop()
            ids.push(yield* confirmedPayment(firstRun, shop))
            expect(yield* drain()).toBe(true)
            refusing.transfers = true
            ids.push(yield* confirmedPayment(firstRun, shop))
            const settling = Effect.map(jobOf(ids[1]!, "settle"), (j) => j?.lastError != null)
            expect(yield* runUntil(settling, { maxMs: 10_000 })).toBe(true)
            refusing.collects = true
            ids.push(yield* confirmedPayment(firstRun, shop))
            const collecting = Effect.map(jobOf(ids[2]!, "collect"), (j) => j?.nonce != null)
            expect(yield* runUntil(collecting, { maxMs: 10_000 })).toBe(true)
          })
        )
        const [settled, settling, collecting] = ids as [PaymentId, PaymentId, PaymentId]
        yield* onRun(
          nextRun,
          Effect.gen(function* () {
            expect(yield* (yield* ChainWork).freshRuns).toEqual([
              {
                chainId: CHAIN_ID,
                previous: { instance: "run-1", since: expect.any(Date) },
                paymentsFailed: 1,
                settlementsEnded: 1
              }
            ])
            expect(yield* paymentOf(collecting)).toMatchObject({
              status: "failed",
              failureCode: "chain_reset"
            })
            const settle = yield* jobOf(settling, "settle")
            expect(settle).toMatchObject({ state: "done" })
            expect(settle?.lastError).toMatch(/started afresh/)
            expect((yield* paymentOf(settling)).settlement?.status).toBe("pending")
            // Decided before: its history kept as it was.
            const before = yield* paymentOf(settled)
            expect(before.status).toBe("succeeded")
            expect(before.settlement?.status).toBe("settled")
            // The new run's first transaction takes its nonce 0: the old sequence is forgotten.
            const next = yield* confirmedPayment(nextRun, shop!)
            expect(yield* drain()).toBe(true)
            expect((yield* paymentOf(next)).settlement?.status).toBe("settled")
            expect(nextRun.mined.map((t) => [t.call.kind, t.nonce])).toEqual([
              ["receive", 0],
              ["transfer", 1]
            ])
          })
        )
        // The same run again (a restart that kept the chain): nothing is ended.
        yield* onRun(
          nextRun,
          Effect.gen(function* () {
            expect(yield* (yield* ChainWork).freshRuns).toEqual([])
          })
        )
      })
    }
  )
})

// ---------------------------------------------------------------------------
// Smart-account buyers not deployed yet (ERC-6492): the deploy job, then collect and settle

const SMART = "0x00000000000000000000000000000000000005A0" as Address
const FACTORY = getAddress("0x0000000000000000000000000000000000000fac")
const DEPLOYMENT = { factory: FACTORY, factoryData: "0xc0ffee01" as Hex }
/** What the account checks once deployed (an ERC-1271 signature: not 65 bytes). */
const INNER = `0x${"cd".repeat(96)}` as Hex
const WRAPPED = serializeErc6492Signature({
  address: FACTORY,
  data: DEPLOYMENT.factoryData,
  signature: INNER
})

/**
 * A payment of the smart account `SMART`, confirmed as the gateway confirms one
 * not deployed yet: in `processing` with its deploy job queued.
 */
const deployingPayment = (fake: ScriptedChain, shop: Shop, validBefore = VALID_BEFORE) =>
  Effect.gen(function* () {
    const payments = yield* Payments
    const { payment, option } = yield* offeredPayment(fake, shop, validBefore, SMART)
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* payments.transition(payment.id, {
      _tag: "StartProcessing",
      tokenAmount: { asset: ASSET, value: PAID },
      buyer: { account: option.account, providerName: "W", providerIcon: null },
      transaction: null,
      collect: newChainJob(
        payment.id,
        CHAIN_ID,
        { kind: "deploy", optionId: option.id, signature: WRAPPED },
        at
      )
    })
    return payment.id
  })

const sentBy = (fake: ScriptedChain, sender: Address) =>
  fake.signed.filter((t) => t.sender.toLowerCase() === sender.toLowerCase())

describe("ChainWork: an account deployed first (deploy jobs)", () => {
  it.effect("deploys it from the deployer, then collects and settles from the collector", () => {
    const world = makeWorld()
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    return Effect.gen(function* () {
      const id = yield* deployingPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("succeeded")
      expect(payment.settlement?.status).toBe("settled")
      expect(fake.codeOf(SMART)).not.toBe("0x")
      expect(fake.mined.map((t) => [t.call.kind, t.sender, t.nonce, t.success])).toEqual([
        ["deploy", DEPLOYER, 0, true],
        ["receive", COLLECTOR, 0, true],
        ["transfer", COLLECTOR, 1, true]
      ])
      // The account is asked with its own signature, not the ERC-6492 wrapper.
      expect(hexToText(fake.mined[1]!.data)).toContain(INNER)
      expect(hexToText(fake.mined[1]!.data)).not.toContain(WRAPPED.slice(2))
      const deploy = yield* jobOf(id, "deploy")
      expect(deploy).toMatchObject({ state: "done", kind: "deploy" })
      const deployed = yield* transfersOf(deploy)
      expect(deployed.map((t) => [t.purpose, t.sender, t.nonce])).toEqual([["call", DEPLOYER, 0]])
      // The collect job stores the same full signature; the payment's transaction is the collect's.
      const collect = yield* jobOf(id, "collect")
      expect(collect?.payload).toMatchObject({ kind: "collect", signature: WRAPPED })
      expect(payment.transaction?.hash).toBe((yield* transfersOf(collect))[0]!.hash)
      expect(fake.balance(SMART)).toBe(0n)
      expect(fake.balance(MERCHANT)).toBe(SETTLED)
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("keeps the deployer's nonces apart from the collector's", () => {
    const world = makeWorld()
    const { fake } = world
    const other = "0x00000000000000000000000000000000000005A1" as Address
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    fake.addSmartAccount(other, { deployment: { factory: FACTORY, factoryData: "0xc0ffee02" } })
    return Effect.gen(function* () {
      const shop = yield* openShop()
      const first = yield* deployingPayment(fake, shop)
      expect(yield* drain()).toBe(true)
      // An EOA's payment between the two: only the collector's sequence moves.
      const plain = yield* confirmedPayment(fake, shop)
      expect(yield* drain()).toBe(true)
      expect(fake.latestNonce(DEPLOYER)).toBe(1)
      expect(fake.latestNonce(COLLECTOR)).toBe(4)

      const store = yield* ChainJobStore
      expect(yield* store.nextNonce(CHAIN_ID, DEPLOYER, 0)).toBe(1)
      expect(yield* store.nextNonce(CHAIN_ID, COLLECTOR, 0)).toBe(4)
      for (const id of [first, plain]) {
        expect((yield* paymentOf(id)).settlement?.status).toBe("settled")
      }
      expect(sentBy(fake, DEPLOYER).map((t) => [t.call.kind, t.nonce])).toEqual([["deploy", 0]])
      expect(sentBy(fake, COLLECTOR).map((t) => t.nonce)).toEqual([0, 1, 2, 3])
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("sends nothing from the deployer for an account someone else deployed", () => {
    const world = makeWorld()
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    return Effect.gen(function* () {
      const id = yield* deployingPayment(fake, yield* openShop())
      fake.deployExternally(SMART)
      expect(yield* drain()).toBe(true)

      expect((yield* paymentOf(id)).settlement?.status).toBe("settled")
      expect(fake.calls.get("deploymentCall")).toBeUndefined()
      expect(sentBy(fake, DEPLOYER)).toEqual([])
      expect(fake.mined.map((t) => t.call.kind)).toEqual(["receive", "transfer"])
      const deploy = yield* jobOf(id, "deploy")
      expect(deploy).toMatchObject({ state: "done", nonce: null })
      expect(yield* transfersOf(deploy)).toEqual([])
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("goes on when another deployment in the same block makes its own revert", () => {
    const world = makeWorld()
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    // The buyer's wallet deploys it just before ours is mined: ours reverts.
    fake.onBroadcast = (tx) => {
      if (tx.call.kind === "deploy") fake.deployExternally(SMART)
    }
    return Effect.gen(function* () {
      const id = yield* deployingPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      expect((yield* paymentOf(id)).settlement?.status).toBe("settled")
      expect(fake.mined.map((t) => [t.call.kind, t.success])).toEqual([
        ["deploy", false],
        ["receive", true],
        ["transfer", true]
      ])
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect(
    "fails account_deployment_failed, sending nothing, when the factory call is refused",
    () => {
      const world = makeWorld()
      const { fake } = world
      fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
      fake.refuseDeployment = () => "execution reverted"
      return Effect.gen(function* () {
        const id = yield* deployingPayment(fake, yield* openShop())
        expect(yield* drain()).toBe(true)

        const payment = yield* paymentOf(id)
        expect(payment.status).toBe("failed")
        expect(payment.failureCode).toBe("account_deployment_failed")
        expect(fake.signed).toEqual([])
        expect(fake.calls.get("broadcast")).toBeUndefined()
        const deploy = yield* jobOf(id, "deploy")
        expect(deploy).toMatchObject({ state: "done", nonce: null })
        expect(yield* transfersOf(deploy)).toEqual([])
        expect(yield* jobOf(id, "collect")).toBeUndefined()
        // No nonce taken: the deployer's sequence still starts at 0.
        expect(yield* (yield* ChainJobStore).nextNonce(CHAIN_ID, DEPLOYER, 0)).toBe(0)
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect(
    "fails account_deployment_failed when the factory call needs more gas than the cap",
    () => {
      const world = makeWorld({ chain: { deploymentGasCap: 100_000n } })
      const { fake } = world
      fake.addSmartAccount(SMART, { deployment: DEPLOYMENT, deploymentGas: 400_000n })
      return Effect.gen(function* () {
        const id = yield* deployingPayment(fake, yield* openShop())
        expect(yield* drain()).toBe(true)
        expect((yield* paymentOf(id)).failureCode).toBe("account_deployment_failed")
        expect(fake.signed).toEqual([])
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect("fails account_deployment_failed on a network without a deployer", () => {
    const world = makeWorld({ chain: { deployer: null } })
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    return Effect.gen(function* () {
      const id = yield* deployingPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)
      expect((yield* paymentOf(id)).failureCode).toBe("account_deployment_failed")
      expect(fake.calls.get("deploymentCall")).toBeUndefined()
      expect(fake.signed).toEqual([])
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("fails account_deployment_failed when the factory call reverts", () => {
    const world = makeWorld()
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    fake.revertIf = (tx) => tx.call.kind === "deploy"
    return Effect.gen(function* () {
      const id = yield* deployingPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("failed")
      expect(payment.failureCode).toBe("account_deployment_failed")
      expect(fake.mined.map((t) => [t.call.kind, t.success])).toEqual([["deploy", false]])
      expect(yield* jobOf(id, "collect")).toBeUndefined()
      expect(fake.codeOf(SMART)).toBe("0x")
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect("fails signature_rejected when the deployed account refuses its signature", () => {
    const world = makeWorld()
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT, accepts: () => false })
    return Effect.gen(function* () {
      const id = yield* deployingPayment(fake, yield* openShop())
      expect(yield* drain()).toBe(true)

      const payment = yield* paymentOf(id)
      expect(payment.status).toBe("failed")
      expect(payment.failureCode).toBe("signature_rejected")
      expect(fake.mined.map((t) => t.call.kind)).toEqual(["deploy"])
      expect(sentBy(fake, COLLECTOR)).toEqual([])
      const collect = yield* jobOf(id, "collect")
      expect(collect).toMatchObject({ state: "done", nonce: null })
      expect(fake.balance(SMART)).toBe(PAID)
    }).pipe(Effect.provide(world.engine()))
  })

  it.effect(
    "fails authorization_expired and cancels at the deployer's nonce when it expires first",
    () => {
      const world = makeWorld()
      const { fake } = world
      fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
      // The factory call waits in the pool (it pays too little) until the authorization is over.
      fake.baseFee = 10n * GWEI
      return Effect.gen(function* () {
        const id = yield* deployingPayment(fake, yield* openShop(), 1_010n)
        const done = Effect.map(jobOf(id, "deploy"), (j) => j?.state === "done")
        expect(
          yield* runUntil(done, {
            maxMs: 20_000,
            onTick: (ms) => {
              if (ms === 2_000) {
                fake.timestamp = 1_010n
                fake.baseFee = GWEI
              }
            }
          })
        ).toBe(true)

        const payment = yield* paymentOf(id)
        expect(payment.failureCode).toBe("authorization_expired")
        expect(fake.mined.map((t) => [t.call.kind, t.sender, t.nonce])).toEqual([
          ["cancel", DEPLOYER, 0]
        ])
        expect(yield* jobOf(id, "collect")).toBeUndefined()
        expect(fake.codeOf(SMART)).toBe("0x")
      }).pipe(Effect.provide(world.engine()))
    }
  )

  it.effect("a new runner after the deploy was recorded but not sent sends that one only", () => {
    const world = makeWorld()
    const { fake } = world
    fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
    // The first runner's send never reaches the node: it stops with the deploy recorded only.
    fake.unreachableFor = (tx) => tx.call.kind === "deploy"
    return Effect.gen(function* () {
      const id = yield* Effect.gen(function* () {
        const id = yield* deployingPayment(fake, yield* openShop())
        const recorded = Effect.flatMap(jobOf(id, "deploy"), (j) =>
          Effect.map(transfersOf(j), (t) => t.length > 0)
        )
        expect(yield* runUntil(recorded, { maxMs: 5_000 })).toBe(true)
        return id
      }).pipe(Effect.provide(world.engine()))
      expect(fake.mined).toEqual([])
      fake.unreachableFor = () => false

      yield* Effect.gen(function* () {
        expect(yield* drain()).toBe(true)
      }).pipe(Effect.provide(world.engine()))
      // Read through a third engine on the same store: the first two are gone.
      yield* Effect.gen(function* () {
        expect((yield* paymentOf(id)).settlement?.status).toBe("settled")
        expect(yield* transfersOf(yield* jobOf(id, "deploy"))).toHaveLength(1)
        expect(yield* transfersOf(yield* jobOf(id, "collect"))).toHaveLength(1)
      }).pipe(Effect.provide(world.engine()))
      expect(sentBy(fake, DEPLOYER).map((t) => t.call.kind)).toEqual(["deploy"])
      expect(fake.mined.map((t) => [t.call.kind, t.success])).toEqual([
        ["deploy", true],
        ["receive", true],
        ["transfer", true]
      ])
    })
  })

  it.effect(
    "a chain on a new run ends a deploy under way: chain_reset, the deployer's nonces forgotten",
    () => {
      const storage = makeMemoryStorage()
      const firstRun = new ScriptedChain({ pollIntervalMs: POLL_MS, instance: "run-1" })
      const nextRun = new ScriptedChain({ pollIntervalMs: POLL_MS, instance: "run-2" })
      firstRun.addSmartAccount(SMART, { deployment: DEPLOYMENT })
      nextRun.addSmartAccount(SMART, { deployment: DEPLOYMENT })
      // The first run's factory call never gets through: the job holds the deployer's nonce 0.
      firstRun.rejectBroadcast = (tx) => (tx.call.kind === "deploy" ? REFUSED : undefined)
      const onRun = (fake: ScriptedChain, body: Effect.Effect<void, unknown, EngineServices>) =>
        Effect.gen(function* () {
          yield* (yield* ChainWork).startFresh
          yield* body
        }).pipe(Effect.provide(engineOn(fake, storage, FEES, 1_000)))
      let shop: Shop | undefined
      let deploying: PaymentId | undefined
      return Effect.gen(function* () {
        yield* onRun(
          firstRun,
          Effect.gen(function* () {
            shop = yield* openShop()
            deploying = yield* deployingPayment(firstRun, shop)
            const held = Effect.map(jobOf(deploying, "deploy"), (j) => j?.nonce === 0)
            expect(yield* runUntil(held, { maxMs: 10_000 })).toBe(true)
          })
        )
        yield* onRun(
          nextRun,
          Effect.gen(function* () {
            expect(yield* (yield* ChainWork).freshRuns).toEqual([
              {
                chainId: CHAIN_ID,
                previous: { instance: "run-1", since: expect.any(Date) },
                paymentsFailed: 1,
                settlementsEnded: 0
              }
            ])
            expect(yield* paymentOf(deploying!)).toMatchObject({
              status: "failed",
              failureCode: "chain_reset"
            })
            const deploy = yield* jobOf(deploying!, "deploy")
            expect(deploy).toMatchObject({ state: "done" })
            expect(deploy?.lastError).toMatch(/started afresh/)
            expect(yield* jobOf(deploying!, "collect")).toBeUndefined()
            // The new run's deploy takes the deployer's nonce 0 again.
            const next = yield* deployingPayment(nextRun, shop!)
            expect(yield* drain()).toBe(true)
            expect((yield* paymentOf(next)).settlement?.status).toBe("settled")
            expect(nextRun.mined.map((t) => [t.call.kind, t.sender, t.nonce])).toEqual([
              ["deploy", DEPLOYER, 0],
              ["receive", COLLECTOR, 0],
              ["transfer", COLLECTOR, 1]
            ])
          })
        )
      })
    }
  )

  it.effect(
    "a factory call the node lost is sent again as recorded; the deployer's next waits for it",
    () => {
      const world = makeWorld()
      const { fake } = world
      const other = "0x00000000000000000000000000000000000005A1" as Address
      const otherDeployment = { factory: FACTORY, factoryData: "0xc0ffee02" as Hex }
      fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
      fake.addSmartAccount(other, { deployment: otherDeployment })
      fake.rejectNonceGaps = true
      fake.automine = false
      return Effect.gen(function* () {
        const shop = yield* openShop()
        const first = yield* deployingPayment(fake, shop)
        const recorded = (id: PaymentId) =>
          Effect.map(jobOf(id, "deploy"), (j) => j !== undefined && j.nonce !== null)
        expect(yield* runUntil(recorded(first), { maxMs: 5_000 })).toBe(true)
        // The node loses the first factory call: the second, at the deployer's nonce 1, is too high.
        fake.drop(fake.mempool.find((t) => t.call.kind === "deploy")!.hash)
        const offered = yield* offeredPayment(fake, shop, VALID_BEFORE, other)
        yield* (yield* Payments).transition(offered.payment.id, {
          _tag: "StartProcessing",
          tokenAmount: { asset: ASSET, value: PAID },
          buyer: { account: offered.option.account, providerName: "W", providerIcon: null },
          transaction: null,
          collect: newChainJob(
            offered.payment.id,
            CHAIN_ID,
            {
              kind: "deploy",
              optionId: offered.option.id,
              signature: serializeErc6492Signature({
                address: FACTORY,
                data: otherDeployment.factoryData,
                signature: INNER
              })
            },
            new Date(yield* Clock.currentTimeMillis)
          )
        })
        fake.automine = true
        const bothSettled = Effect.zipWith(
          isSettled(first),
          isSettled(offered.payment.id),
          (a, b) => a && b
        )
        expect(yield* runUntil(bothSettled, { maxMs: 20_000 })).toBe(true)
        expect(
          fake.mined.filter((t) => t.call.kind === "deploy").map((t) => [t.sender, t.nonce])
        ).toEqual([
          [DEPLOYER, 0],
          [DEPLOYER, 1]
        ])
        // Each deploy signed once: the lost one sent again as it was recorded.
        expect(sentBy(fake, DEPLOYER)).toHaveLength(2)
        expect(fake.latestNonce(COLLECTOR)).toBe(4)
      }).pipe(Effect.provide(world.engine()))
    }
  )
})

const hexToText = (hex: Hex) => Buffer.from(hex.slice(2), "hex").toString("utf8")
