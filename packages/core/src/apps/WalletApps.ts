/**
 * Wallet apps: creating one with its key, listing them, and authenticating a
 * gateway request by its `Api-Key` or `App-Id` header.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import { toFieldIssues } from "../http/Decode.js"
import { ApiKeys } from "../keys/ApiKeys.js"
import { InvalidInput } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { makeTtlCache } from "../shared/TtlCache.js"
import { GatewayAuthError, NewWalletApp, WalletApp, WalletAppId } from "./WalletApp.js"
import { WalletAppStore } from "./WalletAppStore.js"

/** The credentials a gateway request presents; an empty value counts as absent. */
export interface WalletCredentials {
  /** The `Api-Key` header: the app's secret key. */
  readonly apiKey?: string | undefined
  /** The `App-Id` header: the app's public id (`app_...`). */
  readonly appId?: string | undefined
  /** The `Client-Id` header: only read to tell "App-Id missing" from "nothing sent". */
  readonly clientId?: string | undefined
}

/** The credentials of a request, by lower-case header name (as `EngineRequest.header`). */
export const walletCredentials = (
  header: (name: string) => string | undefined
): WalletCredentials => ({
  apiKey: header("api-key"),
  appId: header("app-id"),
  clientId: header("client-id")
})

const KNOWN_APPS_MAX = 10_000
/** Apps are never changed or removed: a found one is remembered for a minute. */
const KNOWN_APP_TTL_MS = 60_000
const isWalletAppId = Schema.is(WalletAppId)
const decodeNewApp = Schema.decodeUnknownEither(NewWalletApp, {
  errors: "all",
  onExcessProperty: "error"
})
const given = (value: string | undefined) =>
  value === undefined || value === "" ? undefined : value
const refuse = (reason: GatewayAuthError["reason"]) => Effect.fail(new GatewayAuthError({ reason }))

export class WalletApps extends Effect.Service<WalletApps>()("@pay/core/WalletApps", {
  effect: Effect.gen(function* () {
    const store = yield* WalletAppStore
    const keys = yield* ApiKeys
    // Resolved once: a per-request service lookup costs more than the check itself.
    const clock = yield* Effect.clock

    /** Validates the name and icon; returns the key in clear, the only time it is ever seen. */
    const create = (input: NewWalletApp) =>
      Effect.gen(function* () {
        const valid = yield* Either.mapLeft(decodeNewApp(input), (error) => {
          const issues = toFieldIssues(error)
          return new InvalidInput({
            message: issues.map((i) => `${i.field}: ${i.message}`).join("; "),
            issues
          })
        })
        const now = new Date(yield* Clock.currentTimeMillis)
        const app = new WalletApp({
          id: yield* newId<WalletAppId>("app"),
          name: valid.name,
          iconUrl: valid.iconUrl ?? null,
          createdAt: now
        })
        // Four random lookup ids all taken is not a case to handle: a defect.
        const { secret } = yield* keys
          .mintAndStore({ kind: "wallet_app", id: app.id }, {}, (key) => store.insert(app, key))
          .pipe(Effect.catchTag("ApiKeyLookupTaken", Effect.die))
        return { app, apiKey: secret }
      })

    const byKey = keys.verifier(
      "wallet_app",
      (id) => store.find(id as WalletAppId),
      () => new GatewayAuthError({ reason: "invalid_api_key" })
    )

    const known = makeTtlCache<WalletApp>(KNOWN_APP_TTL_MS, KNOWN_APPS_MAX)
    const byAppId = (appId: string): Effect.Effect<WalletApp, GatewayAuthError> => {
      const now = clock.unsafeCurrentTimeMillis()
      const cached = known.get(appId, now)
      if (cached !== undefined) return Effect.succeed(cached)
      if (!isWalletAppId(appId)) return refuse("invalid_app_id")
      return Effect.flatMap(store.find(appId), (found) => {
        if (Option.isNone(found)) return refuse("invalid_app_id")
        known.set(appId, found.value, now)
        return Effect.succeed(found.value)
      })
    }

    /**
     * The wallet app a gateway request comes from. `Api-Key` alone or `App-Id`
     * alone identifies it; both are accepted when they name the same app. When
     * both are sent, each is checked on its own first (a wrong key is
     * `invalid_api_key`, an unknown id `invalid_app_id`), and two valid ones
     * naming different apps are `conflicting_auth_headers`. Not suspended:
     * call it when the request arrives.
     */
    const authenticate = (
      credentials: WalletCredentials
    ): Effect.Effect<WalletApp, GatewayAuthError> => {
      const apiKey = given(credentials.apiKey)
      const appId = given(credentials.appId)
      if (apiKey === undefined) {
        if (appId !== undefined) return byAppId(appId)
        return refuse(
          given(credentials.clientId) === undefined ? "missing_auth_headers" : "missing_app_id"
        )
      }
      if (appId === undefined) return byKey(apiKey)
      return Effect.flatMap(byKey(apiKey), (app) =>
        app.id === appId
          ? Effect.succeed(app)
          : Effect.zipRight(byAppId(appId), refuse("conflicting_auth_headers"))
      )
    }

    return { create, list: store.list, find: store.find, authenticate } as const
  }),
  dependencies: [ApiKeys.Default]
}) {}

/** `WalletApps.authenticate` on the service in context: what a gateway route calls. */
export const authenticateWallet = (
  credentials: WalletCredentials
): Effect.Effect<WalletApp, GatewayAuthError, WalletApps> =>
  Effect.flatMap(WalletApps, (apps) => apps.authenticate(credentials))
