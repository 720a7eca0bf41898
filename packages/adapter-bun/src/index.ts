/**
 * @pay/adapter-bun: serves the engine on Bun.
 */

export * from "./BunServe.js"
export * from "./BunServer.js"
