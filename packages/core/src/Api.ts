/**
 * The whole partner API as one HttpApi definition, assembled from the feature
 * groups. It is the source of the OpenAPI document and of the schemas the
 * engine's routes decode with.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import {
  InternalError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnsupportedMediaTypeError
} from "./http/ApiDocs.js"
import { MerchantsApi } from "./merchants/Api.js"
import { SettlementsApi } from "./settlements/Api.js"

const DESCRIPTION = `The partner API of an open-source crypto payment acceptance engine.

Authenticate with your partner key in the \`Api-Key\` header (\`Authorization: Bearer <key>\` also works).
Pick an API version with \`Pay-Version\` (or \`WCP-Version\`, \`Api-Version\`); without one, your account's pinned version applies.
Every error answers \`{code, message, issues?}\`; validation errors name each offending field in \`issues\`.`

export class PayApi extends HttpApi.make("pay")
  .add(MerchantsApi)
  .add(SettlementsApi)
  .addError(UnauthorizedError, { status: 401 })
  .addError(PayloadTooLargeError, { status: 413 })
  .addError(UnsupportedMediaTypeError, { status: 415 })
  .addError(InternalError, { status: 500 })
  .annotate(OpenApi.Title, "Pay engine API")
  .annotate(OpenApi.Version, "2026-02-18")
  .annotate(OpenApi.Description, DESCRIPTION) {}

let cached: OpenApi.OpenAPISpec | undefined
export const openApiDocument = (): OpenApi.OpenAPISpec => {
  cached ??= OpenApi.fromApi(PayApi)
  return cached
}
