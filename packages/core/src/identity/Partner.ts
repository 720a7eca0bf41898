/**
 * Partner accounts (the platforms that hold merchants) and their API keys.
 */
import { Schema } from "effect"
import { ApiVersion } from "../shared/ApiVersion.js"
import { prefixedId } from "../shared/Ids.js"

export const PartnerId = prefixedId("ptnr", "PartnerId")
export type PartnerId = typeof PartnerId.Type

export const PartnerName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(256))

export class Partner extends Schema.Class<Partner>("Partner")({
  id: PartnerId,
  name: Schema.String,
  apiVersion: ApiVersion,
  createdAt: Schema.DateFromSelf
}) {}
