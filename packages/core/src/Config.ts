/**
 * The engine's own settings, given by whoever runs it (the standalone server
 * reads them from the environment; an embedding platform passes them).
 */
import { Context } from "effect"
import type { ChainWorkSettings } from "./chainwork/ChainWorkConfig.js"
import type { FeeSchedule } from "./fees/Fees.js"
import type { GatewaySettings } from "./gateway/GatewayConfig.js"
import type { RateLimitsSettings } from "./ratelimit/RateLimitConfig.js"
import type { WebhookDeliverySettings } from "./webhooks/WebhookWorkConfig.js"

export interface PayConfigShape {
  /** Public base URL for buyer links, data-collection pages and logos (WIRE.md). */
  readonly publicUrl: string
  /** Request bodies larger than this are refused with 413. */
  readonly maxBodyBytes: number
  /** Lifetime of a payment created without `expiresAt` (WIRE.md: 5 minutes). */
  readonly paymentLifetimeMs?: number
  /** The longest a status request may be held (`maxPollMs` above it is capped). */
  readonly maxLongPollMs?: number
  /**
   * The most status requests this engine holds at once (long-polls); one more
   * is answered 503 `too_many_long_polls` with `Retry-After`. Default 20,000.
   */
  readonly maxHeldLongPolls?: number
  /**
   * How often this engine's sweeper records the payments whose time has
   * passed (each `payment.expired`). Default 5 s (`DEFAULT_EXPIRY_SWEEP_MS`).
   */
  readonly expirySweepMs?: number
  /** Quote locks and the data-collection policy of the wallet gateway. */
  readonly gateway?: GatewaySettings
  /** The engine's fees, taken from each succeeded payment before it is settled (fees/Fees.ts). */
  readonly fees?: FeeSchedule
  /** How the durable chain work polls and leases its jobs. */
  readonly chainWork?: ChainWorkSettings
  /** How webhooks are claimed, sent and retried. */
  readonly webhookDelivery?: WebhookDeliverySettings
  /** Requests a second per partner API key, wallet app and payment; each off unless set. */
  readonly rateLimits?: RateLimitsSettings
  /**
   * The engine's mode, decided once at start (`payEngineLayer`: from its
   * networks, `livemodeOf`): `false` when every network is a test network.
   * Each payment records the mode it was created in. Absent: live.
   */
  readonly livemode?: boolean
}

export class PayConfig extends Context.Tag("@pay/core/PayConfig")<PayConfig, PayConfigShape>() {}

export const DEFAULT_PAYMENT_LIFETIME_MS = 5 * 60_000
export const DEFAULT_MAX_LONG_POLL_MS = 30_000
export const DEFAULT_MAX_HELD_LONG_POLLS = 20_000
/** How often the sweeper records expired payments, unless `expirySweepMs` says otherwise. */
export const DEFAULT_EXPIRY_SWEEP_MS = 5_000
/** The range `expirySweepMs` may take: 100 ms to an hour. */
export const MIN_EXPIRY_SWEEP_MS = 100
export const MAX_EXPIRY_SWEEP_MS = 3_600_000
/** The `Retry-After` (seconds) of a long-poll refused because too many are held. */
export const LONG_POLL_RETRY_AFTER_SECONDS = 2
/** A payment cannot be asked to stay open longer than this. */
export const MAX_PAYMENT_LIFETIME_MS = 30 * 24 * 60 * 60_000

/** The engine's mode (`PayConfigShape.livemode`): live unless decided otherwise. */
export const engineLivemode = (config: Pick<PayConfigShape, "livemode">): boolean =>
  config.livemode ?? true
