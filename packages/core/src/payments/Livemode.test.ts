/**
 * The engine's mode and each payment's (issue 19): decided once at start from
 * the networks (test only when every one is a testnet), recorded on each
 * payment at its creation, and shown on every view of it, including the
 * events that snapshot it; a payment stored before the mode was recorded
 * shows the engine's mode of the moment.
 */
import { describe, expect, it } from "@effect/vitest"
import { type EvmNetworkConfig, makeEvmChain } from "@pay/chain-evm"
import { MemoryStorage } from "@pay/testing"
import { Cause, Effect, Layer } from "effect"
import { http } from "viem"
import { partnerWithMerchant } from "../../test/PartnerFixture.js"
import { Chain, livemodeOf } from "../chain/Chain.js"
import { payEngineLayer } from "../Engine.js"
import { engineConfig } from "../EngineOptions.js"
import { EventStore } from "../events/Event.js"
import { paymentInfoView } from "../gateway/Http.js"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { EngineMode } from "../shared/EngineMode.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import { type Payment, paymentLivemode } from "./Payment.js"
import { Payments } from "./Payments.js"
import { cancelView, legacyView, paymentDetails, paymentView, refundView } from "./Views.js"

const USD = { kind: "fiat", currency: findCurrency("USD")! } as const

/** A network that is never called: making the chain connects to nothing. */
const network = (chainId: string, testnet?: boolean): EvmNetworkConfig => ({
  chainId: chainId as Caip2,
  name: chainId,
  collectorKey: `0x${"11".repeat(32)}`,
  confirmations: 1,
  etaSeconds: 1,
  transport: http("http://127.0.0.1:9"),
  tokens: [
    {
      asset: `${chainId}/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913` as Caip19,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      iconUrl: null,
      priceCurrency: "USD"
    }
  ],
  ...(testnet === undefined ? {} : { testnet })
})

const engine = (networks?: ReadonlyArray<EvmNetworkConfig>, livemode?: boolean) =>
  payEngineLayer({
    storage: MemoryStorage,
    config: {
      ...engineConfig({ publicUrl: "http://pay.test", maxBodyBytes: 1024 }),
      ...(livemode === undefined ? {} : { livemode })
    },
    ...(networks === undefined ? {} : { chain: Layer.effect(Chain, makeEvmChain(networks)) })
  })

const created = Effect.gen(function* () {
  const { partner, merchant } = yield* partnerWithMerchant
  const payments = yield* Payments
  const payment = yield* payments.create(partner, merchant.id, {
    referenceId: "r1",
    amount: { unit: USD, value: 1050n }
  })
  return { partner, merchant, payment, payments }
})

const modeOf = Effect.map(EngineMode, (mode) => mode.livemode)

describe("the engine's mode", () => {
  it("is live unless there are networks and every one is a testnet", () => {
    expect(livemodeOf([])).toBe(true)
    expect(livemodeOf([{}])).toBe(true)
    expect(livemodeOf([{ testnet: false }])).toBe(true)
    expect(livemodeOf([{ testnet: true }])).toBe(false)
    expect(livemodeOf([{ testnet: true }, { testnet: true }])).toBe(false)
    expect(livemodeOf([{ testnet: true }, {}])).toBe(true)
    expect(livemodeOf([{ testnet: true }, { testnet: false }])).toBe(true)
  })

  it.effect("is decided at start from the chain's networks, once", () =>
    Effect.gen(function* () {
      expect(yield* Effect.provide(modeOf, engine())).toBe(true)
      expect(yield* Effect.provide(modeOf, engine([network("eip155:8453")]))).toBe(true)
      expect(
        yield* Effect.provide(
          modeOf,
          engine([network("eip155:84532", true), network("eip155:11155111", true)])
        )
      ).toBe(false)
      expect(
        yield* Effect.provide(
          modeOf,
          engine([network("eip155:84532", true), network("eip155:8453", false)])
        )
      ).toBe(true)
      // Settings that say it already are kept.
      expect(yield* Effect.provide(modeOf, engine([network("eip155:8453")], false))).toBe(false)
    })
  )

  it.effect("takes a network's testnet from the EVM settings, and refuses one not a boolean", () =>
    Effect.gen(function* () {
      const chain = yield* makeEvmChain([network("eip155:84532", true), network("eip155:8453")])
      expect(chain.networks.map((n) => n.testnet)).toEqual([true, false])
      const wrong = { ...network("eip155:84532"), testnet: "true" } as unknown as EvmNetworkConfig
      const defect = yield* Effect.flip(Effect.sandbox(makeEvmChain([wrong])))
      expect(Cause.pretty(defect)).toContain("network eip155:84532: testnet must be true or false")
    })
  )
})

describe("a payment's mode", () => {
  it.effect("is the engine's at its creation: false on testnets only", () =>
    Effect.gen(function* () {
      const { partner, payment, payments } = yield* created
      expect(payment.livemode).toBe(false)
      expect((yield* payments.get(partner, payment.id)).livemode).toBe(false)
    }).pipe(Effect.provide(engine([network("eip155:84532", true)])))
  )

  it.effect("is true on a live network, and without networks", () =>
    Effect.gen(function* () {
      expect(
        (yield* Effect.provide(created, engine([network("eip155:8453")]))).payment.livemode
      ).toBe(true)
      expect((yield* Effect.provide(created, engine())).payment.livemode).toBe(true)
    })
  )

  it.effect("is in the events that snapshot it", () =>
    Effect.gen(function* () {
      const { partner, merchant, payment, payments } = yield* created
      yield* payments.cancel(partner, merchant.id, payment.id)
      const events = yield* (yield* EventStore).list({ partnerId: partner.id, limit: 10 })
      const cancelled = events.find((e) => e.type === "payment.cancelled")
      expect(JSON.parse(cancelled!.data)).toMatchObject({ paymentId: payment.id, livemode: false })
    }).pipe(Effect.provide(engine([network("eip155:84532", true)])))
  )

  it.effect(
    "is shown on every view; one stored before modes were recorded shows the engine's",
    () =>
      Effect.gen(function* () {
        const { merchant, payment } = yield* created
        const registry = yield* TokenRegistry
        const now = payment.createdAt
        const refund = { id: "rfnd_00000000000000000001" as const, createdAt: now }
        const views = (p: Payment, livemode: boolean) => {
          const context = { registry, publicUrl: "http://pay.test", now, livemode }
          return [
            paymentView(p, merchant, context).livemode,
            paymentDetails(p, merchant, context).livemode,
            legacyView(p, context).livemode,
            cancelView(p, context).livemode,
            refundView(refund as NonNullable<Payment["refund"]>, p, context).livemode,
            paymentInfoView(p, merchant, registry, "http://pay.test", now, livemode).livemode
          ]
        }
        // Created in test mode, it stays a test payment whatever the engine's mode now.
        expect(payment.livemode).toBe(false)
        expect(views(payment, true)).toEqual(Array(6).fill(false))
        expect(views({ ...payment, livemode: true }, false)).toEqual(Array(6).fill(true))
        // Stored before migration 0018: the engine's mode of the moment.
        const old: Payment = { ...payment, livemode: null }
        expect(views(old, true)).toEqual(Array(6).fill(true))
        expect(views(old, false)).toEqual(Array(6).fill(false))
        expect(paymentLivemode(old, false)).toBe(false)
      }).pipe(Effect.provide(engine([network("eip155:84532", true)])))
  )
})
