import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import { Duration, Effect, Layer, Option, Schema, TestClock } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import { GatewayStore, OPTION_PURGE_GRACE_MS, type OptionId } from "../payments/PaymentOption.js"
import { PaymentStore } from "../payments/PaymentStore.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { GatewayConfig, GatewaySettings } from "./GatewayConfig.js"
import {
  GATEWAY_PURGE_EVERY,
  purgeGatewayDataForever,
  purgeGatewayDataOnce
} from "./GatewayPurge.js"

const DAY = 24 * 60 * 60_000
const account = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10

const payment: Payment = {
  id: "pay_00000000000000000001" as PaymentId,
  partnerId: "ptnr_00000000000000000001" as PartnerId,
  merchantId: "mrch_00000000000000000001" as MerchantId,
  referenceId: "ORDER-1",
  amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 1050n },
  status: "succeeded",
  failureCode: null,
  cancelledReason: null,
  expiresAt: new Date(300_000),
  createdAt: new Date(0),
  updatedAt: new Date(1000),
  finalAt: new Date(1000),
  checkout: null,
  tokenAmount: null,
  buyer: null,
  transaction: null,
  txId: null,
  refund: null,
  fees: null,
  settlement: null,
  livemode: true
}

const config = (retentionDays: number | undefined) =>
  Layer.succeed(
    GatewayConfig,
    Schema.decodeSync(GatewaySettings)(
      retentionDays === undefined ? {} : { buyerDataRetentionMs: retentionDays * DAY }
    )
  )

/** A payment final at 1 s, its data collected, and an option that expired at 1 s. */
const seeded = Effect.gen(function* () {
  const gateway = yield* GatewayStore
  yield* (yield* PaymentStore).insert(payment)
  yield* gateway.insertOptions([
    {
      id: "opt_00000000000000000001" as OptionId,
      paymentId: payment.id,
      account,
      asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19,
      method: "eip3009",
      approvals: [],
      rate: null,
      authorization: {
        from: "0x00000000000000000000000000000000000000b0",
        to: "0x00000000000000000000000000000000000000c0",
        value: 1n,
        validAfter: 0n,
        validBefore: 1n,
        nonce: `0x${"0f".repeat(32)}`
      },
      expiresAt: new Date(1000),
      quoted: true,
      collectData: true,
      clientId: null,
      createdAt: new Date(0)
    }
  ])
  yield* gateway.saveCollectedData({
    paymentId: payment.id,
    account,
    data: { email: "buyer@example.com" },
    collectedAt: new Date(500)
  })
  return {
    option: Effect.map(gateway.findOption("opt_00000000000000000001" as OptionId), Option.isSome),
    data: Effect.map(gateway.findCollectedData(payment.id, account), Option.isSome)
  }
})

describe("the gateway's background purge", () => {
  it.effect("deletes an option a day after it expired, buyer data after the retention", () =>
    Effect.gen(function* () {
      const held = yield* seeded
      yield* Effect.forkScoped(purgeGatewayDataForever)
      yield* TestClock.adjust(Duration.millis(OPTION_PURGE_GRACE_MS))
      // The hourly pass at 24 h sees the option expired exactly a day ago (minus 1 s): kept.
      expect(yield* held.option).toBe(true)
      yield* TestClock.adjust(GATEWAY_PURGE_EVERY)
      expect(yield* held.option).toBe(false)
      expect(yield* held.data).toBe(true)
      // Ten days after the payment went final (at the first hourly pass past it): the data goes.
      yield* TestClock.adjust(Duration.millis(9 * DAY - 2 * 60 * 60_000))
      expect(yield* held.data).toBe(true)
      yield* TestClock.adjust(Duration.hours(1))
      expect(yield* held.data).toBe(true)
      yield* TestClock.adjust(Duration.hours(1))
      expect(yield* held.data).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(MemoryStorage, config(10))))
  )

  it.effect("keeps buyer data 90 days by default", () =>
    Effect.gen(function* () {
      const held = yield* seeded
      // One pass at a time: the hourly schedule is the test above's.
      yield* TestClock.setTime(90 * DAY + 1000)
      expect(yield* purgeGatewayDataOnce).toEqual({ options: 1, collectedData: 0 })
      expect(yield* held.data).toBe(true)
      yield* TestClock.setTime(90 * DAY + 1001)
      expect(yield* purgeGatewayDataOnce).toEqual({ options: 0, collectedData: 1 })
      expect(yield* held.data).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(MemoryStorage, config(undefined))))
  )
})
