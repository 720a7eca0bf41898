/**
 * The gateway's settings (from `PAY_CONFIG` in the standalone server): how
 * long a quoted price holds, and when the buyer's data must be collected.
 */
import type { Amount } from "../shared/Amount.js"

export interface CollectDataPolicy {
  /** Collect for every payment. */
  readonly always?: boolean
  /** Collect for a payment of at least one of these amounts (same unit). */
  readonly atLeast?: ReadonlyArray<Amount>
}

export interface GatewaySettings {
  /** How long an option's price is locked; never past the payment's expiry. */
  readonly quoteLockMs?: number
  readonly collectData?: CollectDataPolicy
  /**
   * How long the data a buyer entered is kept once the payment is final (or expired unpaid),
   * then deleted by the background purge (GatewayPurge.ts). Default 90 days.
   */
  readonly buyerDataRetentionMs?: number
}

export const DEFAULT_BUYER_DATA_RETENTION_MS = 90 * 24 * 60 * 60_000

export const DEFAULT_QUOTE_LOCK_MS = 120_000
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
