import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { defaultTokenRegistry, TokenRegistry } from "../shared/TokenRegistry.js"
import { tokenAmountText } from "./CheckoutAmounts.js"

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
