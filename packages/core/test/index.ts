/**
 * Test support for the engine and for storage implementations.
 */
export * from "./AuditContract.js"
export * from "./CapturingConsole.js"
export * from "./ChainJobContract.js"
export * from "./EngineSecretContract.js"
export * from "./FakeChain.js"
export * from "./KeyFixtures.js"
export * from "./LogoContract.js"
export * from "./MemoryStorage.js"
export * from "./PaymentContract.js"
export * from "./RateLimitContract.js"
export * from "./ResealContract.js"
export * from "./SettlementHeldMigration.js"
export * from "./StorageContract.js"
