/**
 * @pay/storage-postgres: the engine's storage ports on PostgreSQL
 * (@effect/sql-pg), with migrations; the store for many instances.
 */
export * from "./layer.js"
export * from "./Migrations.js"
export * from "./PgAuditStore.js"
export * from "./PgChainJobStore.js"
export * from "./PgGatewayStore.js"
export * from "./PgIdempotencyStore.js"
export * as PgPaymentEvents from "./PgPaymentEvents.js"
export * from "./PgPaymentStore.js"
export { PgPool } from "./PgPrepared.js"
export * from "./PgStores.js"
export * from "./PgWalletAppStore.js"
