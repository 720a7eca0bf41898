/**
 * @pay/storage-sqlite: the engine's storage ports on SQLite, runtime-neutral.
 * The driver comes from `@pay/storage-sqlite/node` (or a Bun entry).
 */
export * from "./Migrations.js"
export * from "./SqliteDatabase.js"
export * from "./SqliteStores.js"
