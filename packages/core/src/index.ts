/**
 * @pay/core: the engine's domain, ports and HTTP API, free of any server,
 * database or chain driver.
 */
export * from "./Api.js"
export * from "./Config.js"
export * from "./Engine.js"
export type { EngineHandler } from "./http/Engine.js"
export type { EngineRequest, EngineResponse } from "./http/Exchange.js"
export * from "./idempotency/Idempotency.js"
export * from "./idempotency/IdempotencyStore.js"
export * from "./merchants/Merchant.js"
export * from "./merchants/MerchantStore.js"
export * from "./merchants/Merchants.js"
export * as ApiKey from "./partners/ApiKey.js"
export * from "./partners/Partner.js"
export * from "./partners/PartnerStore.js"
export * from "./partners/Partners.js"
export * from "./settlements/Settlement.js"
export * from "./settlements/SettlementStore.js"
export * from "./settlements/Settlements.js"
export * from "./shared/ApiVersion.js"
export * from "./shared/Caip.js"
export * from "./shared/Errors.js"
