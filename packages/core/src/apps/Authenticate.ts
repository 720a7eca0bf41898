/**
 * The wallet middleware's check (WalletAppAuth.ts declares it): the
 * credentials the request presents, verified by the \`WalletApps\` service,
 * then the app's rate limit when one is set (RateLimits.perWalletApp).
 */
import { Effect } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import type { EngineRequest } from "../http/Exchange.js"
import { misplacedKey } from "../http/MisplacedKey.js"
import { RequestError } from "../http/RequestError.js"
import type { Authenticated, Authenticator } from "../http/Route.js"
import { admit, RateLimits } from "../ratelimit/RateLimits.js"
import type { WalletApp } from "./WalletApp.js"
import { WalletAppAuth } from "./WalletAppAuth.js"
import { WalletApps } from "./WalletApps.js"

/**
 * The 401 of a gateway request without credentials, saying which to send and,
 * when a key was sent in a header the gateway does not read, which one.
 */
export const missingWalletCredentials = (request: EngineRequest): RequestError => {
  const misplaced = misplacedKey(request, {
    read: [],
    bearer: false,
    elsewhere: () => "which wallet gateway routes do not read"
  })
  return RequestError.of(
    ApiErrors.MissingAuthHeaders,
    `Missing wallet credentials: send the wallet app's Api-Key header or its App-Id header${
      misplaced === undefined ? "" : ` (a key was sent in ${misplaced.header}, ${misplaced.why})`
    }`,
    { issues: [{ field: "Api-Key", message: "is required unless App-Id is sent" }] }
  )
}

const given = (request: EngineRequest, name: string): string | undefined => {
  const value = request.header(name)?.trim()
  return value === "" ? undefined : value
}

/** The check of the wallet middleware, on the `WalletApps` service. */
export const walletAuthenticator = Effect.map(
  Effect.all([WalletApps, RateLimits]),
  ([apps, { perWalletApp }]): Authenticator => {
    // One per app object (the verified-key cache hands out the same one for a while).
    const byApp = new WeakMap<WalletApp, Authenticated>()
    const authenticated = (app: WalletApp): Authenticated => {
      let known = byApp.get(app)
      if (known === undefined) {
        known = { service: app, caller: { walletAppId: app.id } }
        byApp.set(app, known)
      }
      return known
    }
    return {
      middleware: WalletAppAuth,
      authenticate: (request) => {
        const credentials = {
          apiKey: given(request, "api-key"),
          appId: given(request, "app-id"),
          clientId: given(request, "client-id")
        }
        return credentials.apiKey === undefined &&
          credentials.appId === undefined &&
          credentials.clientId === undefined
          ? Effect.fail(missingWalletCredentials(request))
          : Effect.map(apps.authenticate(credentials), authenticated)
      },
      admit:
        perWalletApp === undefined
          ? undefined
          : ({ service }) => admit(perWalletApp, (service as WalletApp).id)
    }
  }
)
