/**
 * Merchants: the entities that receive payments, held by a partner account.
 */
import { Schema } from "effect"
import { PartnerId } from "../identity/Partner.js"
import { prefixedId } from "../shared/Ids.js"

export const MerchantId = prefixedId("mrch", "MerchantId")
export type MerchantId = typeof MerchantId.Type

export const MerchantStatus = Schema.Literal("active", "inactive", "suspended")
export type MerchantStatus = typeof MerchantStatus.Type

export class Merchant extends Schema.Class<Merchant>("Merchant")({
  id: MerchantId,
  partnerId: PartnerId,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  /** The URL the partner gave, kept for the record; buyers see the frozen logo (`logoName`). */
  iconUrl: Schema.NullOr(Schema.String),
  /**
   * The frozen logo's name under `{publicUrl}/logos/` (merchants/Logo.ts), or
   * null: no logo, or a merchant written before logos were frozen.
   */
  logoName: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  status: MerchantStatus,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  /** Soft deletion: hidden from listings, refuses new payments, kept for history. */
  deletedAt: Schema.NullOr(Schema.DateFromSelf)
}) {}

export interface MerchantChanges {
  readonly name?: string | undefined
  readonly email?: string | undefined
  /** `null` removes the logo; a URL comes with the name of the logo frozen from it. */
  readonly logo?: { readonly iconUrl: string; readonly logoName: string } | null | undefined
}

/**
 * The merchant's logo as every response shows it: the engine's URL of the
 * frozen image, so what buyers see cannot change behind the partner's back.
 * A merchant written before logos were frozen (no `logoName`) shows the URL
 * it was given until its next PATCH with an `iconUrl`.
 */
export const merchantIconUrl = (
  publicUrl: string,
  merchant: Pick<Merchant, "iconUrl" | "logoName"> | undefined
): string | null => {
  if (merchant === undefined) return null
  return merchant.logoName !== null ? `${publicUrl}/logos/${merchant.logoName}` : merchant.iconUrl
}

/**
 * Whether the merchant may be paid, and paid out, now: active and not deleted.
 * Otherwise the gateway refuses its payments (merchant_inactive) and its
 * settlements are held (chainwork/SettleStep.ts).
 */
export const merchantPayable = (merchant: Merchant | undefined): boolean =>
  merchant !== undefined && merchant.deletedAt === null && merchant.status === "active"

/** The status a refusal names: `deleted` for a deleted merchant. */
export const merchantStatusOf = (merchant: Merchant | undefined): string =>
  merchant === undefined || merchant.deletedAt !== null ? "deleted" : merchant.status

export class MerchantNotFound extends Schema.TaggedError<MerchantNotFound>()("MerchantNotFound", {
  merchantId: Schema.String
}) {}
