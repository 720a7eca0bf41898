/**
 * The merchant routes of the partner API (SPEC.md 4.1 and 4.5): wire schemas
 * matching the reference field for field, and the endpoint definitions.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { failsWith, IdempotentHeaders, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { IssueCode } from "../http/Decode.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { PartnerApiKey } from "../identity/PartnerAuth.js"
import { boundedText, DisplayName, Email, HttpsUrl } from "../shared/Text.js"
import { wholeNumberFromString } from "../shared/WholeNumber.js"
import { LOGO_REFUSAL_CODES, type LogoRefusalCode } from "./Logo.js"
import { MerchantId, MerchantStatus } from "./Merchant.js"
import { CryptoSettlementView, FiatSettlementView } from "./SettlementApi.js"

export const MerchantView = Schema.Struct({
  id: Schema.String.annotations({ examples: ["mrch_0Mg3vLwE9kTq2xHbY7pA"] }),
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  status: MerchantStatus,
  iconUrl: Schema.NullOr(Schema.String).annotations({
    description:
      "The engine's URL of the merchant's frozen logo (`{publicUrl}/logos/<name>`, `?size=64|128|256|512` for smaller ones), or null if not set"
  }),
  createdAt: Schema.String.annotations({ description: "RFC 3339 creation time" })
}).annotations({ identifier: "Merchant" })

export const MerchantProfile = Schema.Struct({
  ...MerchantView.fields,
  settlements: Schema.Struct({
    crypto: Schema.Array(CryptoSettlementView),
    fiat: Schema.Array(FiatSettlementView)
  })
}).annotations({ identifier: "MerchantProfile" })

const IconUrl = Schema.NullOr(
  HttpsUrl.annotations({ [IssueCode]: "invalid_icon_url" satisfies LogoRefusalCode })
).annotations({
  description:
    "Merchant logo URL (HTTPS only), or null for none. The image is fetched at once (public internet only, at most 2 MB, 3 redirects, 10 s) and must be a still JPEG, PNG, WebP or AVIF, square within 5 %, 500 to 4096 px a side, transparent only in PNG or WebP. The engine keeps a normalised copy and shows its own URL for it from then on. A refusal is 400 `params_validation` whose `iconUrl` issue has a `code`: " +
    LOGO_REFUSAL_CODES.map((c) => `\`${c}\``).join(", ")
})

export const CreateMerchantRequest = Schema.Struct({
  merchantName: DisplayName,
  merchantEmail: Email,
  iconUrl: Schema.optional(IconUrl)
}).annotations({ identifier: "CreateMerchantRequest" })

export const UpdateMerchantRequest = Schema.Struct({
  merchantName: Schema.optional(DisplayName),
  merchantEmail: Schema.optional(Email),
  iconUrl: Schema.optional(IconUrl)
}).annotations({
  identifier: "UpdateMerchantRequest",
  description: "At least one field; `iconUrl: null` removes the logo"
})

const Limit = wholeNumberFromString(1, 100)

export const ListMerchantsParams = Schema.Struct({
  status: Schema.optional(MerchantStatus),
  search: Schema.optional(
    boundedText(1, 256).annotations({
      description: "Case-insensitive match on the merchant's name or id"
    })
  ),
  cursor: Schema.optional(
    Schema.String.annotations({ description: "Opaque: the `nextCursor` of the previous page" })
  ),
  limit: Schema.optionalWith(Limit, { default: () => 20 })
})

export const ListMerchantsResponse = Schema.Struct({
  merchants: Schema.Array(MerchantView),
  totalCount: Schema.Int.annotations({ description: "Every match, ignoring pagination" }),
  nextCursor: Schema.NullOr(Schema.String)
})

/** A merchant id in a path that does not decode names no merchant: 404 not_found. */
export const MerchantPath = pathOf(
  { merchantId: MerchantId },
  { error: ApiErrors.NotFound, nouns: { merchantId: "merchant" } }
)

export const DeleteMerchantResponse = Schema.Struct({
  id: Schema.String,
  deleted: Schema.Literal(true)
})

export const createMerchant = HttpApiEndpoint.post("create", "/v1/merchants")
  .setHeaders(IdempotentHeaders)
  .setPayload(CreateMerchantRequest)
  .addSuccess(Schema.Struct({ merchant: MerchantView }), { status: 201 })
  .annotate(OpenApi.Summary, "Create a merchant")
  .pipe(failsWith(ApiErrors.IdempotencyConflict))

export const listMerchants = HttpApiEndpoint.get("list", "/v1/merchants")
  .setHeaders(VersionHeaders)
  .setUrlParams(ListMerchantsParams)
  .addSuccess(ListMerchantsResponse)
  .annotate(OpenApi.Summary, "List merchants, newest first")
  .pipe(failsWith())

export const getMerchant = HttpApiEndpoint.get("get", "/v1/merchants/:merchantId")
  .setHeaders(VersionHeaders)
  .setPath(MerchantPath)
  .addSuccess(Schema.Struct({ merchant: MerchantProfile }))
  .annotate(OpenApi.Summary, "Fetch a merchant with its settlements")
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.NotFound))

export const updateMerchant = HttpApiEndpoint.patch("update", "/v1/merchants/:merchantId")
  .setHeaders(VersionHeaders)
  .setPath(MerchantPath)
  .setPayload(UpdateMerchantRequest)
  .addSuccess(Schema.Struct({ merchant: MerchantView }))
  .annotate(OpenApi.Summary, "Update a merchant's name, e-mail or logo")
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.NotFound))

export const deleteMerchant = HttpApiEndpoint.del("delete", "/v1/merchants/:merchantId")
  .setHeaders(VersionHeaders)
  .setPath(MerchantPath)
  .addSuccess(DeleteMerchantResponse)
  .annotate(OpenApi.Summary, "Delete a merchant (soft, idempotent)")
  .pipe(failsWith(ApiErrors.Forbidden, ApiErrors.NotFound))

export class MerchantsApi extends HttpApiGroup.make("merchants")
  .annotate(OpenApi.Title, "Merchants")
  .add(createMerchant)
  .add(listMerchants)
  .add(getMerchant)
  .add(updateMerchant)
  .add(deleteMerchant)
  .middleware(PartnerApiKey) {}
