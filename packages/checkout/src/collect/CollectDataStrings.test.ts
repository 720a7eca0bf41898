import { collectedDataFromFields } from "@pay/core"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { renderCollectDataPage } from "./CollectDataPage.js"
import { COLLECT_STRINGS } from "./CollectDataStrings.js"

describe("the data-collection page in Spanish", () => {
  it("translates its words, the fields and the checks' messages; the English page is the default", () => {
    const checked = collectedDataFromFields([
      { id: "fullName", value: "" },
      { id: "dob", value: "10/12/1990" },
      { id: "pobCountry", value: "spain" },
      { id: "tosConfirmed", value: "false" }
    ])
    expect(Either.isLeft(checked)).toBe(true)
    const issues = Either.isLeft(checked) ? checked.left : []
    const html = renderCollectDataPage({ action: "x", issues, language: "es" })
    expect(html).toContain('<html lang="es">')
    expect(html).toContain("Nombre completo")
    expect(html).toContain("Lugar de nacimiento</legend>")
    expect(html).toContain("Continuar")
    expect(html).toMatch(/Hay \d+ problemas que corregir/)
    // Every message the checks gave has its Spanish.
    for (const issue of issues) {
      expect(COLLECT_STRINGS.es.message(issue.message), issue.message).not.toBe(issue.message)
    }
    expect(html).not.toContain("must be")
    expect(html).not.toContain("is required")
    expect(renderCollectDataPage({ action: "x" })).toContain('<html lang="en">')
  })

  it("says thank you in Spanish", () => {
    const html = renderCollectDataPage({ action: "x", done: true, language: "es" })
    expect(html).toContain("<h1>Gracias</h1>")
    expect(html).toContain("<title>Tus datos: recibidos</title>")
  })
})
