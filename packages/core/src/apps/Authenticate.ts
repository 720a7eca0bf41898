/**
 * The wallet middleware's check (WalletAppAuth.ts declares it): the
 * credentials the request presents, verified by the \`WalletApps\` service.
 */
import { Effect } from "effect"
import type { Authenticator } from "../http/Route.js"
import { WalletAppAuth } from "./WalletAppAuth.js"
import { WalletApps } from "./WalletApps.js"

/** The check of the wallet middleware, on the `WalletApps` service. */
export const walletAuthenticator = Effect.map(
  WalletApps,
  (apps): Authenticator => ({
    middleware: WalletAppAuth,
    authenticate: (request) =>
      Effect.map(
        apps.authenticate({
          apiKey: request.header("api-key")?.trim(),
          appId: request.header("app-id")?.trim(),
          clientId: request.header("client-id")?.trim()
        }),
        (app) => ({ service: app })
      )
  })
)
