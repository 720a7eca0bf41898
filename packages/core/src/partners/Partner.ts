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

/** What is stored of a key: never the key itself. */
export interface StoredApiKey {
  /** The key's first characters, unique, used to find the record. */
  readonly prefix: string
  /** SHA-256 of the whole key, hex. */
  readonly hash: string
  readonly partnerId: PartnerId
  readonly createdAt: Date
}

export class ApiKeyPrefixTaken extends Schema.TaggedError<ApiKeyPrefixTaken>()(
  "ApiKeyPrefixTaken",
  {}
) {}
