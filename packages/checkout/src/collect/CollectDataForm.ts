/**
 * What the data-collection page receives: the fields of its urlencoded form
 * post, and the values a wallet may suggest in the page's `prefill` parameter.
 * The page itself is rendered by CollectDataPage.ts.
 */
import { type CollectDataSchema, collectDataSchema, type SubmittedField } from "@pay/core"

/**
 * The fields of a urlencoded form body, in the wire form {@link fromSubmittedFields} takes. A
 * checkbox left unticked is not sent by browsers: each boolean property of the schema missing
 * from the body is added as `"false"`, so it is reported as not accepted rather than missing.
 */
export const parseFormBody = (
  body: string,
  schema: CollectDataSchema = collectDataSchema
): ReadonlyArray<SubmittedField> => {
  const params = new URLSearchParams(body)
  const fields: Array<SubmittedField> = [...params].map(([id, value]) => ({ id, value }))
  for (const [id, property] of Object.entries(schema.properties)) {
    if (property.type === "boolean" && !params.has(id)) fields.push({ id, value: "false" })
  }
  return fields
}

const MAX_PREFILL = 8_192

/**
 * The values of a wallet's `prefill` query parameter (base64 or base64url of a JSON object, as
 * the wallet SDKs' guides build it), to pass as `values`. Only the schema's text properties are
 * taken: a wallet may suggest a name, never tick the terms for the buyer. Anything malformed gives
 * no values.
 */
export const valuesFromPrefill = (
  prefill: string | null | undefined,
  schema: CollectDataSchema = collectDataSchema
): Partial<Record<string, string>> => {
  if (prefill === null || prefill === undefined || prefill.length > MAX_PREFILL) return {}
  try {
    const b64 = prefill.trim().replace(/-/g, "+").replace(/_/g, "/")
    const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4)
    const binary = atob(padded)
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    const parsed: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {}
    const values: Record<string, string> = {}
    for (const [id, value] of Object.entries(parsed)) {
      const property = Object.hasOwn(schema.properties, id) ? schema.properties[id] : undefined
      if (property?.type === "string" && typeof value === "string") values[id] = value
    }
    return values
  } catch {
    return {}
  }
}
