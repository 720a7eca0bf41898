/**
 * The deploy step of a chain job: a buyer's account not deployed yet
 * (ERC-6492) is deployed by its factory call, sent by the network's deployer
 * (never the collector: the factory and its calldata are the buyer's, so the
 * deployer holds gas money only) and watched to its confirmations
 * (Transactions.ts). Once the account has code, whoever deployed it, the
 * payment's collect job is queued with the same signature and this job ends.
 *
 * Nothing half done, no nonce wasted: a payment failed before sending took no
 * nonce; an authorization that expires while the factory call waits gives its
 * nonce to a cancel. A crash between queueing the collect job and ending this
 * one is safe: the next look finds the code, and the collect job already there.
 */
import { Effect, Option } from "effect"
import { Chain, type ChainNetwork } from "../chain/Chain.js"
import { parsePayerSignature } from "../chain/PayerSignature.js"
import { newChainJob } from "../payments/ChainJob.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import { GatewayStore, type OptionId } from "../payments/PaymentOption.js"
import { Payments } from "../payments/Payments.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { cancelCall } from "./NonceGaps.js"
import { done, type Held } from "./Step.js"
import type { Transactions } from "./Transactions.js"

/** The deploy step, on the runner's transactions; `wake` tells the runner a job was queued. */
export const makeDeployStep = (
  { callOrRefusal, sendTransfer, watch }: Transactions,
  wake: Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const chain = yield* Chain
    const store = yield* ChainJobStore
    const payments = yield* Payments
    const options = yield* GatewayStore
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())

    const fail = (paymentId: PaymentId, failureCode: Payment["failureCode"] & string) =>
      payments
        .transition(paymentId, { _tag: "Fail", failureCode })
        .pipe(Effect.catchTags({ InvalidState: () => Effect.void }), Effect.asVoid)

    const deployStep = (held: Held, network: ChainNetwork, payment: Payment) =>
      Effect.gen(function* () {
        const payload = held.job.payload
        if (payload.kind !== "deploy") return done
        const found = yield* options.findOption(payload.optionId as OptionId)
        if (Option.isNone(found)) {
          yield* Effect.logError(`chain job ${held.job.id}: option ${payload.optionId} is gone`)
          yield* fail(payment.id, "transaction_dropped")
          return done
        }
        const auth = found.value.authorization
        const expiredAt = (head: { readonly timestamp: bigint }) =>
          head.timestamp >= auth.validBefore
        const failureFor = (head: { readonly timestamp: bigint }) =>
          expiredAt(head)
            ? ("authorization_expired" as const)
            : ("account_deployment_failed" as const)
        const deployed = Effect.map(
          chain.codeAt(network.chainId, auth.from),
          (code) => code !== "0x"
        )

        /**
         * The account has code: the payment's collect job is queued (unless it
         * is there already: a rerun after a crash) and run at once; this job is over.
         */
        const collectNext = Effect.gen(function* () {
          const existing = yield* store.findByPayment(payment.id, "collect")
          if (Option.isNone(existing)) {
            const collect = newChainJob(
              payment.id,
              network.chainId,
              {
                kind: "collect",
                optionId: payload.optionId,
                signature: payload.signature,
                approvals: payload.approvals
              },
              now()
            )
            if (yield* store.requeue(collect, "collect")) yield* wake
          }
          yield* Effect.logInfo(`payment ${payment.id}: account ${auth.from} deployed; collecting`)
          return done
        })

        if (held.transfers.length === 0) {
          // Deployed already, by the buyer's wallet or another payment's job: nothing to send.
          if (yield* deployed) return yield* collectNext
          const head = yield* chain.head(network.chainId)
          const parsed = parsePayerSignature(payload.signature)
          const deployment =
            typeof parsed !== "string" && parsed.kind === "counterfactual"
              ? parsed.deployment
              : undefined
          // Refused here, before any nonce is taken: nothing to send, nothing to cancel.
          const refusal =
            network.deployer === undefined
              ? `${network.chainId} has no deployer`
              : deployment === undefined
                ? "the signature carries no factory call (not ERC-6492)"
                : expiredAt(head)
                  ? "the authorization expired before the account was deployed"
                  : undefined
          // The port's check against the next block, under the network's gas cap.
          const call =
            refusal === undefined && deployment !== undefined
              ? yield* callOrRefusal(chain.deploymentCall(network.chainId, deployment))
              : { _tag: "Refused" as const, reason: refusal ?? "" }
          if (call._tag === "Call") {
            return yield* sendTransfer(held, network, "call", call.call, undefined)
          }
          yield* Effect.logWarning(
            `payment ${payment.id}: account ${auth.from} cannot be deployed (${call.reason})`
          )
          // A nonce already handed to this job is used all the same, by a cancel.
          if (held.job.nonce !== null && network.deployer !== undefined) {
            return yield* sendTransfer(
              held,
              network,
              "cancel",
              cancelCall(network.deployer),
              undefined
            )
          }
          yield* fail(payment.id, failureFor(head))
          return done
        }

        const sender = held.transfers[0]!.sender
        if (payment.status === "processing") {
          const head = yield* chain.head(network.chainId)
          if (expiredAt(head)) {
            // Nothing can collect it any more: the payment fails now; the job goes on to use
            // its nonce (a cancel replaces a factory call not mined yet).
            yield* Effect.logWarning(
              `payment ${payment.id}: its authorization expired before the account was deployed`
            )
            yield* fail(payment.id, "authorization_expired")
          }
        }

        return yield* watch(
          held,
          network,
          (mined, success, head) =>
            Effect.gen(function* () {
              if (mined.purpose === "call" && !expiredAt(head)) {
                // Reverted: someone else's deployment in the same block makes ours revert.
                if (success || (yield* deployed)) return yield* collectNext
              }
              yield* fail(payment.id, failureFor(head))
              return done
            }),
          (head) => (expiredAt(head) ? { purpose: "cancel", call: cancelCall(sender) } : undefined)
        )
      })

    return deployStep
  })
