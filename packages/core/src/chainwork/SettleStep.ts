/**
 * The settle step of a chain job: the merchant's money, the amount paid less
 * fees, sent from the collector to the merchant's settlement destination for
 * the asset and watched to its confirmations (Transactions.ts). The job is
 * completed with the payment's settlement in one write; a merchant with no
 * destination for the asset leaves the funds with the collector.
 *
 * A merchant that is not active (inactive, suspended or deleted) when the
 * step would sign the first transfer has its settlement held: the job ends
 * with the settlement `held` and a `payment.settlement_held` event, and the
 * funds stay with the collector until the merchant is active again
 * (`ChainWork.resumeHeld`, which the status change runs) or an operator
 * settles it (`pay payments settle`, a job marked `release`); queued again,
 * it is `pending`. A transfer already signed is never held: it may be on its
 * way.
 */
import { Effect, Option } from "effect"
import type { Address } from "viem"
import { Chain, type ChainNetwork } from "../chain/Chain.js"
import { stamp } from "../events/NewEvent.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { merchantPayable, merchantStatusOf } from "../merchants/Merchant.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import { SettlementStore } from "../merchants/SettlementStore.js"
import { newChainJob } from "../payments/ChainJob.js"
import type { Payment, PaymentSettlement } from "../payments/Payment.js"
import { paymentEvent } from "../payments/PaymentOutbox.js"
import { addressOfCaip10, type Caip10 } from "../shared/Caip.js"
import { EngineMode } from "../shared/EngineMode.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { again, completed, done, type Held, RETRY_MS } from "./Step.js"
import type { Transactions } from "./Transactions.js"

const addressOf = (account: Caip10) => addressOfCaip10(account) as Address

/** The settle step, on the runner's transactions. */
export const makeSettleStep = ({ callOrRefusal, sendTransfer, watch }: Transactions) =>
  Effect.gen(function* () {
    const store = yield* ChainJobStore
    const chain = yield* Chain
    const settlements = yield* SettlementStore
    const merchants = yield* MerchantStore
    const registry = yield* TokenRegistry
    const { publicUrl } = yield* HttpConfig
    const { livemode } = yield* EngineMode
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())

    /**
     * Completes the job with the payment's settlement and its event
     * (`payment.settled`, or `payment.settlement_held` when the funds stay
     * with the collector), in one write.
     */
    const complete = (held: Held, payment: Payment, settlement: PaymentSettlement) =>
      Effect.gen(function* () {
        const merchant = Option.getOrUndefined(yield* merchants.find(payment.merchantId))
        const at = now()
        const written = { ...payment, settlement }
        const type = settlement.status === "settled" ? "payment.settled" : "payment.settlement_held"
        yield* Effect.logInfo("settlement", {
          paymentId: payment.id,
          merchantId: payment.merchantId,
          status: settlement.status,
          amount: settlement.amount.toString(),
          ...(held.job.payload.kind === "settle" ? { asset: held.job.payload.asset } : {}),
          txHash: settlement.txHash
        })
        yield* store.complete(held.lease, at, {
          paymentId: payment.id,
          settlement,
          events: [
            paymentEvent(yield* stamp, type, written, merchant, {
              registry,
              publicUrl,
              now: at,
              livemode
            })
          ]
        })
      })

    /** The merchant's money: the amount less fees, from the collector to its destination. */
    const settleStep = (held: Held, network: ChainNetwork, payment: Payment) =>
      Effect.gen(function* () {
        const payload = held.job.payload
        if (payload.kind !== "settle" || payment.settlement === null) return done
        if (payment.settlement.status === "settled") return done
        const settled = (txHash: string | null, destination: Caip10) =>
          Effect.as(
            complete(held, payment, {
              ...payment.settlement!,
              status: "settled",
              destination,
              txHash,
              settledAt: now()
            }),
            completed
          )

        if (held.transfers.length === 0) {
          if (payload.release !== true) {
            const merchant = Option.getOrUndefined(yield* merchants.find(payment.merchantId))
            if (!merchantPayable(merchant)) {
              yield* Effect.logWarning(
                `payment ${payment.id}: merchant ${payment.merchantId} is ${merchantStatusOf(merchant)}; its settlement is held until it is active again`
              )
              yield* complete(held, payment, { ...payment.settlement, status: "held" })
              // Made active again meanwhile: `resumeHeld` may have found this job still active.
              if (
                merchantPayable(Option.getOrUndefined(yield* merchants.find(payment.merchantId)))
              ) {
                yield* store.requeue(
                  newChainJob(payment.id, held.job.chainId, payload, now()),
                  "settle"
                )
              }
              return completed
            }
          }
          // The destination in force when the payment succeeded (CollectStep.ts), never one
          // set since, unless an operator overrode it (audited); only a payment that had none
          // then looks for the merchant's current one.
          let destination =
            held.job.destination ?? payload.destination ?? payment.settlement.destination
          if (destination === null) {
            const live = yield* settlements.listByMerchant(payment.merchantId)
            const match = live.find((s) => s.asset === payload.asset)
            if (match === undefined) {
              yield* Effect.logWarning(
                `payment ${payment.id}: merchant ${payment.merchantId} has no settlement for ${payload.asset}; the funds stay with the collector`
              )
              yield* complete(held, payment, {
                ...payment.settlement,
                status: "no_destination",
                destination: null
              })
              return completed
            }
            destination = match.destination
          }
          if (held.job.destination === null) {
            // Fixed on the job before its transfer is signed: the watch reads it from there.
            yield* store.setDestination(held.lease, destination, now())
            held.job = { ...held.job, destination }
          }
          if (payload.amount === 0n) return yield* settled(null, destination)
          const call = yield* callOrRefusal(
            chain.transferCall(payload.asset, addressOf(destination), payload.amount)
          )
          if (call._tag === "Refused") {
            // Never given up: the collector may be short of funds for a while.
            return again(30_000, `the token refuses the settlement transfer: ${call.reason}`)
          }
          return yield* sendTransfer(held, network, "call", call.call, undefined)
        }

        const destination = held.job.destination
        return yield* watch(
          held,
          network,
          (mined, success) =>
            Effect.gen(function* () {
              if (mined.purpose === "call" && success && destination !== null) {
                return yield* settled(mined.hash, destination)
              }
              // Reverted (or a cancel): nothing moved; a fresh transfer on a fresh nonce.
              yield* Effect.logWarning(
                `payment ${payment.id}: settlement ${mined.hash} did not move the funds; sending again`
              )
              yield* store.dropNonce(held.lease, now())
              held.job = { ...held.job, nonce: null }
              held.transfers = []
              return again(RETRY_MS, `settlement ${mined.hash} reverted`)
            }),
          () => undefined
        )
      })

    return settleStep
  })
