/**
 * Every storage port the engine stands on: what a storage package's layer
 * provides (`@pay/storage-sqlite`, `@pay/storage-postgres`, the in-memory
 * stores in tests).
 */
import type { WalletAppStore } from "./apps/WalletAppStore.js"
import type { AuditStore } from "./audit/AuditStore.js"
import type { ChainJobStore } from "./chainwork/ChainJobStore.js"
import type { EventStore } from "./events/Event.js"
import type { StorageProbe } from "./health/StorageProbe.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import type { KeyStore } from "./keys/KeyStore.js"
import type { LogoStore } from "./merchants/Logo.js"
import type { MerchantStore } from "./merchants/MerchantStore.js"
import type { SettlementStore } from "./merchants/SettlementStore.js"
import type { PartnerStore } from "./partners/PartnerStore.js"
import type { GatewayStore } from "./payments/PaymentOption.js"
import type { PaymentStore } from "./payments/PaymentStore.js"
import type { RateLimitStore } from "./ratelimit/RateLimitStore.js"
import type { RetentionStore } from "./retention/RetentionStore.js"
import type { EngineSecretStore } from "./secrets/EngineSecret.js"
import type { SealedValueStore } from "./secrets/SealedValueStore.js"
import type { WebhookDeliveryStore } from "./webhooks/WebhookDelivery.js"
import type { WebhookEndpointStore } from "./webhooks/WebhookEndpoint.js"

export type PayStorage =
  | PartnerStore
  | KeyStore
  | MerchantStore
  | SettlementStore
  | IdempotencyStore
  | PaymentStore
  | GatewayStore
  | WalletAppStore
  | ChainJobStore
  | LogoStore
  | EngineSecretStore
  | SealedValueStore
  | EventStore
  | WebhookEndpointStore
  | WebhookDeliveryStore
  | AuditStore
  | RateLimitStore
  | RetentionStore
  | StorageProbe
