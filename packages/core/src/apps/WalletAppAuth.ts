/**
 * How gateway routes authenticate, as the API definition declares it: a
 * wallet app's secret `Api-Key`, or its public `App-Id` (then `Client-Id` is
 * recorded as given); both may be sent when they name the same app. The
 * router runs the check and hands the app to handlers as `CurrentWalletApp`.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import { failureOf } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import type { WalletApp } from "./WalletApp.js"

/** The wallet app the request comes from: its name and icon describe the buyer's wallet. */
export class CurrentWalletApp extends Context.Tag("@pay/core/CurrentWalletApp")<
  CurrentWalletApp,
  WalletApp
>() {}

export class WalletAppAuth extends HttpApiMiddleware.Tag<WalletAppAuth>()("WalletAppAuth", {
  provides: CurrentWalletApp,
  failure: failureOf(
    ApiErrors.MissingAuthHeaders,
    ApiErrors.MissingAppId,
    ApiErrors.InvalidApiKey,
    ApiErrors.InvalidAppId,
    ApiErrors.ConflictingAuthHeaders,
    // The app is known but the operator disabled it: 403.
    ApiErrors.AppDisabled,
    // The app's or the payment's rate limit, when set: 429 with Retry-After.
    ApiErrors.RateLimited
  ),
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "Api-Key", in: "header" }),
    appId: HttpApiSecurity.apiKey({ key: "App-Id", in: "header" })
  }
}) {}
