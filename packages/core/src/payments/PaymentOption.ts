/**
 * A payment option: one way for one buyer account to pay one payment, with
 * the exact authorization the wallet is asked to sign (EIP-3009's, or a
 * Permit2 transfer's: chain/Permission.ts). Options are
 * stored when offered, so a confirm is checked against what was offered (the
 * amount, the payee, the time window), never against what the wallet echoes.
 */
import { type Brand, Context, type Effect, type Option } from "effect"
import type { ReceiveAuthorization } from "../chain/Eip3009.js"
import type { TokenAuthorization } from "../chain/Permission.js"
import type { PriceQuote } from "../pricing/Pricing.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import type { PaymentId } from "./Payment.js"

/** `opt_` and the engine's id body. */
export type OptionId = string & Brand.Brand<"OptionId">

export const isOptionId = (value: string): value is OptionId => /^opt_[0-9A-Za-z]{20}$/.test(value)

export interface PaymentOption {
  readonly id: OptionId
  readonly paymentId: PaymentId
  readonly account: Caip10
  readonly asset: Caip19
  /** How the buyer authorizes the transfer: what it signs (chain/Permission.ts). */
  readonly method: TokenAuthorization
  /** The token amount, in the token's minor units: `authorization.value`. */
  readonly authorization: ReceiveAuthorization
  /**
   * The ERC-20 `approve(Permit2, amount)` transactions the buyer sends
   * before it signs, in order: none when its allowance covers the payment
   * (and for EIP-3009); the most there is when it has none; zero first when
   * it has some, short (USDT refuses to change one non-zero allowance to
   * another, and a token does not say whether it does).
   */
  readonly approvals: ReadonlyArray<bigint>
  /**
   * The rate a fiat price was converted at, frozen for the option, with the
   * feed rounds it was read from; null when the payment was asked in the token.
   */
  readonly rate: PriceQuote | null
  /**
   * When the quote goes stale (confirm answers 409 `quote_expired`): the
   * authorization's `validBefore`, never after the payment's own expiry.
   */
  readonly expiresAt: Date
  /** Whether the rate was locked for this option (a fiat payment) or the amount was asked in the token. */
  readonly quoted: boolean
  /** Whether the buyer's data must be collected before this option can be confirmed. */
  readonly collectData: boolean
  /** The wallet's `Client-Id` header when the option was offered, recorded as given. */
  readonly clientId: string | null
  readonly createdAt: Date
}

/** What the buyer entered on the data-collection page or sent with a confirm, as validated. */
export interface CollectedDataRecord {
  readonly paymentId: PaymentId
  readonly account: Caip10
  readonly data: Readonly<Record<string, unknown>>
  readonly collectedAt: Date
}

/**
 * The most options one payment keeps across its options requests. A request's options are
 * its accounts (at most 20) times the tokens of their chains, each locked for the quote lock
 * (2 minutes by default): 200 is ten full refreshes inside one lock. Past it, the payment's
 * expired options make room, oldest first; a request that would still pass it stores nothing.
 */
export const MAX_OPTIONS_PER_PAYMENT = 200

export interface OptionsCap {
  /** The most options the payment may hold once the batch is in. */
  readonly max: number
  /** Options expiring at or before this may be deleted to make room. */
  readonly now: Date
}

/** What one batch of the option purge did: options deleted, and paid-with ones marked kept. */
export interface OptionsPurged {
  readonly deleted: number
  readonly kept: number
}

/** Whether a capped batch went in, or was refused (nothing stored) for lack of room. */
export type OptionsInserted = "inserted" | "full"

export class GatewayStore extends Context.Tag("@pay/core/GatewayStore")<
  GatewayStore,
  {
    /**
     * Stores the options offered in one answer, all or none. An id already
     * stored (or twice in the batch), or an unknown payment, is a defect.
     */
    readonly insertOptions: (
      options: ReadonlyArray<PaymentOption>,
      /**
       * With a cap (every batch one payment's): the payment's expired options are deleted,
       * oldest first, as far as needed for the batch to fit; if its unexpired ones leave no
       * room, nothing is stored and the answer is "full". Atomic against concurrent batches.
       */
      cap?: OptionsCap
    ) => Effect.Effect<OptionsInserted>
    readonly findOption: (id: OptionId) => Effect.Effect<Option.Option<PaymentOption>>
    /**
     * Keeps the latest data for the payment and account (a second save replaces
     * the first). The account is matched exactly as given, case included:
     * CAIP-10 addresses are case-sensitive on some chains, so callers normalise.
     */
    readonly saveCollectedData: (record: CollectedDataRecord) => Effect.Effect<void>
    readonly findCollectedData: (
      paymentId: PaymentId,
      account: Caip10
    ) => Effect.Effect<Option.Option<CollectedDataRecord>>
    /**
     * One batch of the purge of options that expired before `expiredBefore`: at most
     * `limit` of them, oldest first, never one of a payment still `processing` (its
     * collection reads its option). Each is deleted, unless its payment was paid with it
     * (the option a collect or deploy job names): that one is kept as long as the payment
     * (refunds read its rate) and marked so, out of the purge's index, so later batches
     * never read it again. `deleted + kept` below `limit`: none is left. Safe with many
     * instances: a delete another instance did deletes nothing.
     */
    readonly purgeOptions: (expiredBefore: Date, limit: number) => Effect.Effect<OptionsPurged>
    /**
     * Deletes the data collected (before `finalBefore`) for payments final before
     * `finalBefore` (`finalAt`, or the expiry of a payment left unpaid). A batch of at most
     * `limit`; the count deleted.
     */
    readonly purgeCollectedData: (finalBefore: Date, limit: number) => Effect.Effect<number>
  }
>() {}
