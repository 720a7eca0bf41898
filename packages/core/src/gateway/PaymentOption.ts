/**
 * A payment option: one way for one buyer account to pay one payment, with
 * the exact EIP-3009 authorization the wallet is asked to sign. Options are
 * stored when offered, so a confirm is checked against what was offered (the
 * amount, the payee, the time window), never against what the wallet echoes.
 */
import { type Brand, Context, type Effect, type Option } from "effect"
import type { ReceiveAuthorization } from "../chain/Eip3009.js"
import type { PaymentId } from "../payments/Payment.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"

/** `opt_` and the engine's id body. */
export type OptionId = string & Brand.Brand<"OptionId">

export const isOptionId = (value: string): value is OptionId => /^opt_[0-9A-Za-z]{20}$/.test(value)

export interface PaymentOption {
  readonly id: OptionId
  readonly paymentId: PaymentId
  readonly account: Caip10
  readonly asset: Caip19
  /** The token amount, in the token's minor units: `authorization.value`. */
  readonly authorization: ReceiveAuthorization
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

export class GatewayStore extends Context.Tag("@pay/core/GatewayStore")<
  GatewayStore,
  {
    /**
     * Stores the options offered in one answer, all or none. An id already
     * stored (or twice in the batch), or an unknown payment, is a defect.
     */
    readonly insertOptions: (options: ReadonlyArray<PaymentOption>) => Effect.Effect<void>
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
  }
>() {}
