import { type Caip2, type Caip19, type NoOptionsReason, noOptionsText } from "@pay/core"
import { describe, expect, it } from "vitest"
import { LANGUAGES, languageOf, noOptionsWords, STRINGS } from "./CheckoutStrings.js"

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

describe("why there is no way to pay, on the page", () => {
  const base = {
    asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19,
    chainId: "eip155:8453" as Caip2,
    symbol: "USDC",
    network: "Base"
  }
  const reason: NoOptionsReason = { code: "settlement_not_payable", settled: [base] }

  it("is said in the buyer's language, with the assets named in it", () => {
    expect(noOptionsText(reason, noOptionsWords("en"))).toBe(
      "This merchant is paid only in USDC on Base, which this payment service cannot take, so there is no way to pay it here."
    )
    expect(noOptionsText(reason, noOptionsWords("es"))).toBe(
      "Este comercio solo recibe pagos en USDC en Base, que este servicio de pagos no admite, así que aquí no hay forma de pagarle."
    )
    expect(
      noOptionsText(
        { code: "no_price", currency: "JPY", payable: [base, { ...base, symbol: "EURC" }] },
        noOptionsWords("es")
      )
    ).toBe(
      "No hay tipo de cambio de JPY a USDC en Base o EURC en Base, lo que recibe este comercio, así que no se puede convertir el importe."
    )
  })

  it("has words for every reason in every language, each naming what its reason gives", () => {
    for (const language of LANGUAGES) {
      const words = STRINGS[language].noOptions
      expect(words.settlement_not_payable).toContain("{assets}")
      expect(words.no_price).toMatch(/\{currency\}.*\{assets\}/)
      expect(words.asset_not_payable).toMatch(/\{asked\}.*\{assets\}/)
      expect(words.accounts_not_payable).toContain("{assets}")
      expect(words.network_unavailable).toContain("{networks}")
    }
  })
})
