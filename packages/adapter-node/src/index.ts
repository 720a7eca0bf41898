/**
 * @pay/adapter-node: serves the engine on Node.
 */
export * from "./NodeHandler.js"
export * from "./NodeServer.js"
