/**
 * @pay/adapter-bun: serves the engine on Bun.
 */
export * from "./BunServer.js"
