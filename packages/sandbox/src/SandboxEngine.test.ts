/**
 * The sandbox as the engine's network: its tokens (the chain's ether among
 * them, paid natively) and their prices, read from the chain's own feeds.
 */
import { type Caip19, Chain, NATIVE_COIN_ADDRESS, Prices } from "@pay/core"
import * as Sandbox from "@pay/sandbox-chain"
import { Context, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { sandboxEngineOptions } from "./SandboxEngine.js"

describe("the sandbox engine's network", () => {
  it("offers the chain's ether, paid natively and priced in ETH, through the ETH/USD feed", async () => {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sandbox = yield* Sandbox.make()
          const options = sandboxEngineOptions(sandbox, "http://127.0.0.1:8080")
          // Built in the test's scope: the prices' reads run in it.
          const built = yield* Layer.build(Layer.merge(options.chain, options.prices))
          const chain = Context.get(built, Chain)
          const tokens = chain.networks[0]!.tokens
          expect(tokens.map((t) => [t.symbol, t.authorization, t.priceCurrency])).toEqual([
            ["USDC", "eip3009", "USD"],
            ["USDT", "permit2", "USD"],
            ["DAI", "permit2", "USD"],
            ["ETH", "native", "ETH"]
          ])
          const ether = tokens[3]!
          expect(ether).toMatchObject({
            asset: Sandbox.SANDBOX_NATIVE.asset,
            address: NATIVE_COIN_ADDRESS,
            decimals: 18
          })
          // Its balance is the account's ether.
          const buyer = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
          yield* sandbox.faucet(buyer, 7n * 10n ** 18n, "ETH")
          expect(yield* chain.balanceOf(ether.asset as Caip19, buyer)).toBe(
            yield* Effect.promise(() => sandbox.publicClient.getBalance({ address: buyer }))
          )
          // USD to ETH is the ETH/USD feed's answer (3,000 at the start) the other way round.
          const prices = Context.get(built, Prices)
          const usdToEth = yield* prices.rate("USD", "ETH")
          expect(usdToEth).toMatchObject({ numerator: 1n, denominator: 3_000n })
          expect(usdToEth?.readings.map((r) => r.pair)).toEqual(["ETH/USD"])
          // EUR through USD, from both feeds.
          const eurToEth = yield* prices.rate("EUR", "ETH")
          expect(eurToEth?.readings.map((r) => r.pair).sort()).toEqual(["ETH/USD", "EUR/USD"])
          // GET /sandbox lists the same four, as before.
          expect(sandbox.description.tokens.map((t) => t.symbol)).toEqual([
            "USDC",
            "USDT",
            "DAI",
            "ETH"
          ])
        })
      )
    )
  })
})
