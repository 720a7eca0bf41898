/**
 * Text field schemas shared by the API: bounded names, e-mail addresses and
 * HTTPS URLs, each failing with a message a person can act on.
 */
import { Schema } from "effect"

/** Lengths count characters (code points), not UTF-16 units, as people do. */
export const characterCount = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

export const boundedText = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.filter(
      (s) => {
        const n = characterCount(s)
        return (n >= min && n <= max) || `must be ${min} to ${max} characters long`
      },
      { jsonSchema: { minLength: min, maxLength: max } }
    )
  )

/** A display name: 1 to 256 characters, not only white space. */
export const DisplayName = boundedText(1, 256).pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be blank")
)

// The reference API's own e-mail pattern, so both accept the same addresses.
const EMAIL =
  /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/

export const Email = Schema.String.pipe(
  Schema.maxLength(320, { message: () => "must be at most 320 characters long" }),
  Schema.pattern(EMAIL, { message: () => "must be an e-mail address like billing@shop.example" }),
  Schema.annotations({ format: "email", examples: ["billing@acme.store"] })
)

const isHttpsUrl = (s: string): boolean => {
  if (!URL.canParse(s)) return false
  const url = new URL(s)
  return (
    url.protocol === "https:" &&
    url.hostname.length > 0 &&
    url.username === "" &&
    url.password === ""
  )
}

export const HttpsUrl = Schema.String.pipe(
  Schema.maxLength(2048, { message: () => "must be at most 2048 characters long" }),
  Schema.filter((s) => isHttpsUrl(s) || "must be an https:// URL", {
    jsonSchema: { format: "uri", pattern: "^https://" }
  }),
  Schema.annotations({ examples: ["https://example.com/logo.png"] })
)
