/**
 * The native coin's migration on either store (SQLite 0026, PostgreSQL 0027):
 * the rows written before it, by the stores themselves (two options, one a
 * Permit2 option with its approvals and rate; a processing payment with its
 * collect job and a recorded transfer), and what the stores read back after
 * it: every option as written, a native option stored beside them, the old
 * transfer worth 0, nothing owed or returnable. How each store takes its
 * schema back to before the migration and runs it again is its own test's.
 */
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ChainJobStore } from "../src/chainwork/ChainJobStore.js"
import { Merchants } from "../src/merchants/Merchants.js"
import { Partners } from "../src/partners/Partners.js"
import type { ChainTransfer, NewChainJob } from "../src/payments/ChainJob.js"
import type { Payment } from "../src/payments/Payment.js"
import { GatewayStore, type OptionId, type PaymentOption } from "../src/payments/PaymentOption.js"
import { PaymentStore } from "../src/payments/PaymentStore.js"
import { Payments } from "../src/payments/Payments.js"
import type { Caip2, Caip10, Caip19 } from "../src/shared/Caip.js"
import { findCurrency } from "../src/shared/Currency.js"

const BASE = "eip155:8453" as Caip2
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const ETH_BASE = "eip155:8453/slip44:60" as Caip19
const COLLECTOR = "0x00000000000000000000000000000000000000c0" as const
const at = (ms: number) => new Date(Date.UTC(2026, 10, 1) + ms)

const anOption = (payment: Payment, n: number, fields: Partial<PaymentOption> = {}) =>
  ({
    id: `opt_${String(n).padStart(20, "0")}` as OptionId,
    paymentId: payment.id,
    account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
    asset: USDC_BASE,
    method: "eip3009",
    approvals: [],
    rate: null,
    authorization: {
      from: "0x00000000000000000000000000000000000000b0",
      to: COLLECTOR,
      value: 10_500_000n + BigInt(n),
      validAfter: 0n,
      validBefore: 2n ** 64n,
      nonce: `0x${"0f".repeat(32)}`
    },
    expiresAt: at(300_000 + n),
    quoted: true,
    collectData: false,
    clientId: null,
    createdAt: at(n),
    ...fields
  }) as PaymentOption

/** The rows written before the migration, by the stores; what `readBackAfter` checks. */
export const writeRowsBefore = Effect.gen(function* () {
  const { partner } = yield* (yield* Partners).create({ name: "Native Co" })
  const merchant = yield* (yield* Merchants).create(partner, {
    name: "Shop",
    email: "a@b.co",
    iconUrl: null
  })
  const payment = yield* (yield* Payments).create(partner, merchant.id, {
    referenceId: "r1",
    amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 100n }
  })
  const options = [
    anOption(payment, 1),
    anOption(payment, 2, {
      method: "permit2",
      approvals: [0n, 2n ** 256n - 1n],
      rate: { numerator: 10n ** 40n + 7n, denominator: 3n, readings: [] }
    })
  ]
  yield* (yield* GatewayStore).insertOptions(options)
  const job: NewChainJob = {
    id: `cjob_${"0".repeat(19)}1` as NewChainJob["id"],
    paymentId: payment.id,
    chainId: BASE,
    payload: { kind: "collect", optionId: options[0]!.id, signature: "0x01" },
    runAt: at(10),
    createdAt: at(10)
  }
  yield* (yield* PaymentStore).transition(payment.id, "requires_action", {
    status: "processing",
    at: at(10),
    finalAt: null,
    tokenAmount: { asset: USDC_BASE, value: 10_500_001n },
    enqueue: job
  })
  const jobs = yield* ChainJobStore
  const [claimed] = yield* jobs.claimDue(at(11), 1, 60_000)
  const transfer: ChainTransfer = {
    hash: `0x${"ab".repeat(32)}`,
    jobId: claimed!.job.id,
    chainId: BASE,
    sender: COLLECTOR,
    nonce: 0,
    purpose: "call",
    to: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    data: "0xe3ee160e",
    gas: 95_000n,
    value: 0n,
    maxFeePerGas: 2n ** 70n,
    maxPriorityFeePerGas: 1n,
    raw: "0x02",
    createdAt: at(12)
  }
  yield* jobs.recordTransfer(claimed!.lease, transfer)
  return { payment, options, jobId: claimed!.job.id, transfer }
})

export type RowsBefore = Effect.Effect.Success<typeof writeRowsBefore>

/**
 * The rows read back by the stores after the migration: every option as
 * written, a native option stored beside them, the transfer worth 0, nothing
 * owed or returnable, the payment still processing without fees.
 */
export const readBackAfter = (written: RowsBefore) =>
  Effect.gen(function* () {
    const gateway = yield* GatewayStore
    for (const option of written.options) {
      expect(Option.getOrThrow(yield* gateway.findOption(option.id))).toEqual(option)
    }
    const native = anOption(written.payment, 3, {
      asset: ETH_BASE,
      method: "native",
      authorization: { ...written.options[0]!.authorization, value: 10n ** 18n }
    })
    yield* gateway.insertOptions([native])
    expect(Option.getOrThrow(yield* gateway.findOption(native.id))).toEqual(native)
    const jobs = yield* ChainJobStore
    expect(yield* jobs.transfersOf(written.jobId)).toEqual([written.transfer])
    expect(yield* jobs.owedIn(USDC_BASE)).toBe(0n)
    expect(yield* jobs.returnable(10)).toEqual([])
    const payment = Option.getOrThrow(yield* (yield* PaymentStore).find(written.payment.id))
    expect(payment.status).toBe("processing")
    expect(payment.fees).toBeNull()
  })
