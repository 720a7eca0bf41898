import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck } from "effect"
import type { PartnerId } from "../identity/Partner.js"
import type { MerchantId } from "../merchants/Merchant.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import {
  isFinal,
  PAYMENT_STATUSES,
  type Payment,
  type PaymentId,
  type PaymentStatus
} from "./Payment.js"
import {
  applyChange,
  decide,
  effectiveStatus,
  type PaymentTransition
} from "./PaymentStateMachine.js"

const EXPIRES = 1_000_000

const payment = (status: PaymentStatus): Payment => ({
  id: "pay_00000000000000000000" as PaymentId,
  partnerId: "ptnr_00000000000000000000" as PartnerId,
  merchantId: "mrch_00000000000000000000" as MerchantId,
  referenceId: "r",
  amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 100n },
  status,
  failureCode: null,
  cancelledReason: null,
  expiresAt: new Date(EXPIRES),
  createdAt: new Date(0),
  updatedAt: new Date(0),
  finalAt: null,
  checkout: null,
  tokenAmount: null,
  buyer: null,
  transaction: null,
  txId: null,
  refund: null,
  fees: null,
  settlement: null,
  livemode: true
})

const ASSET = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const transitions: ReadonlyArray<PaymentTransition> = [
  {
    _tag: "StartProcessing",
    tokenAmount: { asset: ASSET, value: 1n },
    buyer: {
      account: "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10,
      providerName: null,
      providerIcon: null
    },
    transaction: null
  },
  { _tag: "Expire" },
  { _tag: "Cancel", reason: "cancelled_by_merchant" },
  { _tag: "Decline" },
  { _tag: "Succeed", txId: "0xabc", transaction: null },
  { _tag: "Fail", failureCode: "transaction_reverted" }
]

/** Every edge SPEC.md section 3 allows, and nothing else. */
const ALLOWED = new Set([
  "requires_action>processing",
  "requires_action>expired",
  "requires_action>cancelled",
  "requires_action>failed",
  "processing>succeeded",
  "processing>failed"
])

const aTransition = FastCheck.constantFrom(...transitions)
const aTime = FastCheck.integer({ min: 0, max: 2 * EXPIRES })

describe("the payment state machine", () => {
  it.prop(
    "only ever takes an allowed edge, and never leaves a final state",
    [FastCheck.constantFrom(...PAYMENT_STATUSES), aTransition, aTime],
    ([status, transition, now]) => {
      const decision = decide(payment(status), transition, new Date(now))
      if (isFinal(status)) expect(Either.isLeft(decision)).toBe(true)
      if (Either.isRight(decision)) {
        expect(ALLOWED.has(`${status}>${decision.right.status}`)).toBe(true)
        expect(decision.right.finalAt !== null).toBe(isFinal(decision.right.status))
      }
    }
  )

  it.prop("expires only when due, and never starts processing once due", [aTime], ([now]) => {
    const open = payment("requires_action")
    const expire = decide(open, { _tag: "Expire" }, new Date(now))
    const start = decide(open, transitions[0]!, new Date(now))
    expect(Either.isRight(expire)).toBe(now >= EXPIRES)
    expect(Either.isRight(start)).toBe(now < EXPIRES)
    if (now >= EXPIRES) expect(start).toEqual(Either.left({ _tag: "Expired" }))
    expect(effectiveStatus(open, new Date(now))).toBe(
      now >= EXPIRES ? "expired" : "requires_action"
    )
  })

  it.prop(
    "keeps every random sequence on an allowed path that ends in at most one final state",
    [FastCheck.array(FastCheck.tuple(aTransition, aTime), { maxLength: 12 })],
    ([steps]) => {
      let current = payment("requires_action")
      const path: Array<PaymentStatus> = [current.status]
      let clock = 0
      for (const [transition, advance] of steps) {
        clock = Math.min(clock + Math.floor(advance / 8), 2 * EXPIRES)
        const decision = decide(current, transition, new Date(clock))
        if (Either.isRight(decision)) {
          current = applyChange(current, decision.right)
          path.push(current.status)
        }
      }
      for (let i = 1; i < path.length; i++) {
        expect(ALLOWED.has(`${path[i - 1]}>${path[i]}`)).toBe(true)
      }
      expect(path.filter(isFinal).length).toBeLessThanOrEqual(1)
      // Once final, nothing follows.
      const firstFinal = path.findIndex(isFinal)
      if (firstFinal !== -1) expect(firstFinal).toBe(path.length - 1)
    }
  )

  it("records what each transition brings", () => {
    const at = new Date(10)
    const started = Either.getOrThrow(decide(payment("requires_action"), transitions[0]!, at))
    const processing = applyChange(payment("requires_action"), started)
    expect(processing.tokenAmount).toEqual({ asset: ASSET, value: 1n })
    expect(processing.buyer?.account).toContain("0x00000000000000000000000000000000000000b0")
    const succeeded = applyChange(
      processing,
      Either.getOrThrow(
        decide(processing, { _tag: "Succeed", txId: "0xabc", transaction: null }, at)
      )
    )
    expect(succeeded).toMatchObject({
      status: "succeeded",
      txId: "0xabc",
      finalAt: at,
      failureCode: null
    })
    const declined = Either.getOrThrow(decide(payment("requires_action"), { _tag: "Decline" }, at))
    expect(declined).toMatchObject({ status: "failed", failureCode: "declined_user" })
    const cancelled = Either.getOrThrow(
      decide(payment("requires_action"), { _tag: "Cancel", reason: "cancelled_by_user" }, at)
    )
    expect(cancelled).toMatchObject({ status: "cancelled", cancelledReason: "cancelled_by_user" })
    expect(
      decide(
        payment("requires_action"),
        { _tag: "Cancel", reason: "cancelled_by_merchant" },
        new Date(EXPIRES)
      )
    ).toEqual(Either.left({ _tag: "WrongState", status: "expired" }))
  })
})
