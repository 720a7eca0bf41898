/**
 * The storage port for partners and their keys.
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKeyPrefixTaken, Partner, PartnerId, StoredApiKey } from "./Partner.js"

export class PartnerStore extends Context.Tag("@pay/core/PartnerStore")<
  PartnerStore,
  {
    /** The partner and its first key, together or not at all. */
    readonly insert: (partner: Partner, key: StoredApiKey) => Effect.Effect<void, ApiKeyPrefixTaken>
    readonly findByKeyPrefix: (
      prefix: string
    ) => Effect.Effect<Option.Option<{ readonly partner: Partner; readonly key: StoredApiKey }>>
    readonly find: (id: PartnerId) => Effect.Effect<Option.Option<Partner>>
    /** Oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<Partner>>
  }
>() {}
