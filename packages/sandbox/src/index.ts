/**
 * @pay/sandbox: try the engine without a real network. The sandbox chain
 * (`@pay/sandbox-chain`) as an engine's network with its faucet and RPC
 * routes, and a small wallet that pays a payment link on it
 * (`pay-sandbox-wallet`).
 */
export * from "./SandboxEngine.js"
export * from "./Wallet.js"
