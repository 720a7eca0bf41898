/**
 * The storage port for merchants.
 */
import { Context, type Effect, type Option } from "effect"
import type { Outbox } from "../events/Event.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { PartnerId } from "../identity/Partner.js"
import type { Merchant, MerchantChanges, MerchantId, MerchantStatus } from "./Merchant.js"

export interface MerchantQuery {
  readonly partnerId: PartnerId
  readonly status?: MerchantStatus | undefined
  /** Case-insensitive substring of the name or the id. */
  readonly search?: string | undefined
  /** Keyset: only merchants whose id sorts before this one (newest first). */
  readonly before?: MerchantId | undefined
  readonly limit: number
}

export interface MerchantPage {
  readonly merchants: ReadonlyArray<Merchant>
  /** Every match of the filters, ignoring `before` and `limit`. */
  readonly totalCount: number
}

export class MerchantStore extends Context.Tag("@pay/core/MerchantStore")<
  MerchantStore,
  {
    /** Inserts, and records the idempotent response and the events in the same transaction. */
    readonly insert: (
      merchant: Merchant,
      completion?: IdempotencyCompletion,
      outbox?: Outbox<Merchant>
    ) => Effect.Effect<void>
    /** Deleted merchants too: callers decide what a deleted one means. */
    readonly find: (id: MerchantId) => Effect.Effect<Option.Option<Merchant>>
    /** Not deleted ones, newest first. */
    readonly list: (query: MerchantQuery) => Effect.Effect<MerchantPage>
    /** None when there is no such merchant, or it is deleted. */
    readonly update: (
      id: MerchantId,
      changes: MerchantChanges,
      at: Date,
      outbox?: Outbox<Merchant>
    ) => Effect.Effect<Option.Option<Merchant>>
    readonly setStatus: (
      id: MerchantId,
      status: MerchantStatus,
      at: Date,
      outbox?: Outbox<Merchant>
    ) => Effect.Effect<Option.Option<Merchant>>
    /** Sets `deletedAt` once; later calls keep the first time (and write no events). */
    readonly markDeleted: (
      id: MerchantId,
      at: Date,
      outbox?: Outbox<Merchant>
    ) => Effect.Effect<Option.Option<Merchant>>
  }
>() {}
