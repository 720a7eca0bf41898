/**
 * The gateway's settings (from `PAY_CONFIG` in the standalone server): how
 * long a quoted price holds, and when the buyer's data must be collected.
 */
import { Context, Schema } from "effect"
import type { Amount } from "../shared/Amount.js"
import { wholeNumber } from "../shared/WholeNumber.js"

/** An amount already made (`AmountInput` decodes one from its wire form). */
const AmountGiven = Schema.declare(
  (u): u is Amount => typeof u === "object" && u !== null && "unit" in u && "value" in u,
  { message: () => "must be an amount ({ unit, value })" }
)

export const CollectDataPolicy = Schema.Struct({
  /** Collect for every payment. */
  always: Schema.optional(Schema.Boolean),
  /** Collect for a payment of at least one of these amounts (same unit). */
  atLeast: Schema.optional(Schema.Array(AmountGiven))
})
export type CollectDataPolicy = typeof CollectDataPolicy.Type

export const GatewaySettings = Schema.Struct({
  /** How long an option's price is locked; never past the payment's expiry. */
  quoteLockMs: Schema.optionalWith(wholeNumber(100, 3_600_000, "milliseconds"), {
    default: () => 120_000
  }),
  collectData: Schema.optional(CollectDataPolicy),
  /**
   * How long the data a buyer entered is kept once the payment is final (or expired unpaid),
   * then deleted by the background purge (retention/Purge.ts). Default 90 days.
   */
  buyerDataRetentionMs: Schema.optionalWith(
    wholeNumber(86_400_000, 3650 * 86_400_000, "milliseconds"),
    { default: () => 90 * 24 * 60 * 60_000 }
  )
})
export type GatewaySettings = typeof GatewaySettings.Type

export class GatewayConfig extends Context.Tag("@pay/core/GatewayConfig")<
  GatewayConfig,
  GatewaySettings
>() {}
/** The most accounts one options request may name. */
export const MAX_ACCOUNTS = 20

const sameUnit = (a: Amount, b: Amount): boolean =>
  a.unit.kind === "fiat"
    ? b.unit.kind === "fiat" && a.unit.currency.code === b.unit.currency.code
    : b.unit.kind === "token" && a.unit.asset === b.unit.asset

/** Whether `policy` asks for the buyer's data before a payment of `amount`. */
export const mustCollectData = (policy: CollectDataPolicy | undefined, amount: Amount): boolean =>
  policy !== undefined &&
  (policy.always === true ||
    (policy.atLeast ?? []).some((floor) => sameUnit(floor, amount) && amount.value >= floor.value))
