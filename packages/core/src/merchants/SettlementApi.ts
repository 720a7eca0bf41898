/**
 * The crypto settlement routes (SPEC.md 4.2 and 4.5). The reference does not
 * cover them, so they follow its merchant routes' style; a settlement carries
 * both SPEC.md's `id` and the reference profile's `configId` (WIRE.md).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { failsWith, IdempotentHeaders, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { PartnerApiKey } from "../identity/PartnerAuth.js"
import { Caip10Schema, Caip19Schema } from "../shared/Caip.js"
import { MerchantId } from "./Merchant.js"
import { CryptoSettlementId } from "./Settlement.js"
import { SETTLEMENT_WARNING_CODES } from "./SettlementWarning.js"

export const CryptoSettlementView = Schema.Struct({
  id: Schema.String.annotations({ examples: ["crypto_0Mg3vLwE9kTq2xHbY7pA"] }),
  configId: Schema.String.annotations({ description: "The same as `id` (the reference's name)" }),
  asset: Schema.String.annotations({
    description: "CAIP-19 asset id",
    examples: ["eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"]
  }),
  destination: Schema.String.annotations({
    description: "CAIP-10 account on the asset's chain",
    examples: ["eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"]
  })
}).annotations({ identifier: "CryptoSettlement" })

/** A settlement saved in an asset none of the engine's networks can pay (SettlementWarnings.ts). */
export const SettlementWarningView = Schema.Struct({
  code: Schema.Literal(...SETTLEMENT_WARNING_CODES).annotations({
    description:
      "asset_not_payable: no network the engine runs has this token, so wallets are not offered it until one does"
  }),
  message: Schema.String.annotations({
    description: "In words: what cannot be paid, why, and what the merchant can still be paid in",
    examples: [
      "Wallets are not offered USDC on Base (eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913): Base (eip155:8453) is not one of the engine's networks: it runs Pay sandbox (eip155:31337). The settlement is saved and is used once Base is configured. Until then no settlement of this merchant can be paid, so its payments offer wallets no way to pay."
    ]
  }),
  asset: Schema.String.annotations({ description: "The settlement's CAIP-19 asset id" })
}).annotations({ identifier: "SettlementWarning" })

/**
 * Present only when there is something to warn about: the change is made all the same (the
 * network may be added later). Logged as a warning too.
 */
const Warnings = Schema.optional(Schema.Array(SettlementWarningView)).annotations({
  description:
    "Settlements saved in an asset no network of the engine can pay; absent when every one can be paid"
})

/** Fiat settlement is not implemented: the lists are always empty (WIRE.md). */
export const FiatSettlementView = Schema.Struct({
  configId: Schema.String,
  status: Schema.String,
  bankType: Schema.String
}).annotations({ identifier: "FiatSettlement" })

export const NewCryptoSettlementRequest = Schema.Struct({
  asset: Caip19Schema,
  destination: Caip10Schema
})

export const CreateCryptoSettlementsRequest = Schema.Struct({
  settlements: Schema.Array(NewCryptoSettlementRequest).pipe(
    Schema.minItems(1, { message: () => "must have at least 1 entry" }),
    Schema.maxItems(50, { message: () => "must have at most 50 entries" })
  )
}).annotations({ identifier: "CreateCryptoSettlementsRequest" })

export const UpdateCryptoSettlementRequest = Schema.Struct({
  destination: Caip10Schema
}).annotations({ identifier: "UpdateCryptoSettlementRequest" })

const nouns = { merchantId: "merchant", id: "crypto settlement" }
/** Ids in these paths that do not decode name nothing: 404 not_found. */
export const SettlementsPath = pathOf(
  { merchantId: MerchantId },
  { error: ApiErrors.NotFound, nouns }
)
export const SettlementPath = pathOf(
  { merchantId: MerchantId, id: CryptoSettlementId },
  { error: ApiErrors.NotFound, nouns }
)

const ownedMerchant = [ApiErrors.Forbidden, ApiErrors.NotFound] as const

export const createCryptoSettlements = HttpApiEndpoint.post(
  "createCrypto",
  "/v1/merchants/:merchantId/settlements/crypto"
)
  .setHeaders(IdempotentHeaders)
  .setPath(SettlementsPath)
  .setPayload(CreateCryptoSettlementsRequest)
  .addSuccess(
    Schema.Struct({ settlements: Schema.Array(CryptoSettlementView), warnings: Warnings }),
    { status: 201 }
  )
  .annotate(OpenApi.Summary, "Register crypto settlement destinations (1 to 50, all or none)")
  .pipe(
    failsWith(...ownedMerchant, ApiErrors.IdempotencyConflict, ApiErrors.SettlementAssetConflict)
  )

export const listSettlements = HttpApiEndpoint.get("list", "/v1/merchants/:merchantId/settlements")
  .setHeaders(VersionHeaders)
  .setPath(SettlementsPath)
  .addSuccess(
    Schema.Struct({
      crypto: Schema.Array(CryptoSettlementView),
      fiat: Schema.Array(FiatSettlementView)
    })
  )
  .annotate(OpenApi.Summary, "List a merchant's settlement destinations")
  .pipe(failsWith(...ownedMerchant))

export const updateCryptoSettlement = HttpApiEndpoint.put(
  "updateCrypto",
  "/v1/merchants/:merchantId/settlements/crypto/:id"
)
  .setHeaders(VersionHeaders)
  .setPath(SettlementPath)
  .setPayload(UpdateCryptoSettlementRequest)
  .addSuccess(Schema.Struct({ settlement: CryptoSettlementView, warnings: Warnings }))
  .annotate(OpenApi.Summary, "Change a settlement's destination (same chain as its asset)")
  .pipe(failsWith(...ownedMerchant))

export const deleteCryptoSettlement = HttpApiEndpoint.del(
  "deleteCrypto",
  "/v1/merchants/:merchantId/settlements/crypto/:id"
)
  .setHeaders(VersionHeaders)
  .setPath(SettlementPath)
  .addSuccess(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }))
  .annotate(
    OpenApi.Summary,
    "Remove a settlement; later payments in its asset are no longer auto-settled"
  )
  .pipe(failsWith(...ownedMerchant))

export class SettlementsApi extends HttpApiGroup.make("settlements")
  .annotate(OpenApi.Title, "Settlements")
  .add(createCryptoSettlements)
  .add(listSettlements)
  .add(updateCryptoSettlement)
  .add(deleteCryptoSettlement)
  .middleware(PartnerApiKey) {}
