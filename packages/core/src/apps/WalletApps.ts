/**
 * Wallet apps: creating one with its key, listing them, and authenticating a
 * gateway request by its `Api-Key` or `App-Id` header.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import { toFieldIssues } from "../http/Decode.js"
import { ApiKeys } from "../keys/ApiKeys.js"
import { InvalidInput } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { spanned } from "../shared/Spans.js"
import { makeTtlCache } from "../shared/TtlCache.js"
import {
  GatewayAuthError,
  NewWalletApp,
  WalletApp,
  WalletAppId,
  WalletAppNotFound,
  type WalletAppStatus
} from "./WalletApp.js"
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
/**
 * A found app (and so its status) is remembered this long: the operator's
 * disable must reach every instance within 5 s, as a revoked key does (a
 * verified key, with its app, is remembered as long: ApiKeys.VERIFIED_KEY_TTL_MS).
 */
export const KNOWN_APP_TTL_MS = 4_000
/**
 * An app's last use is written at most once in this window per instance (and, by
 * the store's condition, between instances): `pay apps list` shows it to the minute.
 */
export const APP_LAST_USED_PRECISION_MS = 60_000
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
          createdAt: now,
          status: "active",
          lastUsedAt: null
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

    /** The apps whose use this instance recorded lately: a request writes nothing else. */
    const touched = makeTtlCache<true>(APP_LAST_USED_PRECISION_MS, KNOWN_APPS_MAX)
    const touch = (app: WalletApp, now: number): Effect.Effect<void> => {
      touched.set(app.id, true, now)
      return store
        .touch(app.id, new Date(now), new Date(now - APP_LAST_USED_PRECISION_MS))
        .pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("recording a wallet app's last use failed", cause)
          )
        )
    }
    /** Checked after the credentials, so a wrong key or id still answers as such. */
    const admitted = (app: WalletApp): Effect.Effect<WalletApp, GatewayAuthError> => {
      if (app.status === "disabled") return refuse("app_disabled")
      const now = clock.unsafeCurrentTimeMillis()
      return touched.get(app.id, now) === undefined
        ? Effect.as(touch(app, now), app)
        : Effect.succeed(app)
    }

    /**
     * The wallet app a gateway request comes from. `Api-Key` alone or `App-Id`
     * alone identifies it; both are accepted when they name the same app. When
     * both are sent, each is checked on its own first (a wrong key is
     * `invalid_api_key`, an unknown id `invalid_app_id`), and two valid ones
     * naming different apps are `conflicting_auth_headers`. An app the
     * operator disabled is `app_disabled`, by either header. Not suspended:
     * call it when the request arrives.
     */
    const authenticate = (
      credentials: WalletCredentials
    ): Effect.Effect<WalletApp, GatewayAuthError> => {
      const apiKey = given(credentials.apiKey)
      const appId = given(credentials.appId)
      if (apiKey === undefined) {
        if (appId !== undefined) return Effect.flatMap(byAppId(appId), admitted)
        return refuse(
          given(credentials.clientId) === undefined ? "missing_auth_headers" : "missing_app_id"
        )
      }
      if (appId === undefined) return Effect.flatMap(byKey(apiKey), admitted)
      return Effect.flatMap(byKey(apiKey), (app) =>
        app.id === appId
          ? admitted(app)
          : Effect.zipRight(byAppId(appId), refuse("conflicting_auth_headers"))
      )
    }

    /**
     * The operator's switch. This instance forgets the app at once; the others
     * within KNOWN_APP_TTL_MS (and a verified key's app within VERIFIED_KEY_TTL_MS).
     */
    const setStatus = (id: string, status: WalletAppStatus) =>
      Effect.gen(function* () {
        if (!isWalletAppId(id)) return yield* new WalletAppNotFound({ appId: id })
        const updated = yield* store.setStatus(id, status)
        known.forget(id)
        if (Option.isNone(updated)) return yield* new WalletAppNotFound({ appId: id })
        return updated.value
      })

    return {
      create,
      list: store.list,
      find: store.find,
      setStatus: spanned("WalletApps.setStatus", setStatus),
      authenticate
    } as const
  }),
  dependencies: [ApiKeys.Default]
}) {}

/** `WalletApps.authenticate` on the service in context: what a gateway route calls. */
export const authenticateWallet = (
  credentials: WalletCredentials
): Effect.Effect<WalletApp, GatewayAuthError, WalletApps> =>
  Effect.flatMap(WalletApps, (apps) => apps.authenticate(credentials))
