/**
 * The sandbox as an engine's network: a real local EVM in process (chain
 * `eip155:31337`, `@pay/sandbox-chain`) with a test USDC (EIP-3009), USDT and
 * DAI (Permit2) and the chain's own ether (paid natively), priced by the
 * chain's own ETH/USD and EUR/USD feeds, and the routes
 * `GET /sandbox` (what it is), `POST /sandbox/rpc` (its JSON-RPC, for wallets
 * and scripts) and `POST /sandbox/faucet` (test tokens). The chain starts fresh
 * with its process: balances reset, the token's address stays the same.
 * The standalone server runs it without `PAY_CONFIG`; an embedder passes
 * `sandboxEngineOptions(...)` to try the engine without a real network.
 */

import { type ChainSetup, chainEngineOptions } from "@pay/chain-evm"
import {
  ApiErrors,
  type Caip2,
  type Caip19,
  findCurrency,
  parseCaip10,
  publicRoute,
  RequestError,
  type Route,
  startInOwnScope
} from "@pay/core"
import * as Sandbox from "@pay/sandbox-chain"
import { Effect, Either } from "effect"

/**
 * The sandbox chain as the engine's one network: its stablecoins priced 1:1
 * in USD, euros through the chain's EUR/USD feed, and its ether (a native
 * coin: the buyer's wallet sends it) in ETH, through its ETH/USD feed, read
 * as live prices are on any network.
 */
export const sandboxChainSetup = (sandbox: Sandbox.SandboxChainService): ChainSetup => {
  const info = (t: Omit<Sandbox.SandboxTokenDescription, "authorization">) => ({
    asset: t.asset as Caip19,
    symbol: t.symbol,
    name: t.name,
    decimals: t.decimals,
    iconUrl: null
  })
  // USDC, USDT and DAI, then ether: the order GET /sandbox lists them in.
  const tokens = [...sandbox.tokens.map(info), info(sandbox.native)]
  const chainId = Sandbox.CAIP2_CHAIN_ID as Caip2
  return {
    networks: [
      {
        chainId,
        name: "Pay sandbox",
        collectorKey: sandbox.collector.privateKey,
        // Holds ether only: a buyer's account not deployed yet is deployed from it (ERC-6492).
        deployerKey: sandbox.accountDeployer.privateKey,
        confirmations: 1,
        etaSeconds: 1,
        transport: sandbox.transport,
        pollingIntervalMs: 25,
        tokens: [
          ...sandbox.tokens.map((t) => ({
            ...info(t),
            priceCurrency: "USD",
            authorization: t.authorization
          })),
          // The chain's own coin, priced in itself: USD to ETH through the ETH/USD feed.
          { ...info(sandbox.native), priceCurrency: "ETH", authorization: "native" as const }
        ],
        // Free test tokens and a publicly known key: the engine runs in test mode.
        testnet: true,
        // It starts fresh with every start: the engine starts its nonces and work afresh.
        instance: sandbox.instance
      }
    ],
    registryNetworks: [{ chainId, name: "Pay sandbox", iconUrl: null }],
    registryTokens: tokens,
    rates: {},
    prices: {
      feeds: Object.fromEntries(
        Object.entries(sandbox.priceFeeds).map(([pair, address]) => [
          pair,
          { feed: `${chainId}:${address}` }
        ])
      )
    },
    // So the data-collection flow can be tried: asked for payments of 1,000 USD or EUR and more.
    gateway: {
      collectData: {
        atLeast: [
          { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 100_000n },
          { unit: { kind: "fiat", currency: findCurrency("EUR")! }, value: 100_000n }
        ]
      }
    }
  }
}

const json = (status: number, value: unknown) => ({ status, body: JSON.stringify(value) })

const invalid = (field: string, message: string) =>
  RequestError.invalid(ApiErrors.ParamsValidation, field, message)

/** The amount in minor units: a decimal string or a safe integer. */
const amountOf = (value: unknown): Either.Either<bigint, string> => {
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) {
    return Either.right(BigInt(value))
  }
  if (typeof value === "string" && /^[1-9][0-9]{0,77}$/.test(value)) {
    return Either.right(BigInt(value))
  }
  return Either.left(
    'must be a positive whole number of the token\'s minor units (USDC and USDT: 6 decimals, DAI and ETH: 18), e.g. "25000000"'
  )
}

/** What `gas: true` gives an account: 1 ether, in wei. */
const FAUCET_ETHER = "0xde0b6b3a7640000"

/** `GET /sandbox`, `POST /sandbox/rpc`, `POST /sandbox/faucet`. */
export const sandboxRoutes = (
  sandbox: Sandbox.SandboxChainService,
  publicUrl: string
): ReadonlyArray<Route<never>> => [
  publicRoute("GET", "/sandbox", () =>
    Effect.succeed(
      json(200, {
        ...sandbox.description,
        rpcUrl: `${publicUrl}/sandbox/rpc`,
        // The only methods /sandbox/rpc passes: a wallet's and the engine's reads and sends.
        rpcMethods: Sandbox.PUBLIC_METHODS,
        // The calls the chain has answered since it started (the engine's and this route's).
        rpcCalls: sandbox.rpcCalls()
      })
    )
  ),
  publicRoute(
    "POST",
    "/sandbox/rpc",
    (exchange) =>
      Effect.map(
        Effect.promise(() =>
          sandbox.handleJsonRpc(exchange.body ?? null, { allow: Sandbox.isPublicMethod })
        ),
        (answer) => (answer === undefined ? { status: 204, body: "" } : json(200, answer))
      ),
    { takesBody: true }
  ),
  publicRoute(
    "POST",
    "/sandbox/faucet",
    (exchange) =>
      Effect.gen(function* () {
        const body = exchange.body
        if (typeof body !== "object" || body === null || Array.isArray(body)) {
          return yield* invalid("body", "must be a JSON object {account, amount, token?}")
        }
        const { account, amount, gas, token } = body as Record<string, unknown>
        const symbols = sandbox.description.tokens.map((t) => t.symbol)
        if (token !== undefined && (typeof token !== "string" || !symbols.includes(token))) {
          return yield* invalid("token", `must be one of ${symbols.join(", ")}`)
        }
        if (gas !== undefined && typeof gas !== "boolean") {
          return yield* invalid("gas", "must be true or false")
        }
        const parsed = typeof account === "string" ? parseCaip10(account) : undefined
        if (parsed === undefined || Either.isLeft(parsed)) {
          return yield* invalid("account", "must be a CAIP-10 account, e.g. eip155:31337:0x…")
        }
        if (!parsed.right.value.startsWith(`${Sandbox.CAIP2_CHAIN_ID}:`)) {
          return yield* invalid("account", `must be on the sandbox chain ${Sandbox.CAIP2_CHAIN_ID}`)
        }
        const value = amountOf(amount)
        if (Either.isLeft(value)) return yield* invalid("amount", value.left)
        const address = parsed.right.value.slice(parsed.right.value.lastIndexOf(":") + 1)
        // Ether too, on request: for a wallet that sends its own transactions (deploys its
        // Safe, delegates its key with EIP-7702). Test ether, on this chain only.
        if (gas === true) {
          yield* Effect.promise(() =>
            sandbox.request({ method: "hardhat_setBalance", params: [address, FAUCET_ETHER] })
          )
        }
        const minted = yield* sandbox
          .faucet(address, value.right, typeof token === "string" ? token : "USDC")
          .pipe(Effect.mapError((e) => invalid("amount", e.message)))
        return json(200, {
          txHash: minted.txHash,
          balance: minted.balance.toString(),
          ...(gas === true ? { ether: BigInt(FAUCET_ETHER).toString() } : {})
        })
      }),
    { takesBody: true }
  )
]

/**
 * What to spread into `createPaymentEngine`'s options to run on the sandbox:
 * the chain, its token and rates, and the sandbox routes (served under the
 * engine's base path; `publicUrl` is the engine's, for the RPC URL it names).
 */
export const sandboxEngineOptions = (sandbox: Sandbox.SandboxChainService, publicUrl: string) => ({
  ...chainEngineOptions(sandboxChainSetup(sandbox)),
  routes: sandboxRoutes(sandbox, publicUrl.replace(/\/+$/, ""))
})

export interface RunningSandbox {
  readonly chain: Sandbox.SandboxChainService
  /** `createPaymentEngine({ ...sandbox.engineOptions(publicUrl), storage, publicUrl })`. */
  readonly engineOptions: (publicUrl: string) => ReturnType<typeof sandboxEngineOptions>
  /** Stops the chain. */
  readonly close: () => Promise<void>
}

/** Starts the sandbox chain in this process, for platforms that do not use Effect. */
export const startSandbox = async (): Promise<RunningSandbox> => {
  const { value: chain, close } = await startInOwnScope(Sandbox.make())
  return { chain, engineOptions: (publicUrl) => sandboxEngineOptions(chain, publicUrl), close }
}
