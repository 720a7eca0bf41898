import { describe, expect, it } from "vitest"
import { LANGUAGES, languageOf, STRINGS } from "./CheckoutStrings.js"

describe("the checkout page's language", () => {
  it("is the known language the browser weighs highest, English otherwise", () => {
    expect(languageOf(undefined)).toBe("en")
    expect(languageOf("")).toBe("en")
    expect(languageOf("es")).toBe("es")
    expect(languageOf("es-MX,es;q=0.9,en;q=0.8")).toBe("es")
    expect(languageOf("en-US,en;q=0.9,es;q=0.8")).toBe("en")
    expect(languageOf("fr-FR,fr;q=0.9,es;q=0.7")).toBe("es")
    expect(languageOf("de,fr")).toBe("en")
    expect(languageOf("es;q=0")).toBe("en")
    expect(languageOf("ES")).toBe("es")
    expect(languageOf("en;q=0.3, es;q=0.6")).toBe("es")
  })

  it("has every string in every language, none empty", () => {
    const keysOf = (value: unknown, prefix = ""): Array<string> =>
      typeof value === "object" && value !== null
        ? Object.entries(value).flatMap(([k, v]) => keysOf(v, `${prefix}${k}.`))
        : [`${prefix}${typeof value === "string" && value.trim() !== "" ? "" : "EMPTY"}`]
    const english = keysOf(STRINGS.en)
    expect(english.some((k) => k.endsWith("EMPTY"))).toBe(false)
    for (const language of LANGUAGES) expect(keysOf(STRINGS[language])).toEqual(english)
  })
})
