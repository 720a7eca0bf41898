/**
 * The buyer's data, collected before a payment of 1,000 USD (the sandbox's
 * policy), over HTTP on the real server and its sandbox chain, on SQLite and
 * on PostgreSQL: the `collectData` object of the options, confirms refused
 * without the data or with bad data (nothing moves), the data-collection page
 * a wallet opens in a web view (errors shown beside their fields, then
 * `IC_COMPLETE`) after which a confirm without the data pays, and a confirm
 * that sends valid data itself.
 */
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

  const page = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, init)
    return { status: response.status, headers: response.headers, html: await response.text() }
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
    expect(top.url).toBe(
      `${server.config.publicUrl}/collect/${paymentId}?accounts=${encodeURIComponent(
        `${buyer.account},${other.account}`
      )}`
    )
    const [option, otherOption] = offered.body.options
    expect(option.account).toBe(buyer.account)
    expect(option.amount.value).toBe(PRICE.toString())
    expect(option.collectData).toEqual({
      fields: top.fields,
      schema: top.schema,
      url: `${server.config.publicUrl}/collect/${paymentId}?accounts=${encodeURIComponent(buyer.account)}`
    })
    expect(otherOption.collectData.url).toContain(encodeURIComponent(other.account))

    const signature = await signAction(buyer.key, option.actions[0])
    const before = await balances(buyer)

    // Without the data: 400 naming collectedData, pointing to the page.
    const without = await confirm(wallet, paymentId, signed(option.id, signature))
    expectError(without, 400, "params_validation", ["collectedData"])
    expect(without.body.message).toContain(`/collect/${paymentId}`)
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
    expect(form.headers.get("content-type")).toMatch(/^text\/html\b/)
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

    // Posted right: the done page, which tells the wallet IC_COMPLETE.
    const done = await postForm(url, VALID)
    expect(done.status, done.html).toBe(200)
    expect(done.html).toContain('data-state="done"')
    expect(done.html).toContain("IC_COMPLETE")
    expect(done.html).not.toContain("<form")
    expect(done.html).not.toContain('aria-invalid="true"')

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

  it("the page of no payment, or without accounts, says so", async () => {
    const { paymentId } = await ready()
    const account = encodeURIComponent(newBuyer().account)
    const none = await page(
      `${server.baseUrl}/collect/pay_0000000000ZZZZZZZZZZ?accounts=${account}`
    )
    expect(none.status).toBe(404)
    expect(none.headers.get("content-type")).toMatch(/^text\/html\b/)
    expect(none.html).not.toContain("<form")
    expect(none.html).not.toContain("<input")
    expect(none.html).toContain("No such payment.")
    const noAccounts = await page(`${server.baseUrl}/collect/${paymentId}`)
    expect(noAccounts.status).toBe(400)
    expect(noAccounts.html).not.toContain("<form")
    const badAccount = await postForm(`${server.baseUrl}/collect/${paymentId}?accounts=nope`, VALID)
    expect(badAccount.status).toBe(400)
  })
})
