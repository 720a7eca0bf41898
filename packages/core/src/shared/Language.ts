/**
 * The languages the engine's pages speak (the checkout page, the data-collection
 * page), and the one a browser asks for with `Accept-Language`.
 */

export const LANGUAGES = ["en", "es"] as const
export type Language = (typeof LANGUAGES)[number]

/**
 * The language of an `Accept-Language` header (RFC 9110): the known one with the highest
 * weight, a region ignored (`es-MX` is Spanish), English when none is known or weighted above 0.
 */
export const languageOf = (acceptLanguage: string | undefined): Language => {
  let best: Language = "en"
  let bestWeight = 0
  for (const item of (acceptLanguage ?? "").split(",")) {
    const [range = "", ...params] = item.trim().split(";")
    const primary = range.trim().toLowerCase().split("-")[0] ?? ""
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const weight = q === undefined ? 1 : Number(q.slice(2))
    if (!Number.isFinite(weight) || weight <= 0) continue
    const language = LANGUAGES.find((l) => l === primary)
    if (language !== undefined && weight > bestWeight) {
      best = language
      bestWeight = weight
    }
  }
  return best
}
