/**
 * The storage port for wallet apps and their keys.
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKeyLookupTaken, KeyRecord } from "../keys/KeyRecord.js"
import type { WalletApp, WalletAppId, WalletAppStatus } from "./WalletApp.js"

export class WalletAppStore extends Context.Tag("@pay/core/WalletAppStore")<
  WalletAppStore,
  {
    /** The app and its key, together or not at all; a taken lookup id stores neither. */
    readonly insert: (app: WalletApp, key: KeyRecord) => Effect.Effect<void, ApiKeyLookupTaken>
    readonly find: (id: WalletAppId) => Effect.Effect<Option.Option<WalletApp>>
    /** Oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<WalletApp>>
    /** The app as it is now; none when no app has this id. */
    readonly setStatus: (
      id: WalletAppId,
      status: WalletAppStatus
    ) => Effect.Effect<Option.Option<WalletApp>>
    /**
     * Records a use at `at` unless one was recorded after `ifBefore`: instances
     * sharing a database then write it at most once in that window between them.
     */
    readonly touch: (id: WalletAppId, at: Date, ifBefore: Date) => Effect.Effect<void>
  }
>() {}
