/**
 * The sandbox chain as its own process (`npm run chain`, bundled by
 * examples/build.mjs into examples/standalone/dist/chain.mjs): JSON-RPC on
 * loopback, see ChainServer.ts. Environment: HOST (default 127.0.0.1, loopback
 * only), PORT (default 0: any free port), SANDBOX_COLLECTOR_PRIVATE_KEY
 * (optional; the documented dev key by default). When ready it prints exactly
 * one JSON line on stdout:
 *
 *   {"rpcUrl","chainId":"eip155:31337","token":{"asset","address","symbol","decimals"},
 *    "tokens":[{"asset","address","symbol","decimals","authorization"}],"priceFeeds",
 *    "collector","collectorPrivateKey","deployerPrivateKey","accountDeployerPrivateKey",
 *    "accounts"}
 *
 * and nothing else there (diagnostics go to stderr). SIGTERM or SIGINT: stops
 * listening, stops the chain, exits 0. A start failure exits 1.
 */
import { isHex } from "viem"
import { serveChain } from "./ChainServer.js"
import { DEPLOYER_PRIVATE_KEY } from "./Keys.js"
import { CAIP2_CHAIN_ID } from "./SandboxChain.js"

const fail = (message: string): never => {
  process.stderr.write(`sandbox chain: ${message}\n`)
  process.exit(1)
}

const portOf = (value: string | undefined): number => {
  if (value === undefined || value === "") return 0
  const port = Number(value)
  return Number.isInteger(port) && port >= 0 && port <= 65_535
    ? port
    : fail(`PORT must be a port number, not ${value}`)
}

const collectorKeyOf = (value: string | undefined) => {
  if (value === undefined || value === "") return undefined
  return isHex(value) && value.length === 66
    ? value
    : fail("SANDBOX_COLLECTOR_PRIVATE_KEY must be a 32-byte 0x hex key")
}

const main = async () => {
  const server = await serveChain({
    host: process.env.HOST || "127.0.0.1",
    port: portOf(process.env.PORT),
    collectorPrivateKey: collectorKeyOf(process.env.SANDBOX_COLLECTOR_PRIVATE_KEY)
  })
  const { sandbox } = server
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    // Should the close hang, do not outlive the signal by much.
    setTimeout(() => process.exit(0), 5_000).unref()
    server.close().then(
      () => process.exit(0),
      (e: unknown) => fail(`stopping failed: ${(e as Error).message}`)
    )
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
  process.stdout.write(
    `${JSON.stringify({
      rpcUrl: server.url,
      chainId: CAIP2_CHAIN_ID,
      token: {
        asset: sandbox.token.asset,
        address: sandbox.token.address,
        symbol: sandbox.token.symbol,
        decimals: sandbox.token.decimals
      },
      tokens: sandbox.tokens.map((t) => ({
        asset: t.asset,
        address: t.address,
        symbol: t.symbol,
        decimals: t.decimals,
        authorization: t.authorization
      })),
      priceFeeds: sandbox.priceFeeds,
      collector: sandbox.collector.address,
      collectorPrivateKey: sandbox.collector.privateKey,
      deployerPrivateKey: DEPLOYER_PRIVATE_KEY,
      accountDeployerPrivateKey: sandbox.accountDeployer.privateKey,
      accounts: sandbox.accounts
    })}\n`
  )
}

main().catch((e: unknown) => fail(`did not start: ${(e as Error).stack ?? String(e)}`))
