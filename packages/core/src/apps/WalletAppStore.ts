/**
 * The storage port for wallet apps and their keys.
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKeyLookupTaken, KeyRecord } from "../keys/KeyRecord.js"
import type { WalletApp, WalletAppId } from "./WalletApp.js"

export class WalletAppStore extends Context.Tag("@pay/core/WalletAppStore")<
  WalletAppStore,
  {
    /** The app and its key, together or not at all; a taken lookup id stores neither. */
    readonly insert: (app: WalletApp, key: KeyRecord) => Effect.Effect<void, ApiKeyLookupTaken>
    readonly find: (id: WalletAppId) => Effect.Effect<Option.Option<WalletApp>>
    /** Oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<WalletApp>>
  }
>() {}
