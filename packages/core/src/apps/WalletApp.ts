/**
 * Wallet apps: the wallets that call the gateway routes, each with its own API
 * key (the same kind of key as a partner's). An app's name and icon are what
 * buyers see as their account provider (`accountProviderName`,
 * `accountProviderIcon`).
 */
import { Schema } from "effect"
import { prefixedId } from "../shared/Ids.js"
import { DisplayName, HttpsUrl } from "../shared/Text.js"

export const WalletAppId = prefixedId("app", "WalletAppId")
export type WalletAppId = typeof WalletAppId.Type

/**
 * Whether the gateway serves the app: only the operator switches it (`pay apps
 * disable`), because its `App-Id` is public and revoking its keys leaves that working.
 */
export const WalletAppStatus = Schema.Literal("active", "disabled")
export type WalletAppStatus = typeof WalletAppStatus.Type

export class WalletApp extends Schema.Class<WalletApp>("WalletApp")({
  id: WalletAppId,
  name: Schema.String,
  /** An https:// URL, or null for none. */
  iconUrl: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  status: WalletAppStatus,
  /** When a gateway request last came from it, to the minute (null: never). */
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf)
}) {}

/** What creating an app takes: a name of 1 to 256 characters (trimmed), an https icon or none. */
export const NewWalletApp = Schema.Struct({
  name: Schema.compose(Schema.Trim, DisplayName),
  iconUrl: Schema.optional(Schema.NullOr(HttpsUrl))
})
export type NewWalletApp = typeof NewWalletApp.Encoded

/**
 * Why a gateway request's credentials were refused; the reasons are the
 * reference's wire codes (http/ErrorResponses.ts gives each its status).
 */
export const GatewayAuthReason = Schema.Literal(
  /** Neither `Api-Key` nor `App-Id`. */
  "missing_auth_headers",
  /** A `Client-Id` without the `App-Id` it belongs with (and no `Api-Key`). */
  "missing_app_id",
  /** An `Api-Key` that is no wallet app's key. */
  "invalid_api_key",
  /** An `App-Id` that names no wallet app. */
  "invalid_app_id",
  /** `Api-Key` and `App-Id` both valid, but naming different apps. */
  "conflicting_auth_headers",
  /** A valid key or `App-Id` of an app the operator disabled. */
  "app_disabled"
)
export type GatewayAuthReason = typeof GatewayAuthReason.Type

export class GatewayAuthError extends Schema.TaggedError<GatewayAuthError>()("GatewayAuthError", {
  reason: GatewayAuthReason
}) {}

/** No wallet app has this id (the operator's CLI names it). */
export class WalletAppNotFound extends Schema.TaggedError<WalletAppNotFound>()(
  "WalletAppNotFound",
  { appId: Schema.String }
) {}
