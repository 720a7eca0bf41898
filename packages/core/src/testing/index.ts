/**
 * Test support for the engine and for storage implementations.
 */
export * from "./MemoryStorage.js"
export * from "./PaymentContract.js"
export * from "./StorageContract.js"
