import { describe, expect, it } from "vitest"
import { escapeHtml } from "./Html.js"

describe("escapeHtml", () => {
  it("escapes the five characters that matter in text and attribute values", () => {
    expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;"
    )
  })

  it("leaves everything else alone, escaped text included (it escapes again)", () => {
    expect(escapeHtml("Café — 100 % ✓")).toBe("Café — 100 % ✓")
    expect(escapeHtml("&amp;")).toBe("&amp;amp;")
  })
})
