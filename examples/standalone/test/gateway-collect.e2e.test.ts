/**
 * The buyer's data, collected before a payment of 1,000 USD (the sandbox's
 * policy), over HTTP on the real server and its sandbox chain, on SQLite and
 * on PostgreSQL: the `collectData` object of the options, confirms refused
 * without the data or with bad data (nothing moves), the data-collection page
 * a wallet opens in a web view (errors shown beside their fields, then
 * `IC_COMPLETE`) after which a confirm without the data pays, and a confirm
 * that sends valid data itself. The page's URL carries a token bound to the
 * payment and its accounts: without it, or with one for another payment or
 * other accounts, the page and its form answer 403 and nothing is kept. Every
 * HTML answer carries its security headers.
 */
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Client,
  client,
  type E2eServer,
  expectError,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  type Buyer,
  confirm,
  fund,
  gatewayStatus,
  newBuyer,
  onlyOption,
  options,
  paymentFor,
  receivedBalance,
  settledMerchant,
  signAction,
  signed,
  transfersFrom,
  usdcBalance,
  walletClient
} from "./gateway-support.js"

/** 1,000.00 USD in the sandbox's USDC (6 decimals). */
const PRICE = 1_000_000_000n
const FUNDS = 2_500_000_000n

const VALID = {
  fullName: "Ada Lovelace",
  dob: "1990-12-10",
  porCountry: "GB",
  porAddress: "12 St James's Square, London",
  tosConfirmed: "true"
}

/** `collectedData` as wallets send it: every value a string. */
const collected = (values: Record<string, string>) => ({
  collectedData: { fields: Object.entries(values).map(([id, value]) => ({ id, value })) }
})

/** The `<input …>` tag named `name` in the page, or undefined. */
const inputTag = (html: string, name: string): string | undefined =>
  html.match(new RegExp(`<input[^>]*\\sname="${name}"[^>]*>`))?.[0]

const unescapeHtml = (text: string) =>
  text
    .replaceAll("&amp;", "&")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")

describe.each(STORES)("the wallet gateway collects buyer data on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  /** The page's address on this server: the engine writes its public URL, which has no port. */
  const onServer = (url: string) => {
    const parsed = new URL(url)
    expect(parsed.origin).toBe(server.config.publicUrl)
    return `${server.baseUrl}${parsed.pathname}${parsed.search}`
  }

  /** Every HTML answer of the page: its policy as a header, with who may frame it, nosniff, no referrer. */
  const expectHtmlHeaders = (headers: Headers) => {
    expect(headers.get("content-type")).toMatch(/^text\/html\b/)
    expect(headers.get("x-content-type-options")).toBe("nosniff")
    expect(headers.get("referrer-policy")).toBe("no-referrer")
    const csp = headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors *")
    expect(csp).toMatch(/script-src 'sha256-/)
  }

  const page = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, init)
    const html = await response.text()
    expectHtmlHeaders(response.headers)
    return { status: response.status, headers: response.headers, html }
  }

  /** `url` with its query parameter `name` set to `value`, or removed when undefined. */
  const withParam = (url: string, name: string, value: string | undefined) => {
    const changed = new URL(url)
    if (value === undefined) changed.searchParams.delete(name)
    else changed.searchParams.set(name, value)
    return changed.href
  }

  const postForm = (url: string, values: Record<string, string>) =>
    page(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(values).toString()
    })

  /** A funded buyer and a new 1,000.00 USD payment. */
  const ready = async () => {
    const buyer: Buyer = newBuyer()
    await fund(server, buyer, FUNDS)
    const { paymentId } = await paymentFor(partner, merchantId, "100000")
    return { buyer, paymentId }
  }

  const balances = async (buyer: Buyer) => ({
    buyer: await usdcBalance(server, buyer.address),
    received: await receivedBalance(server)
  })

  it("asks below 1,000 USD for nothing", async () => {
    const buyer = newBuyer()
    const { paymentId } = await paymentFor(partner, merchantId, "99999")
    const offered = await options(wallet, paymentId, [buyer.account])
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body.collectData).toBeNull()
    expect(offered.body.options[0].collectData).toBeNull()
  })

  it("offers collectData with the options, refuses a confirm without it or with bad data, then the page collects it and a confirm without it pays", async () => {
    const { buyer, paymentId } = await ready()
    const other = newBuyer()
    const offered = await options(wallet, paymentId, [buyer.account, other.account])
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body.options).toHaveLength(2)

    // The collect-data object: top level for every account, per option for its own.
    const top = offered.body.collectData
    expect(top).not.toBeNull()
    expect(top.schema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      additionalProperties: false,
      required: ["fullName", "dob", "tosConfirmed"]
    })
    expect(top.schema.properties.dob).toMatchObject({ type: "string", format: "date" })
    expect(top.schema.properties.tosConfirmed).toMatchObject({ type: "boolean", const: true })
    expect(top.fields).toEqual(
      expect.arrayContaining([
        { id: "fullName", name: "Full name", required: true, type: "text" },
        { id: "dob", name: "Date of birth", required: true, type: "date" }
      ])
    )
    expect(top.url).toMatch(
      new RegExp(
        `^${server.config.publicUrl}/collect/${paymentId}\\?accounts=${encodeURIComponent(
          `${buyer.account},${other.account}`
        )}&token=[A-Za-z0-9_-]{43}$`
      )
    )
    const [option, otherOption] = offered.body.options
    expect(option.account).toBe(buyer.account)
    expect(option.amount.value).toBe(PRICE.toString())
    expect(option.collectData).toEqual({
      fields: top.fields,
      schema: top.schema,
      url: expect.stringMatching(
        new RegExp(
          `^${server.config.publicUrl}/collect/${paymentId}\\?accounts=${encodeURIComponent(buyer.account)}&token=[A-Za-z0-9_-]{43}$`
        )
      )
    })
    // The same link on every options call: the token is derived, not stored.
    const again = await options(wallet, paymentId, [buyer.account, other.account])
    expect(again.body.collectData.url).toBe(top.url)
    expect(otherOption.collectData.url).toContain(encodeURIComponent(other.account))

    const signature = await signAction(buyer.key, option.actions[0])
    const before = await balances(buyer)

    // Without the data: 400 naming collectedData, pointing to the page.
    const without = await confirm(wallet, paymentId, signed(option.id, signature))
    expectError(without, 400, "params_validation", ["collectedData"])
    expect(without.body.message).toContain(option.collectData.url)
    expect(
      (await confirm(wallet, paymentId, signed(option.id, signature, { collectedData: null })))
        .status
    ).toBe(400)

    // Bad data: each problem named under collectedData.
    const { tosConfirmed: _, ...noTos } = VALID
    const bad = await confirm(
      wallet,
      paymentId,
      signed(option.id, signature, collected({ ...noTos, dob: "1990-13-45" }))
    )
    expectError(bad, 400, "params_validation", ["collectedData.dob", "collectedData.tosConfirmed"])
    expect(bad.body.issues.map((i: { field: string }) => i.field).sort()).toEqual([
      "collectedData.dob",
      "collectedData.tosConfirmed"
    ])
    const unknown = await confirm(
      wallet,
      paymentId,
      signed(option.id, signature, collected({ ...VALID, tosConfirmed: "yes", nickname: "Ada" }))
    )
    expectError(unknown, 400, "params_validation", ["collectedData.tosConfirmed"])
    expect(unknown.body.issues.map((i: { field: string }) => i.field)).toContain(
      "collectedData.fields.5.id"
    )

    expect((await gatewayStatus(wallet, paymentId)).body.status).toBe("requires_action")
    expect(await balances(buyer)).toEqual(before)
    expect(await transfersFrom(server, buyer.address)).toHaveLength(0)

    // The page, as the wallet's web view opens it.
    const url = onServer(option.collectData.url)
    const form = await page(url)
    expect(form.status, form.html).toBe(200)
    expect(form.html).toContain('data-state="form"')
    expect(inputTag(form.html, "fullName")).toMatch(/type="text"/)
    expect(inputTag(form.html, "fullName")).toMatch(/\srequired\b/)
    expect(inputTag(form.html, "dob")).toMatch(/type="date"/)
    expect(inputTag(form.html, "tosConfirmed")).toMatch(/type="checkbox"/)
    expect(inputTag(form.html, "tosConfirmed")).toMatch(/value="true"/)
    for (const name of ["pobCountry", "pobAddress", "porCountry", "porAddress"]) {
      expect(inputTag(form.html, name), name).toBeDefined()
    }
    expect(form.html).not.toContain('aria-invalid="true"')
    // The form posts back to the page itself (a relative URL: it holds under any prefix).
    const action = unescapeHtml(form.html.match(/<form[^>]*\saction="([^"]*)"/)?.[1] ?? "")
    expect(action).not.toMatch(/^\/|^https?:/)
    expect(new URL(action, url).href).toBe(url)

    // Posted with mistakes (a month 13, a lower-case country, the box unticked): the page again,
    // each error beside its field, what was typed kept.
    const mistaken = await postForm(url, {
      fullName: "Ada Lovelace",
      dob: "1990-13-45",
      porCountry: "gb",
      porAddress: "London"
    })
    expect(mistaken.status, mistaken.html).toBe(200)
    expect(mistaken.headers.get("content-type")).toMatch(/^text\/html\b/)
    expect(mistaken.html).toContain('data-state="form"')
    for (const name of ["dob", "porCountry", "tosConfirmed"]) {
      const tag = inputTag(mistaken.html, name)
      expect(tag, name).toMatch(/aria-invalid="true"/)
      expect(tag, name).toMatch(new RegExp(`aria-describedby="[^"]*f-${name}-error`))
      expect(mistaken.html, name).toMatch(new RegExp(`<p class="error" id="f-${name}-error">`))
    }
    expect(inputTag(mistaken.html, "fullName")).not.toMatch(/aria-invalid/)
    expect(inputTag(mistaken.html, "fullName")).toMatch(/value="Ada Lovelace"/)
    expect(mistaken.html).toContain("There are 3 problems to fix")
    expect(mistaken.html).not.toContain('data-state="done"')
    // Nothing was kept: a confirm without the data is still refused.
    expectError(
      await confirm(wallet, paymentId, signed(option.id, signature)),
      400,
      "params_validation",
      ["collectedData"]
    )

    // Without the URL's token, or with a token made for anything else, neither the page nor its
    // form works: 403, a page that says so, and nothing kept.
    const otherToken = new URL(otherOption.collectData.url).searchParams.get("token") ?? ""
    const token = new URL(url).searchParams.get("token") ?? ""
    const flipped = `${token.slice(0, 5)}${token[5] === "A" ? "B" : "A"}${token.slice(6)}`
    const otherPayment = (await ready()).paymentId
    const forged = [
      withParam(url, "token", undefined),
      withParam(url, "token", ""),
      withParam(url, "token", flipped),
      withParam(url, "token", otherToken),
      // The token of this URL with other accounts, or on another payment.
      withParam(url, "accounts", other.account),
      withParam(url, "accounts", `${buyer.account},${other.account}`),
      url.replace(paymentId, otherPayment)
    ]
    for (const target of forged) {
      const opened = await page(target)
      expect(opened.status, target).toBe(403)
      expect(opened.html).toContain('data-state="problem"')
      expect(opened.html).not.toContain("<form")
      const posted = await postForm(target, VALID)
      expect(posted.status, target).toBe(403)
      expect(posted.html).not.toContain('data-state="done"')
    }
    // A client asking for JSON gets the documented error body.
    const asJson = await fetch(withParam(url, "token", flipped), {
      headers: { accept: "application/json" }
    })
    expect(asJson.status).toBe(403)
    expect(await asJson.json()).toMatchObject({ code: "collect_token_invalid" })
    // Nothing was kept for either account.
    expectError(
      await confirm(wallet, paymentId, signed(option.id, signature)),
      400,
      "params_validation",
      ["collectedData"]
    )

    // Posted right: the done page, which tells the wallet IC_COMPLETE.
    const done = await postForm(url, VALID)
    expect(done.status, done.html).toBe(200)
    expect(done.html).toContain('data-state="done"')
    expect(done.html).toContain("IC_COMPLETE")
    expect(done.html).not.toContain("<form")
    expect(done.html).not.toContain('aria-invalid="true"')

    // What the buyer entered is not replaced by a post without its account's token.
    for (const target of forged) {
      expect((await postForm(target, { ...VALID, fullName: "Mallory" })).status, target).toBe(403)
    }

    // The data was kept for the page's account only: the other account's option still needs it.
    const otherSignature = await signAction(other.key, otherOption.actions[0])
    expectError(
      await confirm(wallet, paymentId, signed(otherOption.id, otherSignature)),
      400,
      "params_validation",
      ["collectedData"]
    )

    // The wallet confirms without collectedData: it pays.
    const paid = await confirm(wallet, paymentId, signed(option.id, signature))
    expect(paid.status, paid.text).toBe(200)
    expect(paid.body).toMatchObject({ status: "succeeded", isFinal: true })
    expect(paid.body.info.optionAmount.value).toBe(PRICE.toString())
    expect(await balances(buyer)).toEqual({
      buyer: before.buyer - PRICE,
      received: before.received + PRICE
    })
    expect(await transfersFrom(server, buyer.address)).toHaveLength(1)

    // The page of a paid payment takes nothing more, and asks for nothing.
    const after = await page(url)
    expect(after.status).toBe(409)
    expect(after.headers.get("content-type")).toMatch(/^text\/html\b/)
    expect(after.html).toContain('data-state="problem"')
    expect(after.html).not.toContain("<input")
    const late = await postForm(url, VALID)
    expect(late.status).toBe(409)
    expect(late.html).not.toContain('data-state="done"')
  })

  it('pays when the confirm sends valid collectedData itself (string values, tosConfirmed "true")', async () => {
    const { buyer, paymentId } = await ready()
    const option = await onlyOption(wallet, paymentId, buyer)
    expect(option.collectData).not.toBeNull()
    const before = await balances(buyer)
    const signature = await signAction(buyer.key, option.actions[0])
    const paid = await confirm(wallet, paymentId, signed(option.id, signature, collected(VALID)))
    expect(paid.status, paid.text).toBe(200)
    expect(paid.body).toMatchObject({ status: "succeeded", isFinal: true })
    expect(await balances(buyer)).toEqual({
      buyer: before.buyer - PRICE,
      received: before.received + PRICE
    })
    expect(await transfersFrom(server, buyer.address)).toHaveLength(1)
  })

  it("a page's link holds on another instance of the database and across restarts, and during a rotation of PAY_SECRET", async () => {
    const { buyer, paymentId } = await ready()
    const kept = onServer((await onlyOption(wallet, paymentId, buyer)).collectData.url)
    const on = (instance: E2eServer, url: string) =>
      `${instance.baseUrl}${new URL(url).pathname}${new URL(url).search}`
    // Another instance on the same database (or this one restarted): the kept secret, the same token.
    const twin = await startServer(store, { database: server.config.database })
    try {
      expect((await page(on(twin, kept))).status).toBe(200)
    } finally {
      await twin.stop()
    }
    // PAY_SECRET set: the kept secret still verifies; new links are made under PAY_SECRET.
    const A = btoa("a".repeat(32))
    const B = btoa("b".repeat(32))
    const withA = await startServer(store, {
      database: server.config.database,
      secret: Option.some(A)
    })
    let underA: string
    try {
      expect((await page(on(withA, kept))).status).toBe(200)
      const walletA = (await walletClient(withA)).api
      underA = (await onlyOption(walletA, paymentId, buyer)).collectData.url
      expect(new URL(underA).searchParams.get("token")).not.toBe(
        new URL(kept).searchParams.get("token")
      )
      expect((await page(on(withA, underA))).status).toBe(200)
    } finally {
      await withA.stop()
    }
    // A server that knows only the kept secret refuses a link made under A…
    expect((await page(on(server, underA))).status).toBe(403)
    // …and the rotation to B with A as previous keeps A's links working, until A is dropped.
    const withB = await startServer(store, {
      database: server.config.database,
      secret: Option.some(B),
      previousSecrets: [A]
    })
    try {
      expect((await page(on(withB, underA))).status).toBe(200)
    } finally {
      await withB.stop()
    }
    const onlyB = await startServer(store, {
      database: server.config.database,
      secret: Option.some(B)
    })
    try {
      expect((await page(on(onlyB, underA))).status).toBe(403)
    } finally {
      await onlyB.stop()
    }
  }, 120_000)

  it("the page of no payment, or without accounts, says so; without a token it says nothing of the payment", async () => {
    const { paymentId } = await ready()
    const account = encodeURIComponent(newBuyer().account)
    const malformed = await page(`${server.baseUrl}/collect/nope?accounts=${account}`)
    expect(malformed.status).toBe(404)
    expect(malformed.html).not.toContain("<form")
    expect(malformed.html).toContain("No such payment.")
    // No payment of that id, and no token: 403, the same answer as for a payment that exists.
    const none = await page(
      `${server.baseUrl}/collect/pay_0000000000ZZZZZZZZZZ?accounts=${account}`
    )
    expect(none.status).toBe(403)
    expect(none.html).not.toContain("<form")
    expect(none.html).not.toContain("<input")
    expect(none.html).not.toContain("No such payment.")
    expect((await page(`${server.baseUrl}/collect/${paymentId}?accounts=${account}`)).status).toBe(
      403
    )
    const noAccounts = await page(`${server.baseUrl}/collect/${paymentId}`)
    expect(noAccounts.status).toBe(400)
    expect(noAccounts.html).not.toContain("<form")
    const badAccount = await postForm(`${server.baseUrl}/collect/${paymentId}?accounts=nope`, VALID)
    expect(badAccount.status).toBe(400)
  })
})
