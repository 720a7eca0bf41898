import { describe, expect, it } from "vitest"
import { paymentIdOfSegment } from "./PaymentRef.js"

const ID = "pay_0000000000abcdefghij"

/** What the router hands over: the raw segment decoded once. */
const routed = (raw: string) => decodeURIComponent(raw)

describe("gateway payment references", () => {
  it("takes a bare id", () => {
    expect(paymentIdOfSegment(routed(ID))).toBe(ID)
  })

  it("takes the id from a buyer link encoded twice, as SDKs send it (WIRE.md)", () => {
    expect(paymentIdOfSegment(routed(`https%253A%252F%252Fshop.example%252F${ID}`))).toBe(ID)
    expect(
      paymentIdOfSegment(routed(`http%253A%252F%252Fhost%253A8080%252F%253Fpid%253D${ID}`))
    ).toBe(ID)
  })

  it("takes the id from a link encoded once, or with a trailing slash or a query", () => {
    expect(paymentIdOfSegment(routed(encodeURIComponent(`https://pay.example/${ID}`)))).toBe(ID)
    expect(paymentIdOfSegment(routed(encodeURIComponent(`https://pay.example/x/${ID}/`)))).toBe(ID)
    expect(
      paymentIdOfSegment(routed(encodeURIComponent(`https://pay.example/${ID}?utm=wallet`)))
    ).toBe(ID)
  })

  it("names nothing for anything else", () => {
    for (const raw of [
      "not-an-id",
      "pay_",
      encodeURIComponent("https://shop.example/checkout"),
      encodeURIComponent(`https://shop.example/?pid=nope`),
      encodeURIComponent(`ftp://shop.example/${ID}`),
      encodeURIComponent(`javascript:alert(1)//${ID}`),
      "%25E0%25A4%25A"
    ]) {
      expect(paymentIdOfSegment(routed(raw)), raw).toBeUndefined()
    }
  })
})
