/**
 * The storage port for partners and their keys.
 */
import { Context, type Effect, type Option } from "effect"
import type { AuditLog } from "../audit/AuditEntry.js"
import type { Partner, PartnerId } from "../identity/Partner.js"
import type { ApiKeyLookupTaken, KeyRecord } from "../keys/KeyRecord.js"

export class PartnerStore extends Context.Tag("@pay/core/PartnerStore")<
  PartnerStore,
  {
    /** The partner and its first key (and the key's audit entries), together or not at all. */
    readonly insert: (
      partner: Partner,
      key: KeyRecord,
      audit?: AuditLog<KeyRecord>
    ) => Effect.Effect<void, ApiKeyLookupTaken>
    readonly find: (id: PartnerId) => Effect.Effect<Option.Option<Partner>>
    /** Oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<Partner>>
  }
>() {}
