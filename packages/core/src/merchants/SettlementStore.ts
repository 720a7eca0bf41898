/**
 * The storage port for crypto settlements. Uniqueness of (merchant, asset)
 * among live settlements is the database's job, so concurrent requests cannot
 * both register the same asset. Each change writes its events (`outbox`) and
 * its audit entries (`audit`) in its own transaction, only when it changed
 * something.
 */
import { Context, type Effect, type Option } from "effect"
import type { AuditLog } from "../audit/AuditEntry.js"
import type { Outbox } from "../events/Event.js"
import type { IdempotencyCompletion } from "../idempotency/IdempotencyStore.js"
import type { Caip10 } from "../shared/Caip.js"
import type { MerchantId } from "./Merchant.js"
import type { CryptoSettlement, CryptoSettlementId, SettlementAssetConflict } from "./Settlement.js"

/** A settlement before and after one write. */
export interface SettlementChange {
  readonly before: CryptoSettlement
  readonly after: CryptoSettlement
}

export class SettlementStore extends Context.Tag("@pay/core/SettlementStore")<
  SettlementStore,
  {
    /** All or none; the idempotent response is written in the same transaction. */
    readonly insertAll: (
      settlements: ReadonlyArray<CryptoSettlement>,
      completion?: IdempotencyCompletion,
      outbox?: Outbox<ReadonlyArray<CryptoSettlement>>,
      audit?: AuditLog<ReadonlyArray<CryptoSettlement>>
    ) => Effect.Effect<void, SettlementAssetConflict>
    /** Live settlements of a merchant, oldest first. */
    readonly listByMerchant: (
      merchantId: MerchantId
    ) => Effect.Effect<ReadonlyArray<CryptoSettlement>>
    readonly updateDestination: (
      merchantId: MerchantId,
      id: CryptoSettlementId,
      destination: Caip10,
      at: Date,
      outbox?: Outbox<CryptoSettlement>,
      /** Given the settlement as it was (read in the same transaction) and as it is now. */
      audit?: AuditLog<SettlementChange>
    ) => Effect.Effect<Option.Option<CryptoSettlement>>
    /** Soft removal, so that a repeated call can still say it is gone (its events only the first time). */
    readonly remove: (
      merchantId: MerchantId,
      id: CryptoSettlementId,
      at: Date,
      outbox?: Outbox<CryptoSettlementId>,
      /** Given the settlement as it was before its removal. */
      audit?: AuditLog<CryptoSettlement>
    ) => Effect.Effect<"removed" | "already_removed" | "not_found">
  }
>() {}
