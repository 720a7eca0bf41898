/**
 * The storage contract suites (vitest) every storage implementation runs, and
 * their fixtures: the repo's own tests, not published (`@pay/testing` is).
 */
export * from "./AuditContract.js"
export * from "./CapturingConsole.js"
export * from "./ChainJobContract.js"
export * from "./EngineSecretContract.js"
export * from "./KeyFixtures.js"
export * from "./LogoContract.js"
export * as nativeCoinMigration from "./NativeCoinMigration.js"
export * from "./PaymentContract.js"
export * from "./PurgeFixture.js"
export * from "./RateLimitContract.js"
export * from "./ResealContract.js"
export * from "./RetentionContract.js"
export * from "./SettlementHeldMigration.js"
export * from "./StorageContract.js"
