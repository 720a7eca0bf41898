import { type ChainNetwork, type ChainToken, defaultTokenRegistry, TokenRegistry } from "@pay/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { tokenAmountText, tokenText, youPayText } from "./CheckoutAmounts.js"
import { STRINGS } from "./CheckoutStrings.js"

describe("token amounts on the checkout page", () => {
  it("are exact, with the zeros past two decimals dropped", async () => {
    const registry = await Effect.runPromise(Effect.provide(TokenRegistry, defaultTokenRegistry))
    const usdc = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    expect(tokenAmountText(registry, usdc, 10_500_000n)).toBe("10.50 USDC")
    expect(tokenAmountText(registry, usdc, 1_000n)).toBe("0.001 USDC")
    expect(tokenAmountText(registry, usdc, 1n)).toBe("0.000001 USDC")
    expect(tokenAmountText(registry, usdc, 7_000_000n)).toBe("7.00 USDC")
    expect(
      tokenAmountText(registry, "eip155:1/erc20:0x0000000000000000000000000000000000000001", 5n)
    ).toBe("5 eip155:1/erc20:0x0000000000000000000000000000000000000001")
  })
})

describe("what the buyer will pay, before a wallet is opened", () => {
  const token = (symbol: string, decimals: number) => ({ symbol, decimals }) as ChainToken
  const network = (name: string) => ({ name }) as ChainNetwork

  it("is exact for any decimals, with no detour through a float", () => {
    expect(tokenText(4_500_000n, token("USDC", 6))).toBe("4.50 USDC")
    // 2^64 + 1 wei: a float would round it.
    expect(tokenText(18_446_744_073_709_551_617n, token("ETH", 18))).toBe(
      "18.446744073709551617 ETH"
    )
    expect(tokenText(7n, token("PTS", 0))).toBe("7 PTS")
  })

  it('reads "You pay 4.50 USDC on Sandbox", each way joined with "or", in the buyer\'s language', () => {
    const sandbox = { network: network("Sandbox"), token: token("USDC", 6), value: 4_500_000n }
    const base = { network: network("Base"), token: token("EURC", 6), value: 4_170_000n }
    expect(youPayText([sandbox], STRINGS.en, "en")).toBe("You pay 4.50 USDC on Sandbox")
    expect(youPayText([sandbox, base], STRINGS.en, "en")).toBe(
      "You pay 4.50 USDC on Sandbox or 4.17 EURC on Base"
    )
    expect(youPayText([sandbox, base], STRINGS.es, "es")).toBe(
      "Pagas 4.50 USDC en Sandbox o 4.17 EURC en Base"
    )
    expect(youPayText([], STRINGS.en, "en")).toBeNull()
  })
})
