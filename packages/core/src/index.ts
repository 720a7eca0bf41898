/**
 * @pay/core: the engine's domain, ports and HTTP API, free of any server,
 * database or chain driver (the viem one is @pay/chain-evm). Its public
 * surface, by name: what an embedder, a storage package, a chain package or
 * the pages package uses. Everything else is the engine's own and may change;
 * no consumer needs a deep import.
 */
export { openApiDocument } from "./Api.js"
// Named so the built types load ApiFailures.d.ts, which imports every feature's Failures.d.ts,
// whose `declare module` registers its errors as ApiFailure: routes outside the core fail with them.
export { errorReply } from "./ApiFailures.js"
export {
  GatewayAuthError,
  WalletApp,
  WalletAppId,
  WalletAppNotFound,
  WalletAppStatus
} from "./apps/WalletApp.js"
export { CurrentWalletApp } from "./apps/WalletAppAuth.js"
export { WalletAppStore } from "./apps/WalletAppStore.js"
export { authenticateWallet, WalletApps, type WalletCredentials } from "./apps/WalletApps.js"
export {
  AuditAction,
  AuditActor,
  AuditEntry,
  AuditEntryId,
  type AuditLog,
  actorLabel,
  auditValueFromJson,
  auditValueToJson,
  cliActor,
  engineActor
} from "./audit/AuditEntry.js"
export { type AuditQuery, AuditStore } from "./audit/AuditStore.js"
export {
  type AccountDeployment,
  Chain,
  type ChainCall,
  type ChainHead,
  type ChainNetwork,
  type ChainToken,
  ChainUnavailable,
  type FeeQuote,
  livemodeOf,
  type NetworkTransaction,
  networkOf,
  type SignedTransaction,
  TransactionRejected,
  type TransactionState,
  TransferRefused,
  tokenOf,
  type UnsignedTransaction
} from "./chain/Chain.js"
export {
  type Eip712Domain,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization
} from "./chain/Eip3009.js"
export {
  accountSignatureOf,
  MAX_SIGNATURE_BYTES,
  type PayerSignature,
  parsePayerSignature
} from "./chain/PayerSignature.js"
export {
  isSignedBy,
  isSignedByPayer,
  NATIVE_COIN_ADDRESS,
  PAYMENT_WITNESS_TYPE,
  PAYMENT_WITNESS_TYPE_STRING,
  type PaymentWitness,
  PERMIT2_ADDRESS,
  PERMIT2_WITNESS_TYPES,
  type Permission,
  type PermissionSource,
  permissionOf,
  type SigningRequest,
  signingRequest,
  TOKEN_AUTHORIZATIONS,
  type TokenAuthorization,
  typedDataFromJson,
  typedDataJson
} from "./chain/Permission.js"
export type { FreshChainRun } from "./chainwork/ChainInstances.js"
export { ChainJobStore, type ReturnableFunds } from "./chainwork/ChainJobStore.js"
export {
  type ChainTransferColumns,
  chainTransferFromColumns,
  type ReturnableFundsColumns,
  returnableFromColumns
} from "./chainwork/ChainTransferColumns.js"
export { ChainWork, failed } from "./chainwork/ChainWork.js"
export {
  ChainWorkConfig,
  ChainWorkSettings
} from "./chainwork/ChainWorkConfig.js"
export { type PayEngineContext, payEngineLayer, routes } from "./Engine.js"
export {
  type EngineConfig,
  EngineSettings,
  engineConfig,
  type OptionIssue,
  type PaymentEngineOptions,
  PaymentEngineOptionsError,
  type PaymentEngineSettings
} from "./EngineOptions.js"
export type { EnginePages, PageServices } from "./EnginePages.js"
export {
  EVENT_TYPES,
  EventId,
  type EventQuery,
  EventStore,
  EventType,
  type Outbox,
  PayEvent,
  PayEventType
} from "./events/Event.js"
export { type FeeRule, type FeeSchedule, FeeScheduleSchema, FeesConfig } from "./fees/Fees.js"
export {
  type CollectDataProperty,
  type CollectDataSchema,
  collectDataSchema,
  collectedDataFromFields,
  PLACE_REQUIRED,
  type SubmittedField
} from "./gateway/CollectData.js"
export { COLLECT_TOKEN_PARAM } from "./gateway/CollectDataToken.js"
export { Gateway, type WalletIdentity } from "./gateway/Gateway.js"
export {
  CollectDataPolicy,
  GatewayConfig,
  GatewaySettings,
  MAX_ACCOUNTS
} from "./gateway/GatewayConfig.js"
export {
  ChainUnreachable,
  CollectDataForbidden,
  InsufficientBalance,
  QuoteExpired
} from "./gateway/GatewayErrors.js"
export {
  NO_OPTIONS_EN,
  type NoOptionsReason,
  type NoOptionsWords,
  noOptionsText
} from "./gateway/NoOptions.js"
export type { NoOptionsCode } from "./gateway/NoOptionsCode.js"
export type { PayableToken } from "./gateway/Offers.js"
export {
  type PaymentOptionColumns,
  paymentOptionFromColumns,
  paymentOptionTextColumns
} from "./gateway/PaymentOptionColumns.js"
export { paymentIdOfSegment } from "./gateway/PaymentRef.js"
export {
  type ChainJobQueue,
  type MigrationState,
  StorageProbe,
  StorageUnavailable,
  type StuckJob
} from "./health/StorageProbe.js"
export type { EngineHandler } from "./http/Engine.js"
export { ApiErrors, type ApiFailure } from "./http/ErrorResponses.js"
export { type EngineRequest, json, type Reply } from "./http/Exchange.js"
export { htmlReply, htmlSecurityHeaders } from "./http/HtmlReply.js"
export {
  DEFAULT_MAX_BODY_BYTES,
  HttpConfig,
  HttpSettings,
  isBasePath
} from "./http/HttpConfig.js"
export { RequestError } from "./http/RequestError.js"
export { type Exchange, publicRoute, type Route } from "./http/Route.js"
export { REPLAY_WINDOW_MS } from "./idempotency/Idempotency.js"
export {
  type ClaimOutcome,
  IdempotencyClaimLost,
  type IdempotencyCompletion,
  type IdempotencyScope,
  IdempotencyStore,
  type StoredResponse
} from "./idempotency/IdempotencyStore.js"
export { Partner, PartnerId } from "./identity/Partner.js"
export { CurrentPartner } from "./identity/PartnerAuth.js"
export { ApiKeys } from "./keys/ApiKeys.js"
export {
  ApiKeyId,
  ApiKeyInactive,
  ApiKeyLookupTaken,
  ApiKeyNotFound,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  type KeyOwner,
  KeyRecord,
  LastActiveApiKey,
  MAX_ROTATION_OVERLAP_SECONDS
} from "./keys/KeyRecord.js"
export {
  type KeyChangeExtras,
  KeyStore,
  type RevokeOutcome,
  type RotateOutcome,
  type Rotation
} from "./keys/KeyStore.js"
export { apiKeyView } from "./keys/KeyView.js"
export {
  ALL_SCOPES,
  API_KEY_SCOPES,
  ApiKeyScope,
  InsufficientScope,
  scopeOfRoute,
  scopesFromText,
  scopesProblem,
  scopesToText
} from "./keys/Scopes.js"
export {
  type FrozenLogo,
  LogoCapture,
  type LogoRefusalCode,
  LogoRefused,
  LogoStore,
  type StoredLogoImage
} from "./merchants/Logo.js"
export {
  Merchant,
  type MerchantChanges,
  MerchantId,
  MerchantNotFound,
  MerchantStatus
} from "./merchants/Merchant.js"
export { type MerchantPage, type MerchantQuery, MerchantStore } from "./merchants/MerchantStore.js"
export { Merchants, type MerchantUpdate, type NewMerchant } from "./merchants/Merchants.js"
export {
  type CryptoSettlement,
  CryptoSettlementId,
  SettlementAssetConflict,
  SettlementNotFound
} from "./merchants/Settlement.js"
export { listText } from "./merchants/SettlementPayability.js"
export { type SettlementChange, SettlementStore } from "./merchants/SettlementStore.js"
export { type NewCryptoSettlement, Settlements } from "./merchants/Settlements.js"
export { countRpcError } from "./metrics/EngineMetrics.js"
export { renderPrometheus } from "./metrics/Prometheus.js"
export {
  isLogFormat,
  isLogLevelName,
  LOG_LEVELS,
  type LogFormat,
  type LoggingSettings,
  type LogLevelName
} from "./observability/Logging.js"
export {
  createPaymentEngine,
  type EmbeddedPaymentEngine,
  type EngineInternals,
  embedPaymentEngine,
  makePaymentEngine,
  makePaymentWorkers,
  PaymentEngine,
  type PaymentEngineService,
  runPaymentWorkers
} from "./PaymentEngine.js"
export { PartnerStore } from "./partners/PartnerStore.js"
export { type NewPartner, Partners } from "./partners/Partners.js"
export {
  type BuyerTransfer,
  type ChainJob,
  type ChainJobId,
  type ChainJobKind,
  type ChainJobLease,
  ChainJobLeaseLost,
  type ChainJobPayload,
  type ChainTransfer,
  type ClaimedJob,
  type CollectPayload,
  type DeployPayload,
  type HeldStart,
  type JobFailing,
  type NewChainJob,
  NOT_FAILING,
  NonceTaken,
  payloadFromJson,
  payloadToJson,
  queuedJob,
  type SettlePayload,
  senderOf,
  TransactionClaimed
} from "./payments/ChainJob.js"
export {
  type Buyer,
  type CancelledReason,
  type ChainTransaction,
  FAILURE_CODES,
  type FailureCode,
  InvalidState,
  isFinal,
  LongPollsExhausted,
  MerchantInactive,
  PAYMENT_STATUSES,
  type Payment,
  PaymentExpired,
  type PaymentFees,
  PaymentId,
  PaymentNotFound,
  type PaymentSettlement,
  PaymentStatus,
  type PaymentStatusRecord,
  paymentLivemode,
  type Refund,
  RefundExists,
  RefundId,
  type SettlementStatus,
  settlementStatusToColumns,
  type TokenAmount
} from "./payments/Payment.js"
export {
  buyerKey,
  type PaymentColumns,
  type PaymentStatusColumns,
  paymentFromColumns,
  paymentStatusFromColumns
} from "./payments/PaymentColumns.js"
export {
  LocalPaymentEvents,
  makeLocalPaymentEvents,
  makePaymentWaiters,
  PaymentEvents,
  type PaymentStatusChanged,
  type PaymentWaiters
} from "./payments/PaymentEvents.js"
export {
  type CollectedDataRecord,
  GatewayStore,
  MAX_OPTIONS_PER_PAYMENT,
  type OptionId,
  type OptionsCap,
  type OptionsInserted,
  type OptionsPurged,
  type PaymentOption
} from "./payments/PaymentOption.js"
export {
  comparePayments,
  computeStats,
  isAfterCursor,
  matchesFilter
} from "./payments/PaymentQuery.js"
export {
  applyChange,
  effectiveStatus,
  type PaymentChange,
  type PaymentTransition
} from "./payments/PaymentStateMachine.js"
export {
  noStats,
  planStats,
  type StatsPlan,
  statsTotals,
  utcDay
} from "./payments/PaymentStatsPlan.js"
export {
  type PaymentFilter,
  type PaymentPageQuery,
  type PaymentStats,
  PaymentStore
} from "./payments/PaymentStore.js"
export { type NewPayment, Payments, type StatusRead } from "./payments/Payments.js"
export {
  defaultPaymentsSettings,
  MAX_PAYMENT_LIFETIME_MS,
  PaymentsConfig,
  PaymentsSettings
} from "./payments/PaymentsConfig.js"
export { gatewayUrl } from "./payments/Views.js"
export {
  type FeedReading,
  lookup,
  type PriceQuote,
  Prices,
  parseRate,
  type Rate,
  type RateTable
} from "./pricing/Pricing.js"
export {
  bucketSettings,
  RateLimitSettings,
  RateLimitsConfig,
  RateLimitsSettings
} from "./ratelimit/RateLimitConfig.js"
export { RateLimited } from "./ratelimit/RateLimited.js"
export type { RateLimiter } from "./ratelimit/RateLimiter.js"
export {
  RateLimitStore,
  type RateLimitStoreShape,
  type RateLimitUse,
  type SharedLevel
} from "./ratelimit/RateLimitStore.js"
export { admitPayment, RateLimits } from "./ratelimit/RateLimits.js"
export {
  type BucketLevel,
  fullBucket,
  isFull,
  MILLITOKENS_PER_TOKEN,
  refill,
  type TokenBucketSettings
} from "./ratelimit/TokenBucket.js"
export {
  DEFAULT_PACING,
  PURGE_LEASE,
  type PurgeCounts,
  type PurgePacing,
  type PurgePassResult,
  purgeForever,
  purgePass
} from "./retention/Purge.js"
export { PURGED_TABLES, type PurgedTable } from "./retention/PurgeMetrics.js"
export { RetentionConfig, RetentionSettings } from "./retention/RetentionConfig.js"
export { type DeliveriesPurged, RetentionStore } from "./retention/RetentionStore.js"
export type { PayStorage } from "./Storage.js"
export {
  decodeEngineSecret,
  EngineSecret,
  EngineSecretStore,
  SealedValueInvalid,
  WEBHOOK_SECRET_PURPOSE
} from "./secrets/EngineSecret.js"
export { type ResealReport, resealStoredValues } from "./secrets/Reseal.js"
export { type SealedField, type SealedValue, SealedValueStore } from "./secrets/SealedValueStore.js"
export {
  type Amount,
  AmountInput,
  type AmountUnit,
  amountDisplay,
  amountToWire,
  formatMajor,
  formatUnit,
  parseUnit
} from "./shared/Amount.js"
export * as ApiKey from "./shared/ApiKey.js"
export { API_VERSIONS, ApiVersion, DEFAULT_API_VERSION } from "./shared/ApiVersion.js"
export {
  type Caip2,
  Caip2Schema,
  type Caip10,
  type Caip19,
  Caip19Schema,
  chainOfCaip19,
  parseCaip10
} from "./shared/Caip.js"
export { type FiatCurrency, findCurrency } from "./shared/Currency.js"
export { EngineMode } from "./shared/EngineMode.js"
export {
  FieldIssue,
  Forbidden,
  IdempotencyConflict,
  InvalidInput,
  Unauthenticated
} from "./shared/Errors.js"
export { escapeHtml } from "./shared/Html.js"
export { makeIdBody, randomBase62 } from "./shared/Ids.js"
export { LANGUAGES, type Language, languageOf } from "./shared/Language.js"
export { type LruCache, makeLruCache } from "./shared/LruCache.js"
export { type EffectRunner, startInOwnScope } from "./shared/OwnScope.js"
export { makeSharedReads, type SharedRead } from "./shared/SharedReads.js"
export { toUnixSeconds } from "./shared/Time.js"
export {
  defaultNetworks,
  defaultTokenRegistry,
  defaultTokens,
  makeTokenRegistry,
  NetworkConfig,
  type NetworkInfo,
  TokenConfig,
  type TokenInfo,
  TokenRegistry,
  type TokenRegistryShape
} from "./shared/TokenRegistry.js"
export {
  settingAnnotation,
  type WholeNumberRange,
  WholeNumberRangeId,
  wholeNumberRangeOf
} from "./shared/WholeNumber.js"
export { parseOtlpHeaders, TelemetrySettings } from "./telemetry/Telemetry.js"
export {
  DEFAULT_TOLERANCE_SECONDS,
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  WEBHOOK_SECRET_PREFIX,
  WebhookVerificationError,
  webhookHeaders
} from "./webhooks/Signature.js"
export { httpsUrlProblem, WebhookUrlGuard, WebhookUrlRefused } from "./webhooks/UrlGuard.js"
export {
  type AttemptOutcome,
  type ClaimedDelivery,
  type DeliveryQuery,
  type EndpointVerdict,
  WebhookAttempt,
  WebhookDelivery,
  type WebhookDeliveryLease,
  WebhookDeliveryLeaseLost,
  type WebhookDeliveryRecord,
  WebhookDeliveryState,
  WebhookDeliveryStore
} from "./webhooks/WebhookDelivery.js"
export {
  type SecretRotation,
  WebhookEndpoint,
  type WebhookEndpointChanges,
  WebhookEndpointId,
  WebhookEndpointStatus,
  WebhookEndpointStore
} from "./webhooks/WebhookEndpoint.js"
export {
  type NewWebhookEndpoint,
  WebhookEndpointNotFound,
  WebhookEndpoints,
  type WebhookEndpointUpdate,
  WebhookEventNotFound
} from "./webhooks/WebhookEndpoints.js"
export {
  type WebhookRequest,
  type WebhookResponse,
  WebhookSender
} from "./webhooks/WebhookSender.js"
export { WebhookSigningTime, WebhookWork } from "./webhooks/WebhookWork.js"
export {
  WebhookDeliveryConfig,
  WebhookDeliverySettings
} from "./webhooks/WebhookWorkConfig.js"
