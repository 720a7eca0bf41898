/**
 * @pay/storage-sqlite: the engine's storage ports on SQLite, runtime-neutral.
 * The driver comes from `@pay/storage-sqlite/node` or `@pay/storage-sqlite/bun`.
 */
export * from "./Migrations.js"
export * from "./SqliteAuditStore.js"
export * from "./SqliteDatabase.js"
export * from "./SqliteFile.js"
export * from "./SqliteReadWorker.js"
export * from "./SqliteStores.js"
