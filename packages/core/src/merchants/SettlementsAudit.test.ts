/**
 * The settlement rules' audit entries, on the in-memory stores: each change
 * by the actor that made it, old and new values; refusals and repeats record
 * nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { partnerWithMerchant } from "../../test/PartnerFixture.js"
import { unitGround } from "../../test/UnitLayers.js"
import { cliActor, embedderActor } from "../audit/AuditEntry.js"
import { AuditStore } from "../audit/AuditStore.js"
import { noChain } from "../Engine.js"
import { Partners } from "../partners/Partners.js"
import type { Caip10, Caip19 } from "../shared/Caip.js"
import { Merchants } from "./Merchants.js"
import { Settlements } from "./Settlements.js"

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const ETH_BASE = "eip155:8453/slip44:60" as Caip19
const WALLET_A = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678" as Caip10
const WALLET_B = "eip155:8453:0x00000000000000000000000000000000000000b0" as Caip10

/** Settlements, and the merchants and partners the fixture makes, over their ground. */
const engine = () =>
  Layer.mergeAll(Settlements.Default, Merchants.Default, Partners.Default).pipe(
    Layer.provideMerge(Layer.merge(unitGround(), noChain))
  )

describe("settlement changes in the audit trail", () => {
  it.effect("records who created, changed and removed each, with old and new values", () =>
    Effect.gen(function* () {
      const {
        partner,
        key,
        merchant: { id: merchantId }
      } = yield* partnerWithMerchant
      const settlements = yield* Settlements
      const {
        settlements: [usdc, eth]
      } = yield* settlements.register(
        partner,
        merchantId,
        [
          { asset: USDC_BASE, destination: WALLET_A },
          { asset: ETH_BASE, destination: WALLET_A }
        ],
        embedderActor
      )
      // Refused: an asset it has already; nothing is recorded.
      const conflict = yield* Effect.flip(
        settlements.register(
          partner,
          merchantId,
          [{ asset: USDC_BASE, destination: WALLET_B }],
          embedderActor
        )
      )
      expect(conflict._tag).toBe("SettlementAssetConflict")
      yield* settlements.changeDestination(partner, merchantId, usdc!.id, WALLET_B, cliActor)
      yield* settlements.remove(partner, merchantId, eth!.id, embedderActor)
      // Gone already: nothing more.
      yield* settlements.remove(partner, merchantId, eth!.id, embedderActor)

      const entries = yield* (yield* AuditStore).list({ partnerId: partner.id, limit: 10 })
      expect(
        entries.map((e) => [e.action, e.actor.kind, e.subject, e.merchantId, e.before, e.after])
      ).toEqual([
        [
          "settlement.deleted",
          "embedder",
          eth!.id,
          merchantId,
          { asset: ETH_BASE, destination: WALLET_A },
          null
        ],
        [
          "settlement.updated",
          "cli",
          usdc!.id,
          merchantId,
          { asset: USDC_BASE, destination: WALLET_A },
          { asset: USDC_BASE, destination: WALLET_B }
        ],
        [
          "settlement.created",
          "embedder",
          eth!.id,
          merchantId,
          null,
          { asset: ETH_BASE, destination: WALLET_A }
        ],
        [
          "settlement.created",
          "embedder",
          usdc!.id,
          merchantId,
          null,
          { asset: USDC_BASE, destination: WALLET_A }
        ],
        // The partner's first key, made with it.
        ["api_key.created", "embedder", key.id, null, null, expect.objectContaining({ id: key.id })]
      ])
      expect(entries.every((e) => e.partnerId === partner.id)).toBe(true)
    }).pipe(Effect.provide(engine()))
  )
})
