/**
 * The collect step of a chain job: the buyer's EIP-3009 authorization, sent
 * by the network's collector and watched to its outcome (Transactions.ts);
 * an authorization that expires first gives its nonce to a cancel. The
 * outcome decides the payment: success, with its fees, in the write that
 * ends this job and queues the settle job (held here, its transfer recorded),
 * or failure.
 *
 * A collected payment succeeds only when its transfer has the network's
 * confirmations, counted against the chain's head at each look; a receipt
 * that disappears meanwhile (a reorganisation) simply sends the job back to
 * watching, as the payment never left `processing`.
 */
import { Effect, Option } from "effect"
import type { Address } from "viem"
import { Chain, type ChainNetwork, type ChainUnavailable, tokenOf } from "../chain/Chain.js"
import { accountSignatureOf, parsePayerSignature } from "../chain/PayerSignature.js"
import { type Permission, permissionOf } from "../chain/Permission.js"
import { computeFees, FeesConfig, feeRuleFor } from "../fees/Fees.js"
import { merchantPayable } from "../merchants/Merchant.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import { SettlementStore } from "../merchants/SettlementStore.js"
import {
  type ChainTransfer,
  type HeldStart,
  heldJob,
  heldStart,
  newChainJob
} from "../payments/ChainJob.js"
import type { Payment, PaymentFees, PaymentId } from "../payments/Payment.js"
import { GatewayStore, type OptionId, type PaymentOption } from "../payments/PaymentOption.js"
import { Payments } from "../payments/Payments.js"
import { addressOfCaip10, type Caip10 } from "../shared/Caip.js"
import { ChainWorkConfig } from "./ChainWorkConfig.js"
import { nativeTokenOf } from "./CollectorLedger.js"
import { makeNativeCollect } from "./NativeCollect.js"
import { cancelCall } from "./NonceGaps.js"
import { again, done, type Held, handover, type Step } from "./Step.js"
import type { Transactions } from "./Transactions.js"

const addressOf = (account: Caip10) => addressOfCaip10(account) as Address

/** Refusals that are the token's own (funds, a used authorization), whoever signed. */
const NOT_THE_SIGNATURE = /balance|used or canceled|expired/i

/**
 * Whether the token's refusal, before sending, is the account refusing its
 * own signature: the token says so ("invalid signature"), or the signature
 * is an account's (ERC-1271, or ERC-6492 once deployed) and the token gives
 * no reason of its own. The confirm checked it, so the account changed since
 * (an owner removed, a delegation switched) or was deployed otherwise.
 */
export const refusedSignature = (signature: `0x${string}`, reason: string) => {
  if (/invalid signature/i.test(reason)) return true
  const parsed = parsePayerSignature(signature)
  return typeof parsed !== "string" && parsed.kind !== "ecdsa" && !NOT_THE_SIGNATURE.test(reason)
}

/** The collect step, on the runner's transactions. */
export const makeCollectStep = ({
  callOrRefusal,
  signRecordSend,
  sendTransfer,
  watch
}: Transactions) =>
  Effect.gen(function* () {
    const chain = yield* Chain
    const payments = yield* Payments
    const options = yield* GatewayStore
    const settlements = yield* SettlementStore
    const merchants = yield* MerchantStore
    const { leaseMs } = yield* ChainWorkConfig
    const feeSchedule = yield* FeesConfig
    const native = yield* makeNativeCollect
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())

    /** The payment's collection: its authorization sent by the collector, watched to its outcome. */
    const collectStep = (held: Held, network: ChainNetwork, payment: Payment) =>
      Effect.gen(function* () {
        const payload = held.job.payload
        if (payload.kind !== "collect") return done
        const found = yield* options.findOption(payload.optionId as OptionId)
        if (Option.isNone(found)) {
          yield* Effect.logError(`chain job ${held.job.id}: option ${payload.optionId} is gone`)
          yield* fail(payment.id, "transaction_dropped")
          return done
        }
        const option = found.value
        if (payload.paid !== undefined) {
          // A native option's: the buyer sent the coin; nothing to send, only to watch.
          return yield* native.watchTransfer(
            network,
            payment,
            option,
            payload.paid,
            (mined) => succeed(held, payment, network, mined),
            (code) => fail(payment.id, code)
          )
        }
        const auth = option.authorization
        const permission = permissionOf(option, network)
        const expiredAt = (head: { readonly timestamp: bigint }) =>
          head.timestamp >= auth.validBefore
        const failureFor = (head: { readonly timestamp: bigint }) =>
          expiredAt(head) ? ("authorization_expired" as const) : ("transaction_reverted" as const)

        if (held.transfers.length === 0) {
          // The buyer's approvals of Permit2 first: the transfer cannot pass before they are in.
          const waiting = yield* approvalsMined(payload.approvals ?? [], network, payment, auth)
          if (waiting !== undefined) return waiting
          // The account's own signature: an ERC-6492 wrapper's inner one (its deploy job ran).
          const call = yield* callOrRefusal(
            chain.receiveCall(option.asset, permission, accountSignatureOf(payload.signature))
          )
          if (call._tag === "Call")
            return yield* sendTransfer(held, network, "call", call.call, undefined)
          const head = yield* chain.head(network.chainId)
          yield* Effect.logWarning(
            `payment ${payment.id}: the token refuses the transfer (${call.reason})`
          )
          // A nonce already handed to this job is used all the same, by a cancel.
          if (held.job.nonce !== null) {
            return yield* sendTransfer(
              held,
              network,
              "cancel",
              cancelCall(network.collector),
              undefined
            )
          }
          yield* fail(
            payment.id,
            expiredAt(head)
              ? "authorization_expired"
              : (yield* approvalShort(permission, option))
                ? "approval_failed"
                : refusedSignature(payload.signature, call.reason)
                  ? "signature_rejected"
                  : "transaction_reverted"
          )
          return done
        }

        if (payment.status === "processing") {
          const lapsed = yield* lapsedUnused(network, option.asset, permission)
          if (lapsed) {
            // Nothing can collect it any more: the payment fails now; the job goes on to
            // use its nonce (a cancel replaces the call), so no gap is left behind.
            yield* Effect.logWarning(
              `payment ${payment.id}: its authorization expired unused before the collection went through`
            )
            yield* fail(payment.id, "authorization_expired")
          }
        }

        return yield* watch(
          held,
          network,
          (mined, success, head) =>
            Effect.gen(function* () {
              if (mined.purpose === "call" && success) {
                return yield* succeed(held, payment, network, mined)
              }
              // Reverted, or the nonce went to the cancel: nothing moved.
              yield* fail(payment.id, failureFor(head))
              return done
            }),
          (head) =>
            expiredAt(head) ? { purpose: "cancel", call: cancelCall(network.collector) } : undefined
        )
      })

    /**
     * Whether the authorization can no longer be used: a block as deep as the
     * network's confirmations is past its `validBefore`, and as of that block
     * the token has not used it. A reorganisation undoes less than that, and
     * no later block can use it, so a late collection cannot land after.
     */
    const lapsedUnused = (
      network: ChainNetwork,
      asset: PaymentOption["asset"],
      permission: Permission
    ) =>
      Effect.gen(function* () {
        const auth = permission.authorization
        const head = yield* chain.head(network.chainId)
        const depth = BigInt(Math.max(1, network.confirmations) - 1)
        if (head.number < depth) return false
        const settledAt = head.number - depth
        const block = depth === 0n ? head : yield* chain.head(network.chainId, settledAt)
        if (block.timestamp <= auth.validBefore) return false
        return !(yield* chain.authorizationUsed(asset, permission, settledAt))
      })

    /**
     * Whether the buyer's approvals are mined: undefined once they all are
     * (the transfer may go), else the step to take. One that reverted, or
     * that no block took before the authorization expired, fails the payment
     * (`approval_failed`); nothing was sent, so there is no nonce to use up.
     */
    const approvalsMined = (
      hashes: ReadonlyArray<`0x${string}`>,
      network: ChainNetwork,
      payment: Payment,
      auth: PaymentOption["authorization"]
    ): Effect.Effect<
      Step | undefined,
      ChainUnavailable | Effect.Effect.Error<ReturnType<typeof fail>>
    > =>
      Effect.gen(function* () {
        for (const hash of hashes) {
          const state = yield* chain.transactionState(network.chainId, hash)
          if (state._tag === "Mined" && state.success) continue
          const head = yield* chain.head(network.chainId)
          if ((state._tag === "Mined" && !state.success) || head.timestamp >= auth.validBefore) {
            yield* Effect.logWarning(
              `payment ${payment.id}: the buyer's approval ${hash} ${state._tag === "Mined" ? "reverted" : "was not mined before the authorization expired"}`
            )
            yield* fail(payment.id, "approval_failed")
            return done
          }
          // A wait, not a failure (a note would count as one, and back off): the approval is
          // the buyer's to get mined, and its hash is recorded in the job since the confirm.
          yield* Effect.logDebug("chain job step", {
            step: "approval",
            txHash: hash,
            state: state._tag
          })
          return again(network.pollIntervalMs)
        }
        return undefined
      })

    /** Whether a Permit2 transfer was refused for want of the buyer's allowance. */
    const approvalShort = (permission: Permission, option: PaymentOption) =>
      permission.kind !== "permit2"
        ? Effect.succeed(false)
        : Effect.map(
            chain.allowance(option.asset, permission.authorization.from, permission.permit2),
            (allowed) => allowed < permission.authorization.value
          )

    const fail = (paymentId: PaymentId, failureCode: Payment["failureCode"] & string) =>
      payments
        .transition(paymentId, { _tag: "Fail", failureCode })
        .pipe(Effect.catchTags({ InvalidState: () => Effect.void }), Effect.asVoid)

    /**
     * Success, with the fees and the amount to settle, in one write that also
     * ends this job and queues the settle job held by this process, its
     * transfer to the merchant signed and recorded there when the merchant
     * has a destination for the asset: then sent, and the settle job run at
     * once (`Handover`). A destination missing, a zero amount or a refusal
     * leaves the settle job without a transfer, for its own step to decide.
     */
    const succeed = (
      held: Held,
      payment: Payment,
      network: ChainNetwork,
      mined: Pick<ChainTransfer, "hash" | "nonce">
    ) =>
      Effect.gen(function* () {
        const paid = payment.tokenAmount
        if (paid === null)
          return yield* Effect.dieMessage(`payment ${payment.id} has no token amount`)
        const token = tokenOf(chain.networks, paid.asset)?.token
        const charged = computeFees(
          feeRuleFor(feeSchedule, payment.partnerId, payment.merchantId),
          paid.value,
          token?.decimals ?? 0
        )
        const fees =
          token?.authorization === "native" && nativeTokenOf(network) !== undefined
            ? withSettlementGas(charged, paid.value, yield* settlementGas(network))
            : charged
        const at = now()
        const amount = paid.value - fees.total
        const settle = newChainJob(
          payment.id,
          network.chainId,
          { kind: "settle", asset: paid.asset, amount },
          at
        )
        const start = heldStart(settle.id, at, leaseMs)
        // The merchant's destination for the asset now, kept with the payment: the settlement
        // goes there whenever it is sent (a held one resumed, one the collector sends later), so
        // a destination changed after the payment succeeded redirects none of its money.
        const snapshot = (yield* settlements.listByMerchant(payment.merchantId)).find(
          (s) => s.asset === paid.asset
        )?.destination
        const write = (settleHeld: HeldStart) =>
          payments.transitionFenced(payment.id, {
            _tag: "Succeed",
            txId: mined.hash,
            transaction: { networkId: network.reference, hash: mined.hash, nonce: mined.nonce },
            fees,
            settlement: {
              amount,
              status: "pending",
              destination: snapshot ?? null,
              txHash: null,
              settledAt: null
            },
            settle: { ...settle, held: settleHeld },
            completes: held.lease
          })
        // A merchant no longer active gets no transfer signed here: the settle step holds it.
        const payable = merchantPayable(
          Option.getOrUndefined(yield* merchants.find(payment.merchantId))
        )
        const destination = amount === 0n || !payable ? undefined : snapshot
        const call =
          destination === undefined
            ? undefined
            : yield* callOrRefusal(chain.transferCall(paid.asset, addressOf(destination), amount))
        const queue = Effect.gen(function* () {
          if (destination === undefined || call?._tag !== "Call") {
            const unsent: HeldStart =
              snapshot === undefined ? start : { ...start, destination: snapshot }
            return yield* Effect.as(write(unsent), { ...settle, held: unsent })
          }
          return yield* signRecordSend(
            { id: settle.id, nonce: null, sender: network.collector },
            network,
            "call",
            call.call,
            undefined,
            (transfer) => {
              const settleHeld: HeldStart = { ...start, destination, transfer }
              return Effect.as(write(settleHeld), { ...settle, held: settleHeld })
            }
          )
        })
        const queued = yield* queue.pipe(
          // Decided meanwhile by another writer: nothing was written, this job is over.
          Effect.catchTag("InvalidState", () => Effect.succeed(undefined))
        )
        if (queued === undefined) return done
        return handover(heldJob(queued))
      })

    /**
     * The most the settlement of a native payment can burn: a plain transfer's gas at the
     * network's max fee now. It is kept as the fees' `network` part, so the merchant's coin
     * pays its own settlement and the operator's gas money never does (CollectorLedger.ts);
     * a transfer to a contract that needs more, or a replacement at a higher fee, burns the
     * difference from the operator's gas money, which the ledger checks first.
     */
    const settlementGas = (network: ChainNetwork) =>
      Effect.map(chain.fees(network.chainId), (quote) => NATIVE_TRANSFER_GAS * quote.maxFeePerGas)

    return collectStep
  })

/** A plain transfer of the coin to an account without code. */
export const NATIVE_TRANSFER_GAS = 21_000n

/** The fees with the settlement's gas added (`network`), never more in all than the amount paid. */
export const withSettlementGas = (fees: PaymentFees, paid: bigint, gas: bigint): PaymentFees => {
  const network = gas < paid - fees.total ? gas : paid - fees.total
  return { ...fees, network, total: fees.total + network }
}
