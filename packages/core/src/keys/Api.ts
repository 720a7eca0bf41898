/**
 * The API key routes of the partner API: a partner manages its own keys with
 * one of them. Neither SPEC.md nor the reference has them; they follow the
 * webhook endpoint routes' style (issue 19).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { failsWith, IdempotentHeaders, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { PartnerApiKey } from "../identity/PartnerAuth.js"
import { boundedText } from "../shared/Text.js"
import { parseRfc3339 } from "../shared/Time.js"
import {
  ApiKeyId,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  MAX_KEY_NAME_LENGTH,
  MAX_ROTATION_OVERLAP_SECONDS
} from "./KeyRecord.js"
import { API_KEY_SCOPES, ApiKeyScope, scopesProblem } from "./Scopes.js"

const Time = Schema.String.annotations({ description: "RFC 3339" })

export const ApiKeyView = Schema.Struct({
  id: Schema.String.annotations({ examples: ["key_0Mg3vLwE9kTq2xHbY7pA"] }),
  name: Schema.NullOr(Schema.String),
  createdAt: Time,
  lastUsedAt: Schema.NullOr(Time).annotations({
    description: "RFC 3339, to within a minute; null if never used"
  }),
  expiresAt: Schema.NullOr(Time),
  revokedAt: Schema.NullOr(Time).annotations({
    description:
      "RFC 3339: when the key stopped, or, after a rotation, will stop being accepted; null if not revoked"
  }),
  scopes: Schema.Array(ApiKeyScope).annotations({
    description: "What the key may do; a route outside them is 403 `insufficient_scope`"
  })
}).annotations({ identifier: "ApiKey" })

export const CreatedApiKey = Schema.Struct({
  id: ApiKeyView.fields.id,
  name: ApiKeyView.fields.name,
  createdAt: Time,
  expiresAt: ApiKeyView.fields.expiresAt,
  scopes: ApiKeyView.fields.scopes,
  secret: Schema.String.annotations({
    description:
      "The key (`pk_…`), sent as `Api-Key`: shown only here and in a replay of this request"
  })
}).annotations({ identifier: "CreatedApiKey" })

const FutureTime = Schema.String.pipe(
  Schema.filter((s) => parseRfc3339(s) !== undefined || "must be an RFC 3339 timestamp")
).annotations({ description: "RFC 3339, in the future" })

/**
 * One message for every wrong list (an unknown name, none, one twice), as
 * the service's own check says it (Scopes.ts), not one issue per element.
 */
const Scopes = Schema.Array(Schema.String)
  .pipe(Schema.filter((scopes) => scopesProblem(scopes) ?? true))
  .annotations({
    message: (issue) => ({
      message:
        issue._tag === "Refinement" && issue.kind === "Predicate"
          ? (scopesProblem(issue.actual as ReadonlyArray<string>) ??
            "is not a valid list of scopes")
          : `must be a list of scopes among: ${API_KEY_SCOPES.join(", ")}`,
      override: true
    }),
    description: `What the new key may do, each once, among: ${API_KEY_SCOPES.join(", ")}; default: the scopes of the key that creates it, which it may not exceed`
  })

export const CreateApiKeyRequest = Schema.Struct({
  name: Schema.optional(boundedText(1, MAX_KEY_NAME_LENGTH)),
  expiresAt: Schema.optional(FutureTime),
  scopes: Schema.optional(Scopes)
}).annotations({ identifier: "CreateApiKeyRequest" })

export const RotateApiKeyRequest = Schema.Struct({
  overlapSeconds: Schema.optional(
    Schema.Int.pipe(
      Schema.between(0, MAX_ROTATION_OVERLAP_SECONDS, {
        // Said for a value that is no number at all, or not a whole one, too.
        message: () => ({
          message: `must be a whole number of seconds from 0 (at once) to ${MAX_ROTATION_OVERLAP_SECONDS} (30 days)`,
          override: true
        })
      })
    ).annotations({
      description: `How long the rotated key stays valid beside the new one; default ${DEFAULT_ROTATION_OVERLAP_SECONDS}`
    })
  )
}).annotations({ identifier: "RotateApiKeyRequest" })

export const RotatedApiKey = Schema.Struct({
  ...CreatedApiKey.fields,
  previousKey: ApiKeyView.annotations({
    description: "The rotated key: `revokedAt` says until when it is still accepted"
  })
}).annotations({ identifier: "RotatedApiKey" })

export const ApiKeyPath = pathOf(
  { id: ApiKeyId },
  { error: ApiErrors.NotFound, nouns: { id: "API key" } }
)

export const createApiKey = HttpApiEndpoint.post("create", "/v1/api-keys")
  .setHeaders(IdempotentHeaders)
  .setPayload(CreateApiKeyRequest)
  .addSuccess(CreatedApiKey, { status: 201 })
  .annotate(OpenApi.Summary, "Create an API key")
  .annotate(
    OpenApi.Description,
    "A new key for the calling partner. Its secret is shown only in this response (and in a replay of it with the same Idempotency-Key, kept sealed while the idempotency record lives)."
  )
  .pipe(failsWith(ApiErrors.IdempotencyConflict))

export const listApiKeys = HttpApiEndpoint.get("list", "/v1/api-keys")
  .setHeaders(VersionHeaders)
  .addSuccess(Schema.Struct({ data: Schema.Array(ApiKeyView) }))
  .annotate(OpenApi.Summary, "List the partner's API keys, newest first, revoked ones included")
  .pipe(failsWith())

export const revokeApiKey = HttpApiEndpoint.post("revoke", "/v1/api-keys/:id/revoke")
  .setHeaders(VersionHeaders)
  .setPath(ApiKeyPath)
  .addSuccess(ApiKeyView)
  .annotate(OpenApi.Summary, "Revoke an API key at once (idempotent)")
  .annotate(
    OpenApi.Description,
    "Refused with 409 when it would leave the partner without an active key that is not already being revoked; the operator's CLI can revoke that one."
  )
  .pipe(failsWith(ApiErrors.NotFound, ApiErrors.LastActiveApiKey))

export const rotateApiKey = HttpApiEndpoint.post("rotate", "/v1/api-keys/:id/rotate")
  .setHeaders(IdempotentHeaders)
  .setPath(ApiKeyPath)
  .setPayload(RotateApiKeyRequest)
  .addSuccess(RotatedApiKey, { status: 201 })
  .annotate(OpenApi.Summary, "Rotate an API key")
  .annotate(
    OpenApi.Description,
    "A new key with the same name; the rotated one stays accepted for `overlapSeconds` (default 24 h), then is revoked."
  )
  .pipe(failsWith(ApiErrors.NotFound, ApiErrors.ApiKeyInactive, ApiErrors.IdempotencyConflict))

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .annotate(OpenApi.Title, "API keys")
  .add(createApiKey)
  .add(listApiKeys)
  .add(revokeApiKey)
  .add(rotateApiKey)
  .middleware(PartnerApiKey) {}
