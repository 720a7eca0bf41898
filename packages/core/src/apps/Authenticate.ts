/**
 * The wallet middleware's check (WalletAppAuth.ts declares it): the
 * credentials the request presents, verified by the \`WalletApps\` service,
 * then the app's rate limit when one is set (RateLimits.perWalletApp).
 */
import { Effect } from "effect"
import type { Authenticated, Authenticator } from "../http/Route.js"
import { admit, RateLimits } from "../ratelimit/RateLimits.js"
import type { WalletApp } from "./WalletApp.js"
import { WalletAppAuth } from "./WalletAppAuth.js"
import { WalletApps } from "./WalletApps.js"

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
      authenticate: (request) =>
        Effect.map(
          apps.authenticate({
            apiKey: request.header("api-key")?.trim(),
            appId: request.header("app-id")?.trim(),
            clientId: request.header("client-id")?.trim()
          }),
          authenticated
        ),
      admit:
        perWalletApp === undefined
          ? undefined
          : ({ service }) => admit(perWalletApp, (service as WalletApp).id)
    }
  }
)
