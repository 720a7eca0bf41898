/**
 * Test support for the engine and for storage implementations.
 */
export * from "./MemoryStorage.js"
export * from "./StorageContract.js"
