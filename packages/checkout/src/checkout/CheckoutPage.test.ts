import { describe, expect, it } from "vitest"
import { checkoutPagePolicy, formatRemaining, renderCheckoutPage } from "./CheckoutPage.js"
import { STRINGS } from "./CheckoutStrings.js"

const view = {
  paymentId: "pay_abc",
  link: "https://pay.example/pay_abc",
  merchantName: `Shop "<b>"`,
  logoUrl: null,
  amount: "$10.50",
  reference: "<script>alert(1)</script>",
  youPay: "You pay 10.50 USDC on <Base>",
  noOptions: null,
  state: "requires_action" as const,
  failureReason: null,
  transactionHash: null,
  expiresAt: new Date(1_000_000 + 299_500),
  now: new Date(1_000_000),
  testMode: false,
  successUrl: null,
  errorUrl: null,
  qrSvg: "<svg></svg>",
  language: "en" as const,
  strings: STRINGS.en
}

describe("the checkout page", () => {
  it("escapes every value from the payment and the merchant, and runs no inline script", () => {
    const html = renderCheckoutPage(view)
    expect(html).not.toContain("<script>alert")
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).toContain("Shop &quot;&lt;b&gt;&quot;")
    expect(html.match(/<script/g)).toHaveLength(1)
    expect(html).toMatch(/<script src="checkout\.js\?v=[0-9a-f]{12}" integrity="sha256-/)
  })

  it("shows the time left as m:ss (h:mm:ss past an hour), never below zero", () => {
    expect(formatRemaining(299_500)).toBe("5:00")
    expect(formatRemaining(59_001)).toBe("1:00")
    expect(formatRemaining(3_725_000)).toBe("1:02:05")
    expect(formatRemaining(-5)).toBe("0:00")
    expect(renderCheckoutPage(view)).toContain(">5:00</time>")
  })

  it("shows no payment controls once the payment is not payable", () => {
    const html = renderCheckoutPage({ ...view, state: "cancelled", qrSvg: "" })
    expect(html).not.toContain('id="pay"')
    expect(html).toContain("Payment cancelled")
  })

  it("says which token, network and amount the buyer will pay, above the QR code", () => {
    const html = renderCheckoutPage(view)
    expect(html).toContain(
      '<p class="token-amount" id="token-amount">You pay 10.50 USDC on &lt;Base&gt;</p>'
    )
    expect(html.indexOf('id="token-amount"')).toBeLessThan(html.indexOf('id="pay"'))
    // Without one (a final payment), the line is there for the script, hidden.
    expect(renderCheckoutPage({ ...view, youPay: null, state: "succeeded" })).toContain(
      '<p class="token-amount" id="token-amount" hidden></p>'
    )
  })

  it("says why in place of the QR code and the wallet when there is no way to pay", () => {
    const html = renderCheckoutPage({
      ...view,
      youPay: null,
      noOptions: "This merchant is paid only in USDC on <Base>."
    })
    expect(html).toContain('<h2 id="no-options-heading">No way to pay</h2>')
    expect(html).toContain(
      '<p id="no-options-reason">This merchant is paid only in USDC on &lt;Base&gt;.</p>'
    )
    expect(html).not.toContain('id="pay"')
    expect(html).not.toContain("<svg")
    // Still waiting for payment: the status says so (not "pay with your wallet"), and follows a
    // cancel live.
    expect(html).toContain("Waiting for payment")
    expect(html).toContain('<p id="status-text"></p>')
    // A final payment says nothing of it.
    expect(
      renderCheckoutPage({ ...view, noOptions: "x", state: "cancelled", qrSvg: "" })
    ).not.toContain('id="no-options"')
  })

  it("allows images from the merchant logo's origin only when it is elsewhere", () => {
    expect(checkoutPagePolicy(null)).toContain("img-src 'self' data:;")
    expect(checkoutPagePolicy("logos/abc?size=128")).toContain("img-src 'self' data:;")
    expect(checkoutPagePolicy("https://cdn.shop.example/logo.png")).toContain(
      "img-src 'self' data: https://cdn.shop.example;"
    )
    expect(checkoutPagePolicy(null)).not.toContain("unsafe-inline")
  })
})

describe("the checkout page's script", () => {
  it("is valid JavaScript, and small", async () => {
    const { CHECKOUT_SCRIPT } = await import("./CheckoutAssets.js")
    expect(() => new Function(CHECKOUT_SCRIPT)).not.toThrow()
    expect(new TextEncoder().encode(CHECKOUT_SCRIPT).length).toBeLessThan(12_000)
  })
})
