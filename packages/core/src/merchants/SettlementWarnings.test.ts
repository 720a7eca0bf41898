/**
 * Settlements in an asset the engine's networks cannot pay: saved all the same, with a warning
 * in words (which asset, why, what the merchant can still be paid in) and a log line naming the
 * merchant and the asset.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import type { Address } from "viem"
import { partnerWithMerchant } from "../../test/PartnerFixture.js"
import { unitGround } from "../../test/UnitLayers.js"
import { embedderActor } from "../audit/AuditEntry.js"
import { Chain, type ChainNetwork } from "../chain/Chain.js"
import { PERMIT2_ADDRESS } from "../chain/Permission.js"
import { Partners } from "../partners/Partners.js"
import type { Caip2, Caip10, Caip19 } from "../shared/Caip.js"
import { defaultNetworks, defaultTokens, makeTokenRegistry } from "../shared/TokenRegistry.js"
import { Merchants } from "./Merchants.js"
import { assetName, assetText, payabilityOf } from "./SettlementPayability.js"
import { Settlements } from "./Settlements.js"
import { settlementWarnings } from "./SettlementWarnings.js"

const SANDBOX_USDC = "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116" as Caip19
const SANDBOX_OTHER = "eip155:31337/erc20:0x00000000000000000000000000000000000000A2" as Caip19
const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42" as Caip19
const UNKNOWN = "eip155:999/erc20:0x00000000000000000000000000000000000000B1" as Caip19
const WALLET_BASE = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678" as Caip10
const WALLET_BASE_2 = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10
const WALLET_SANDBOX = "eip155:31337:0x1234567890AbcdEF1234567890aBcdef12345678" as Caip10

const sandbox: ChainNetwork = {
  chainId: "eip155:31337" as Caip2,
  reference: "31337",
  name: "Sandbox",
  iconUrl: null,
  collector: "0x00000000000000000000000000000000000000C0" as Address,
  confirmations: 1,
  pollIntervalMs: 1000,
  stuckAfterMs: 60_000,
  etaSeconds: 2,
  permit2: PERMIT2_ADDRESS,
  testnet: true,
  tokens: [
    {
      asset: SANDBOX_USDC,
      address: "0x1cd2272Cf2400da5cB86ccc008e3bE381C167116" as Address,
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      iconUrl: null,
      priceCurrency: "USD",
      authorization: "eip3009"
    }
  ]
}
const registry = makeTokenRegistry(defaultNetworks, defaultTokens)

describe("payability", () => {
  it("a token of a network the engine runs is payable; another chain or another token there is not", () => {
    expect(payabilityOf([sandbox], SANDBOX_USDC)).toBe("payable")
    expect(payabilityOf([sandbox], USDC_BASE)).toBe("network_not_run")
    expect(payabilityOf([sandbox], SANDBOX_OTHER)).toBe("token_not_run")
    expect(payabilityOf([], SANDBOX_USDC)).toBe("network_not_run")
  })

  it("names an asset by its symbol and network, from the networks first, then the registry", () => {
    expect(assetText(assetName([sandbox], registry, SANDBOX_USDC))).toBe("USDC on Sandbox")
    expect(assetText(assetName([sandbox], registry, USDC_BASE))).toBe("USDC on Base")
    expect(assetText(assetName([sandbox], registry, EURC_BASE), "{token} en {network}")).toBe(
      "EURC en Base"
    )
    // Nothing names it: its id.
    expect(assetText(assetName([sandbox], registry, UNKNOWN))).toBe(UNKNOWN)
  })
})

describe("settlementWarnings", () => {
  it("none when every asset can be paid", () => {
    expect(settlementWarnings([sandbox], registry, [SANDBOX_USDC], [SANDBOX_USDC])).toEqual([])
  })

  it("a Base settlement on an engine that runs only the sandbox: which asset, why, and that nothing can be paid", () => {
    expect(settlementWarnings([sandbox], registry, [USDC_BASE], [USDC_BASE])).toEqual([
      {
        code: "asset_not_payable",
        asset: USDC_BASE,
        message:
          `Wallets are not offered USDC on Base (${USDC_BASE}): Base (eip155:8453) is not one of the engine's networks: ` +
          "it runs Sandbox (eip155:31337). The settlement is saved and is used once Base is configured. " +
          "Until then no settlement of this merchant can be paid, so its payments offer wallets no way to pay."
      }
    ])
  })

  it("says what the merchant can still be paid in, and names a token the network does not carry", () => {
    const [base, other] = settlementWarnings(
      [sandbox],
      registry,
      [USDC_BASE, SANDBOX_OTHER],
      [SANDBOX_USDC, USDC_BASE, SANDBOX_OTHER]
    )
    expect(base?.message).toMatch(/Until then its payments can be paid in USDC on Sandbox only\.$/)
    expect(other).toEqual({
      code: "asset_not_payable",
      asset: SANDBOX_OTHER,
      message:
        `Wallets are not offered ${SANDBOX_OTHER}: the engine runs Sandbox (eip155:31337) but not this token there. ` +
        "The settlement is saved and is used once the token is configured on Sandbox. " +
        "Until then its payments can be paid in USDC on Sandbox only."
    })
  })

  it("an engine without networks says it runs none", () => {
    const [warning] = settlementWarnings([], registry, [SANDBOX_USDC], [SANDBOX_USDC])
    expect(warning?.message).toContain(
      "Sandbox (eip155:31337) is not one of the engine's networks: it runs no network."
    )
  })
})

/** The engine's warning lines: each message with its annotations. */
const capturedWarnings = () => {
  const lines: Array<ReadonlyArray<unknown>> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel === LogLevel.Warning) lines.push(Array.isArray(message) ? message : [message])
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Settlements, and the merchants and partners the fixture makes, over their ground and the sandbox network. */
const engine = () =>
  Layer.mergeAll(Settlements.Default, Merchants.Default, Partners.Default).pipe(
    Layer.provideMerge(
      Layer.merge(
        unitGround(),
        Layer.succeed(Chain, { networks: [sandbox] } as unknown as Chain["Type"])
      )
    )
  )

describe("Settlements on an engine that runs only the sandbox chain", () => {
  it.effect(
    "registers a Base settlement, answering and logging a warning; a sandbox one warns of nothing",
    () => {
      const { lines, layer } = capturedWarnings()
      return Effect.gen(function* () {
        const {
          partner,
          merchant: { id: merchantId }
        } = yield* partnerWithMerchant
        const settlements = yield* Settlements
        const base = yield* settlements.register(
          partner,
          merchantId,
          [{ asset: USDC_BASE, destination: WALLET_BASE }],
          embedderActor
        )
        // Saved all the same: the network may be added later.
        expect(base.settlements.map((s) => s.asset)).toEqual([USDC_BASE])
        expect((yield* settlements.list(partner, merchantId)).map((s) => s.asset)).toEqual([
          USDC_BASE
        ])
        expect(base.warnings.map((w) => [w.code, w.asset])).toEqual([
          ["asset_not_payable", USDC_BASE]
        ])
        expect(base.warnings[0]?.message).toContain("no settlement of this merchant can be paid")
        expect(lines).toEqual([
          [
            "settlement saved in an asset no configured network pays",
            {
              merchantId,
              asset: USDC_BASE,
              code: "asset_not_payable",
              reason: base.warnings[0]?.message
            }
          ]
        ])

        const sandboxed = yield* settlements.register(
          partner,
          merchantId,
          [{ asset: SANDBOX_USDC, destination: WALLET_SANDBOX }],
          embedderActor
        )
        expect(sandboxed.warnings).toEqual([])
        expect(lines).toHaveLength(1)

        // A change of the Base one's destination is warned about again, now naming what still pays.
        const changed = yield* settlements.changeDestination(
          partner,
          merchantId,
          base.settlements[0]!.id,
          WALLET_BASE_2,
          embedderActor
        )
        expect(changed.settlement.destination).toBe(WALLET_BASE_2)
        expect(changed.warnings.map((w) => w.asset)).toEqual([USDC_BASE])
        expect(changed.warnings[0]?.message).toMatch(/can be paid in USDC on Sandbox only\.$/)
        expect(lines).toHaveLength(2)
      }).pipe(Effect.provide(engine()), Effect.provide(layer))
    }
  )
})
