/**
 * Who acts in a partner API request, for the audit trail: the API key the
 * request carries. The partner middleware's authenticator (partners/
 * Authenticate.ts) may put the key's public id in the request's context as
 * `CurrentApiKey`; handlers read the actor here, and nowhere else.
 */
import { Effect, Option } from "effect"
import { CurrentApiKey } from "../identity/PartnerAuth.js"
import { type AuditActor, apiKeyActor } from "./AuditEntry.js"

/** The actor of the current partner request: its key, by public id when known. */
export const requestActor: Effect.Effect<AuditActor> = Effect.map(
  Effect.serviceOption(CurrentApiKey),
  (key) => apiKeyActor(Option.getOrUndefined(key)?.keyId)
)
