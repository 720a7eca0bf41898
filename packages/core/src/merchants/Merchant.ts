/**
 * Merchants: the entities that receive payments, held by a partner account.
 */
import { Schema } from "effect"
import { PartnerId } from "../partners/Partner.js"
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
  iconUrl: Schema.NullOr(Schema.String),
  status: MerchantStatus,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  /** Soft deletion: hidden from listings, refuses new payments, kept for history. */
  deletedAt: Schema.NullOr(Schema.DateFromSelf)
}) {}

export interface MerchantChanges {
  readonly name?: string | undefined
  readonly email?: string | undefined
  /** `null` removes the logo. */
  readonly iconUrl?: string | null | undefined
}

export class MerchantNotFound extends Schema.TaggedError<MerchantNotFound>()("MerchantNotFound", {
  merchantId: Schema.String
}) {}
