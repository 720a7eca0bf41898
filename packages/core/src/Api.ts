/**
 * The whole partner API as one HttpApi definition, assembled from the feature
 * groups. It is the source of the OpenAPI document and of the schemas the
 * engine's routes decode with.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { GatewayApi } from "./gateway/Api.js"
import { headerName } from "./http/ApiDocs.js"

// What a client needs to answer a malformed request as the engine would, without sending it.
export { HEADER_RULES, headerName, pathNotFoundOf } from "./http/ApiDocs.js"
export { toFieldIssues } from "./http/Decode.js"
export { ApiErrors } from "./http/ErrorResponses.js"

import { EventsApi } from "./events/Api.js"
import { ApiKeysApi } from "./keys/Api.js"
import { MerchantsApi } from "./merchants/Api.js"
import { SettlementsApi } from "./merchants/SettlementApi.js"
import { PaymentsApi } from "./payments/Api.js"
import { WebhookEndpointsApi } from "./webhooks/Api.js"

const DESCRIPTION = `The partner API of an open-source crypto payment acceptance engine.

Authenticate with your partner key in the \`Api-Key\` header (\`Authorization: Bearer <key>\` also works).
Pick an API version with \`Pay-Version\` (or \`WCP-Version\`, \`Api-Version\`); without one, your account's pinned version applies.
Every error answers \`{code, message, issues?}\`; validation errors name each offending field in \`issues\`.
Each operation lists every status and \`code\` it can answer.`

export class PayApi extends HttpApi.make("pay")
  .add(MerchantsApi)
  .add(SettlementsApi)
  .add(PaymentsApi)
  .add(GatewayApi)
  .add(EventsApi)
  .add(WebhookEndpointsApi)
  .add(ApiKeysApi)
  .annotate(OpenApi.Title, "Pay engine API")
  .annotate(OpenApi.Version, "2026-02-18")
  .annotate(OpenApi.Description, DESCRIPTION) {}

const isDecodeErrorRef = (schema: unknown) =>
  (schema as { $ref?: string }).$ref === "#/components/schemas/HttpApiDecodeError"

/** The `code` values of an error response's schema (its members' components). */
const codesOf = (schema: unknown, components: Record<string, unknown>): Array<string> => {
  const members = (schema as { anyOf?: Array<unknown> }).anyOf ?? [schema]
  return members.flatMap((member) => {
    const ref = (member as { $ref?: string }).$ref
    const resolved = ref ? components[ref.split("/").at(-1)!] : member
    const code = (resolved as { properties?: { code?: { enum?: Array<string> } } })?.properties
      ?.code
    return code?.enum ?? []
  })
}

/**
 * The platform adds its own decode-error schema to every 400; the engine never
 * sends that shape (its 400s are `{code, message, issues}`), so it is removed.
 * Each error response's description names the codes it can carry.
 */
const polish = (document: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  const components = document.components.schemas as Record<string, unknown>
  for (const path of Object.values(document.paths)) {
    for (const operation of Object.values(path) as Array<OpenApi.OpenAPISpecOperation>) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation))
        continue
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === "header")
          (parameter as { name: string }).name = headerName(parameter.name)
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const media = response.content?.["application/json"] as {
          schema?: { anyOf?: Array<unknown> }
        }
        const anyOf = media?.schema?.anyOf
        if (media && anyOf?.some(isDecodeErrorRef)) {
          const rest = anyOf.filter((s) => !isDecodeErrorRef(s))
          media.schema = rest.length === 1 ? (rest[0] as object) : { anyOf: rest }
        }
        if (Number(status) >= 400 && media?.schema) {
          const codes = codesOf(media.schema, components)
          if (codes.length > 0) {
            ;(response as { description: string }).description = codes
              .map((c) => `\`${c}\``)
              .join(", ")
          }
        }
      }
    }
  }
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) {
    delete components[name]
  }
  return document
}

let cached: OpenApi.OpenAPISpec | undefined
export const openApiDocument = (): OpenApi.OpenAPISpec => {
  cached ??= polish(OpenApi.fromApi(PayApi))
  return cached
}
