import type { EngineRequest } from "@pay/core"
import { describe, expect, it } from "vitest"
import { isPaymentSegment, wantsHtml, withPaymentId } from "./CheckoutRoutes.js"

const withAccept = (accept: string | undefined): EngineRequest => ({
  method: "GET",
  url: "/pay_1",
  header: (name) => (name === "accept" ? accept : undefined),
  readBody: async () => new Uint8Array()
})

describe("the checkout page's routes", () => {
  it("answer browsers, which name text/html; wallet SDKs and tools are left to the 404", () => {
    expect(wantsHtml(withAccept("text/html,application/xhtml+xml,*/*;q=0.8"))).toBe(true)
    expect(wantsHtml(withAccept("application/xhtml+xml, text/html;q=0.9"))).toBe(true)
    expect(wantsHtml(withAccept("TEXT/HTML"))).toBe(true)
    expect(wantsHtml(withAccept("application/json"))).toBe(false)
    expect(wantsHtml(withAccept("*/*"))).toBe(false)
    expect(wantsHtml(withAccept("text/htmlx"))).toBe(false)
    expect(wantsHtml(withAccept(undefined))).toBe(false)
  })

  it("are under payment links only", () => {
    expect(isPaymentSegment("pay_0VbvuiemNRobt7zLmk3R")).toBe(true)
    expect(isPaymentSegment("health")).toBe(false)
    expect(isPaymentSegment("pay_")).toBe(false)
    expect(isPaymentSegment("pay_a/b")).toBe(false)
    expect(isPaymentSegment(undefined)).toBe(false)
  })

  it("send the buyer on with paymentId added, other parameters kept, only to web URLs", () => {
    expect(withPaymentId("https://shop.example/done?order=7", "pay_1")).toBe(
      "https://shop.example/done?order=7&paymentId=pay_1"
    )
    expect(withPaymentId("https://shop.example/done?paymentId=forged", "pay_1")).toBe(
      "https://shop.example/done?paymentId=pay_1"
    )
    expect(withPaymentId("javascript:alert(1)", "pay_1")).toBeNull()
    expect(withPaymentId("not a url", "pay_1")).toBeNull()
  })
})
