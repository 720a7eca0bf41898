/**
 * @pay/core: the engine's domain, ports and HTTP API, free of any server,
 * database or chain driver (the viem one is @pay/chain-evm).
 */
export * from "./Api.js"
export * from "./apps/WalletApp.js"
export * from "./apps/WalletAppAuth.js"
export * from "./apps/WalletAppStore.js"
export * from "./apps/WalletApps.js"
export * from "./audit/Actor.js"
export * from "./audit/AuditEntry.js"
export * from "./audit/AuditStore.js"
export * from "./audit/NewAuditEntry.js"
export * from "./Config.js"
export * from "./chain/Chain.js"
export * from "./chain/Eip3009.js"
export type { FreshChainRun } from "./chainwork/ChainInstances.js"
export * from "./chainwork/ChainJob.js"
export * from "./chainwork/ChainJobStore.js"
export * from "./chainwork/ChainTransferColumns.js"
export * from "./chainwork/ChainWork.js"
export * from "./chainwork/ChainWorkConfig.js"
export * from "./Engine.js"
export * from "./EngineOptions.js"
export * from "./events/Event.js"
export * from "./fees/Fees.js"
export * from "./gateway/Gateway.js"
export * from "./gateway/GatewayConfig.js"
export * from "./gateway/GatewayErrors.js"
export * from "./gateway/GatewayPurge.js"
export * from "./gateway/PaymentOption.js"
export * from "./gateway/PaymentOptionColumns.js"
export * from "./health/Readiness.js"
export * from "./health/StorageProbe.js"
export { DEFAULT_MAX_BODY_BYTES, type EngineHandler } from "./http/Engine.js"
export { type ApiErrorSpec, ApiErrors, type ErrorBodyOf } from "./http/ErrorResponses.js"
export type { EngineRequest, EngineResponse, Reply } from "./http/Exchange.js"
export { fromFetchRequest, toFetchHandler, toFetchResponse } from "./http/Fetch.js"
export { htmlReply, htmlSecurityHeaders } from "./http/HtmlReply.js"
export { RequestError } from "./http/RequestError.js"
export { type Exchange, publicRoute, type Route } from "./http/Route.js"
export * from "./idempotency/Idempotency.js"
export * from "./idempotency/IdempotencyStore.js"
export * from "./keys/ApiKeys.js"
export * from "./keys/KeyRecord.js"
export * from "./keys/KeyStore.js"
export * from "./keys/KeyView.js"
export * from "./merchants/Logo.js"
export * from "./merchants/Merchant.js"
export * from "./merchants/MerchantStore.js"
export * from "./merchants/Merchants.js"
export * from "./metrics/EngineMetrics.js"
export * from "./metrics/Prometheus.js"
export * from "./observability/Logging.js"
export * from "./PaymentEngine.js"
export * from "./partners/Partner.js"
export * from "./partners/PartnerAuth.js"
export * from "./partners/PartnerStore.js"
export * from "./partners/Partners.js"
export * from "./payments/Payment.js"
export * from "./payments/PaymentColumns.js"
export * from "./payments/PaymentEvents.js"
export * from "./payments/PaymentStateMachine.js"
export * from "./payments/PaymentStatsPlan.js"
export * from "./payments/PaymentStore.js"
export * from "./payments/Payments.js"
export * from "./pricing/Pricing.js"
export * from "./ratelimit/RateLimitConfig.js"
export * from "./ratelimit/RateLimited.js"
export * from "./ratelimit/RateLimiter.js"
export * from "./ratelimit/RateLimitStore.js"
export * from "./ratelimit/RateLimits.js"
export * from "./ratelimit/TokenBucket.js"
export * from "./Storage.js"
export * from "./secrets/EngineSecret.js"
export * from "./secrets/Reseal.js"
export * from "./secrets/SealedValueStore.js"
export * from "./settlements/Settlement.js"
export * from "./settlements/SettlementStore.js"
export * from "./settlements/Settlements.js"
export * from "./shared/Amount.js"
export * as ApiKey from "./shared/ApiKey.js"
export * from "./shared/ApiVersion.js"
export * from "./shared/Caip.js"
export * from "./shared/Currency.js"
export * from "./shared/Errors.js"
export * from "./shared/Html.js"
export { makeIdBody } from "./shared/Ids.js"
export * from "./shared/LruCache.js"
export * from "./shared/OwnScope.js"
export * from "./shared/TokenRegistry.js"
export * from "./telemetry/Telemetry.js"
export * from "./webhooks/DeliveryOutcome.js"
export * from "./webhooks/Signature.js"
export * from "./webhooks/UrlGuard.js"
export * from "./webhooks/WebhookDelivery.js"
export * from "./webhooks/WebhookEndpoint.js"
export * from "./webhooks/WebhookEndpoints.js"
export * from "./webhooks/WebhookSender.js"
export * from "./webhooks/WebhookWork.js"
export * from "./webhooks/WebhookWorkConfig.js"

// used by @pay/chain-evm: the names it imports from @pay/core, by name, so they stay exported
// whatever becomes of the lines above.

export {
  Chain,
  type ChainCall,
  type ChainNetwork,
  type ChainToken,
  ChainUnavailable,
  type FeeQuote,
  TransactionRejected,
  type TransactionState,
  TransferRefused,
  tokenOf,
  type UnsignedTransaction
} from "./chain/Chain.js"
export {
  type Eip712Domain,
  isSignedByPayer,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization
} from "./chain/Eip3009.js"
export type { ChainWorkSettings } from "./chainwork/ChainWorkConfig.js"
export type { FeeSchedule } from "./fees/Fees.js"
export type { GatewaySettings } from "./gateway/GatewayConfig.js"
export { countRpcError } from "./metrics/EngineMetrics.js"
export { Prices, type RateTable } from "./pricing/Pricing.js"
export type { Caip2, Caip19 } from "./shared/Caip.js"
export {
  defaultNetworks,
  defaultTokens,
  type NetworkInfo,
  type TokenInfo,
  TokenRegistry
} from "./shared/TokenRegistry.js"
