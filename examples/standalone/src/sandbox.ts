/**
 * The sandbox: without `PAY_CONFIG`, the standalone server runs a real local
 * EVM in process (chain `eip155:31337`) with a test USDC, and serves
 * `GET /sandbox` (what it is), `POST /sandbox/rpc` (its JSON-RPC, for wallets
 * and scripts) and `POST /sandbox/faucet` (test tokens). The chain starts fresh
 * with the server: balances reset, the token's address stays the same.
 */
import {
  ApiErrors,
  type Caip2,
  type Caip19,
  findCurrency,
  parseCaip10,
  publicRoute,
  RequestError,
  type Route
} from "@pay/core"
import * as Sandbox from "@pay/sandbox-chain"
import { Effect, Either } from "effect"
import type { ChainSetup } from "./payConfig.js"

/** A fixed rate, so euro payments can be paid in the sandbox's USDC. */
const SANDBOX_EUR_USD = { numerator: 108n, denominator: 100n }

/** The sandbox chain as the engine's one network, its token priced 1:1 in USD. */
export const sandboxChainSetup = (sandbox: Sandbox.SandboxChainService): ChainSetup => {
  const token = {
    asset: sandbox.token.asset as Caip19,
    symbol: sandbox.token.symbol,
    name: sandbox.token.name,
    decimals: sandbox.token.decimals,
    iconUrl: null
  }
  const chainId = Sandbox.CAIP2_CHAIN_ID as Caip2
  return {
    networks: [
      {
        chainId,
        name: "Pay sandbox",
        collectorKey: sandbox.collector.privateKey,
        confirmations: 1,
        etaSeconds: 1,
        transport: sandbox.transport,
        pollingIntervalMs: 25,
        tokens: [{ ...token, priceCurrency: "USD" }]
      }
    ],
    registryNetworks: [{ chainId, name: "Pay sandbox", iconUrl: null }],
    registryTokens: [token],
    rates: { "EUR/USD": SANDBOX_EUR_USD },
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
  return Either.left('must be a positive whole number of minor units (6 decimals), e.g. "25000000"')
}

/** `GET /sandbox`, `POST /sandbox/rpc`, `POST /sandbox/faucet`. */
export const sandboxRoutes = (
  sandbox: Sandbox.SandboxChainService,
  publicUrl: string
): ReadonlyArray<Route<never>> => [
  publicRoute("GET", "/sandbox", () =>
    Effect.succeed(json(200, { ...sandbox.description, rpcUrl: `${publicUrl}/sandbox/rpc` }))
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
          return yield* invalid("body", "must be a JSON object {account, amount}")
        }
        const { account, amount } = body as Record<string, unknown>
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
        const minted = yield* sandbox
          .faucet(address, value.right)
          .pipe(Effect.mapError((e) => invalid("amount", e.message)))
        return json(200, { txHash: minted.txHash, balance: minted.balance.toString() })
      }),
    { takesBody: true }
  )
]
