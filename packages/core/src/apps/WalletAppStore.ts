/**
 * The storage port for wallet apps and their keys.
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKeyPrefixTaken } from "../partners/Partner.js"
import type { StoredAppKey, WalletApp, WalletAppId } from "./WalletApp.js"

export class WalletAppStore extends Context.Tag("@pay/core/WalletAppStore")<
  WalletAppStore,
  {
    /** The app and its key, together or not at all; a taken prefix stores neither. */
    readonly insert: (app: WalletApp, key: StoredAppKey) => Effect.Effect<void, ApiKeyPrefixTaken>
    readonly find: (id: WalletAppId) => Effect.Effect<Option.Option<WalletApp>>
    readonly findByKeyPrefix: (
      prefix: string
    ) => Effect.Effect<Option.Option<{ readonly app: WalletApp; readonly key: StoredAppKey }>>
    /** Oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<WalletApp>>
  }
>() {}
