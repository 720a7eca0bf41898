/**
 * End to end over loopback against the real standalone server: the merchant
 * routes (SPEC.md 4.1 and 4.5, WIRE.md section 3), with idempotency,
 * validation, listing, and another partner's view of them. What should
 * succeed goes through the typed client (@pay/client), which decodes every
 * answer with the definition's schemas; its raw answer is checked where the
 * exact shape matters. Malformed requests, missing headers and replays
 * compared byte for byte stay on raw HTTP.
 */
import { type MerchantId, Merchants } from "@pay/core"
import { logoCaptureLayer } from "@pay/logos"
import { type LogoServer, plainImage, startLogoServer } from "@pay/logos/testing"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  expectRefusal,
  type Json,
  MERCHANT_ID,
  newKey,
  type PayClient,
  payClient,
  RFC3339,
  STORES,
  startServer,
  uniqueToken,
  unknownId,
  whole
} from "./e2e-support.js"

const MERCHANT_FIELDS = ["createdAt", "email", "iconUrl", "id", "name", "status"].sort()
/** The engine's URL of a frozen logo (the e2e servers' PAY_PUBLIC_URL is http://127.0.0.1). */
const FROZEN_LOGO = /^http:\/\/127\.0\.0\.1\/logos\/[0-9a-f]{64}\.webp$/

type MerchantPage = Awaited<ReturnType<PayClient["merchants"]["list"]>>

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  /** Serves the logos the merchants' iconUrls name (logos.e2e.test.ts covers the rules). */
  let logos: LogoServer
  let otherKey: string
  /** The typed client with the bootstrap partner's key, and with the other partner's. */
  let pay: PayClient
  let other: PayClient
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    logos = await startLogoServer()
    logos.set("/logo.png", await plainImage(600, "png"), "image/png")
    logos.set("/new.png", await plainImage(700, "png", "#cc6633"), "image/png")
    server = await startServer(
      store,
      {},
      { logos: logoCaptureLayer({ allowPrivate: true, ca: logos.ca }) }
    )
    otherKey = (await createPartner(server, "Other")).apiKey
    pay = payClient(server)
    other = payClient(server, otherKey)
  })

  afterAll(async () => {
    await server?.stop()
    await logos?.close()
  })

  /** POST /v1/merchants; `idempotencyKey: null` sends none. */
  const post = (body: unknown, idempotencyKey: string | null = newKey()) =>
    api.request("POST", "/v1/merchants", {
      body,
      ...(idempotencyKey === null ? {} : { idempotencyKey })
    })

  /** GET /v1/merchants over raw HTTP, for queries the client would refuse before sending. */
  const list = (query: Record<string, string | number>) =>
    api.get(
      `/v1/merchants?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`
    )

  /** How many of the partner's merchants match `search`. */
  const countOf = async (search: string, by: PayClient = pay): Promise<number> =>
    (await by.merchants.list({ search })).totalCount

  const setStatus = (id: string, status: "active" | "inactive" | "suspended") =>
    server.runEngine(
      Effect.flatMap(Merchants, (merchants) => merchants.setStatus(id as MerchantId, status))
    )

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  describe("POST /v1/merchants", () => {
    it("201 with the merchant: id, name, email, status active, iconUrl, createdAt", async () => {
      const before = Date.now()
      const { merchant } = whole(
        pay,
        await pay.merchants.create({
          merchantName: "Acme Store",
          merchantEmail: "billing@acme.example",
          iconUrl: `${logos.origin}/logo.png`
        })
      )
      const answer = pay.lastAnswer()
      expect(answer.status, answer.text).toBe(201)
      expect(answer.headers.get("content-type")).toMatch(/^application\/json\b/)
      expect(Object.keys(answer.body)).toEqual(["merchant"])
      expect(Object.keys(answer.body.merchant).sort()).toEqual(MERCHANT_FIELDS)
      expect(merchant.id).toMatch(MERCHANT_ID)
      expect(merchant).toMatchObject({
        name: "Acme Store",
        email: "billing@acme.example",
        status: "active"
      })
      expect(merchant.iconUrl).toMatch(FROZEN_LOGO)
      expect(merchant.createdAt).toMatch(RFC3339)
      const createdAt = Date.parse(merchant.createdAt)
      expect(createdAt).toBeGreaterThanOrEqual(before - 1000)
      expect(createdAt).toBeLessThanOrEqual(Date.now() + 1000)
    })

    it("iconUrl null is allowed, and a missing iconUrl is null", async () => {
      const withNull = await pay.merchants.create({
        merchantName: "No Logo",
        merchantEmail: "a@b.example",
        iconUrl: null
      })
      expect(withNull.merchant.iconUrl).toBeNull()
      const without = await pay.merchants.create({
        merchantName: "No Logo 2",
        merchantEmail: "a@b.example"
      })
      expect(without.merchant.iconUrl).toBeNull()
    })

    it("names of 1 and 256 characters (counted as characters, not UTF-16 units) are accepted", async () => {
      for (const name of ["x", "n".repeat(256), "😀".repeat(256)]) {
        const created = await pay.merchants.create({
          merchantName: name,
          merchantEmail: "a@b.example"
        })
        expect(created.merchant.name).toBe(name)
      }
    })

    it("without Idempotency-Key: 400 missing_idempotency_key", async () => {
      const token = uniqueToken()
      const response = await post(
        { merchantName: `No key ${token}`, merchantEmail: "a@b.example" },
        null
      )
      expectError(response, 400, "missing_idempotency_key", ["Idempotency-Key"])
      expect(await countOf(token)).toBe(0)
    })

    it("an Idempotency-Key of 256 characters: 400; of 255: accepted", async () => {
      const body = { merchantName: "Long key", merchantEmail: "a@b.example" }
      const tooLong = await post(body, "k".repeat(256))
      expectError(tooLong, 400, "params_validation", ["Idempotency-Key"])
      const idempotencyKey = `${newKey()}${"k".repeat(255)}`.slice(0, 255)
      const longest = await pay.merchants.create(body, { idempotencyKey })
      expect(longest.merchant.name).toBe("Long key")
    })

    it("the same key and body: the same status and body, and no second merchant", async () => {
      const token = uniqueToken()
      const key = newKey()
      const body = { merchantName: `Replay ${token}`, merchantEmail: "r@shop.example" }
      const first = await post(body, key)
      const second = await post(body, key)
      expect(first.status).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      const listed = await pay.merchants.list({ search: token })
      expect(listed.totalCount).toBe(1)
      expect(listed.merchants.map((m) => m.id)).toEqual([first.body.merchant.id])
    })

    it("a replay with the JSON keys in another order is the same request", async () => {
      const token = uniqueToken()
      const key = newKey()
      const first = await api.request("POST", "/v1/merchants", {
        idempotencyKey: key,
        rawBody: `{"merchantName":"Order ${token}","merchantEmail":"o@shop.example","iconUrl":null}`,
        headers: { "content-type": "application/json" }
      })
      const second = await api.request("POST", "/v1/merchants", {
        idempotencyKey: key,
        rawBody: `{"iconUrl":null, "merchantEmail":"o@shop.example",  "merchantName":"Order ${token}"}`,
        headers: { "content-type": "application/json" }
      })
      expect(first.status, first.text).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect(await countOf(token)).toBe(1)
    })

    it("the same key with another body: 409 idempotency_conflict, nothing created", async () => {
      const token = uniqueToken()
      const key = newKey()
      await pay.merchants.create(
        { merchantName: `Conflict ${token}`, merchantEmail: "c@x.example" },
        { idempotencyKey: key }
      )
      const refused = await expectRefusal(
        pay,
        pay.merchants.create(
          { merchantName: `Conflict ${token} B`, merchantEmail: "c@x.example" },
          { idempotencyKey: key }
        ),
        409,
        "idempotency_conflict"
      )
      expect(refused.idempotencyKey).toBe(key)
      const listed = await pay.merchants.list({ search: token })
      expect(listed.totalCount).toBe(1)
      expect(listed.merchants[0]!.name).toBe(`Conflict ${token}`)
    })

    it("a key is scoped to the partner: another partner's same key creates its own merchant", async () => {
      const token = uniqueToken()
      const key = newKey()
      const body = { merchantName: `Scoped ${token}`, merchantEmail: "s@x.example" }
      const mine = await pay.merchants.create(body, { idempotencyKey: key })
      const theirs = await other.merchants.create(body, { idempotencyKey: key })
      expect(theirs.merchant.id).not.toBe(mine.merchant.id)
    })

    it("a request refused by validation does not use up its key", async () => {
      const token = uniqueToken()
      const key = newKey()
      const bad = await post({ merchantName: "", merchantEmail: "v@x.example" }, key)
      expectError(bad, 400, "params_validation", ["merchantName"])
      const good = await pay.merchants.create(
        { merchantName: `Retry ${token}`, merchantEmail: "v@x.example" },
        { idempotencyKey: key }
      )
      expect(good.merchant.name).toBe(`Retry ${token}`)
    })

    it("20 concurrent identical requests with one key: all 201 with one id, one merchant", async () => {
      const token = uniqueToken()
      const key = newKey()
      const body = { merchantName: `Burst ${token}`, merchantEmail: "burst@shop.example" }
      const responses = await Promise.all(Array.from({ length: 20 }, () => post(body, key)))
      for (const response of responses) expect(response.status, response.text).toBe(201)
      const ids = new Set(responses.map((r) => r.body.merchant.id))
      expect(ids.size).toBe(1)
      expect(new Set(responses.map((r) => r.text)).size).toBe(1)
      const listed = await pay.merchants.list({ search: token })
      expect(listed.totalCount).toBe(1)
      expect(listed.merchants[0]!.id).toBe([...ids][0])
    })

    it.each([
      ["empty", ""],
      ["blank", "   "],
      ["257 characters", "n".repeat(257)]
    ])("a name that is %s: 400 params_validation naming merchantName", async (_, merchantName) => {
      expectError(
        await post({ merchantName, merchantEmail: "a@b.example" }),
        400,
        "params_validation",
        ["merchantName"]
      )
    })

    it.each([
      ["not an address", "not-an-email"],
      ["no domain", "billing@"],
      ["no top-level domain", "billing@shop"],
      ["empty", ""]
    ])("an e-mail that is %s: 400 naming merchantEmail", async (_, merchantEmail) => {
      expectError(await post({ merchantName: "Shop", merchantEmail }), 400, "params_validation", [
        "merchantEmail"
      ])
    })

    it.each([
      ["http://", "http://cdn.shop.example/logo.png"],
      ["not a URL", "logo.png"],
      ["ftp://", "ftp://cdn.shop.example/logo.png"],
      ["a number", 42]
    ])("an iconUrl that is %s: 400 naming iconUrl, invalid_icon_url", async (_, iconUrl) => {
      const response = await post({ merchantName: "Shop", merchantEmail: "a@b.example", iconUrl })
      expectError(response, 400, "params_validation", ["iconUrl"])
      expect(response.body.issues.map((i: Json) => i.code)).toEqual(["invalid_icon_url"])
    })

    it("missing required fields: 400 naming each", async () => {
      const response = await post({})
      expectError(response, 400, "params_validation", ["merchantName", "merchantEmail"])
    })

    it("an unknown field (a typo): 400 naming it", async () => {
      const response = await post({
        merchantname: "Shop",
        merchantName: "Shop",
        merchantEmail: "a@b.example"
      })
      expectError(response, 400, "params_validation", ["merchantname"])
    })

    it("several invalid fields at once: each one is named", async () => {
      const token = uniqueToken()
      const response = await post({
        merchantName: " ",
        merchantEmail: "bad e-mail",
        iconUrl: "http://cdn.shop.example/logo.png",
        merchantname: `Typo ${token}`
      })
      expectError(response, 400, "params_validation", [
        "merchantName",
        "merchantEmail",
        "iconUrl",
        "merchantname"
      ])
      expect(await countOf(token)).toBe(0)
    })

    it("a wrong type: 400 naming the field", async () => {
      const response = await post({ merchantName: 12, merchantEmail: ["a@b.example"] })
      expectError(response, 400, "params_validation", ["merchantName", "merchantEmail"])
    })
  })

  describe("GET /v1/merchants", () => {
    it("answers {merchants, totalCount, nextCursor}, newest first", async () => {
      const token = uniqueToken()
      const created: Array<string> = []
      for (const n of [1, 2, 3]) {
        created.push((await createMerchant(pay, `Newest ${token} ${n}`)).id)
        await sleep(5)
      }
      const page = whole(pay, await pay.merchants.list({ search: token }))
      const answer = pay.lastAnswer()
      expect(answer.status).toBe(200)
      expect(Object.keys(answer.body).sort()).toEqual(["merchants", "nextCursor", "totalCount"])
      expect(page.merchants.map((m) => m.id)).toEqual([...created].reverse())
      expect(page.totalCount).toBe(3)
      expect(page.nextCursor).toBeNull()
      for (const merchant of answer.body.merchants) {
        expect(Object.keys(merchant).sort()).toEqual(MERCHANT_FIELDS)
      }
    })

    it("limit defaults to 20; totalCount counts every match; the pages visit each merchant once", async () => {
      const token = uniqueToken()
      const created = new Set<string>()
      for (let n = 0; n < 25; n++) created.add((await createMerchant(pay, `Page ${token} ${n}`)).id)

      const first = await pay.merchants.list({ search: token })
      expect(first.merchants).toHaveLength(20)
      expect(first.totalCount).toBe(25)
      expect(first.nextCursor).not.toBeNull()

      const seen: Array<string> = []
      let cursor: string | null = null
      let pages = 0
      do {
        const page: MerchantPage = await pay.merchants.list({
          search: token,
          limit: 7,
          ...(cursor === null ? {} : { cursor })
        })
        expect(page.totalCount).toBe(25)
        seen.push(...page.merchants.map((m) => m.id))
        cursor = page.nextCursor
        pages++
        expect(pages).toBeLessThanOrEqual(4)
      } while (cursor !== null)
      expect(pages).toBe(4)
      expect(seen).toHaveLength(25)
      expect(new Set(seen)).toEqual(created)
      expect([...seen].sort().reverse()).toEqual(seen)
    })

    it("a page that ends exactly at the last merchant has nextCursor null", async () => {
      const token = uniqueToken()
      for (let n = 0; n < 4; n++) await createMerchant(pay, `Exact ${token} ${n}`)
      const first = await pay.merchants.list({ search: token, limit: 2 })
      expect(first.merchants).toHaveLength(2)
      expect(first.nextCursor).not.toBeNull()
      const second = await pay.merchants.list({
        search: token,
        limit: 2,
        cursor: first.nextCursor ?? ""
      })
      expect(second.merchants).toHaveLength(2)
      expect(second.nextCursor).toBeNull()
      const all = await pay.merchants.list({ search: token, limit: 4 })
      expect(all.merchants).toHaveLength(4)
      expect(all.nextCursor).toBeNull()
    })

    it("limit 1 and 100 are accepted", async () => {
      await createMerchant(pay, `Limit ${uniqueToken()}`)
      const one = await pay.merchants.list({ limit: 1 })
      expect(one.merchants).toHaveLength(1)
      const hundred = await pay.merchants.list({ limit: 100 })
      expect(hundred.merchants.length).toBeLessThanOrEqual(100)
    })

    it.each(["0", "101", "abc", "1.5", "-1", ""])(
      "limit=%s: 400 invalid_params naming limit",
      async (limit) => {
        expectError(await list({ limit }), 400, "invalid_params", ["limit"])
      }
    )

    it("a garbage cursor: 400 naming cursor", async () => {
      for (const cursor of ["garbage", "m1.!!!", "m1.bm90LWFuLWlk", ""]) {
        expectError(await list({ cursor }), 400, "invalid_params", ["cursor"])
      }
    })

    it("status filter", async () => {
      const token = uniqueToken()
      const active = await createMerchant(pay, `Status ${token} active`)
      const inactive = await createMerchant(pay, `Status ${token} inactive`)
      const suspended = await createMerchant(pay, `Status ${token} suspended`)
      await setStatus(inactive.id, "inactive")
      await setStatus(suspended.id, "suspended")

      const ids = async (status?: "active" | "inactive" | "suspended") => {
        const page = await pay.merchants.list(
          status === undefined ? { search: token } : { search: token, status }
        )
        return { ids: page.merchants.map((m) => m.id), total: page.totalCount }
      }
      expect(await ids("active")).toEqual({ ids: [active.id], total: 1 })
      expect(await ids("inactive")).toEqual({ ids: [inactive.id], total: 1 })
      expect(await ids("suspended")).toEqual({ ids: [suspended.id], total: 1 })
      expect((await ids()).total).toBe(3)

      const fetched = await pay.merchants.get(inactive.id)
      expect(fetched.merchant.status).toBe("inactive")
      expectError(await list({ status: "deleted" }), 400, "invalid_params", ["status"])
    })

    it("search is case-insensitive on the name, including non-ASCII letters", async () => {
      const token = uniqueToken()
      const cafe = await createMerchant(pay, `Café ${token}`)
      await createMerchant(pay, `Cafe ${token}`)
      const upper = await pay.merchants.list({ search: `CAFÉ ${token.toUpperCase()}` })
      expect(upper.merchants.map((m) => m.id)).toEqual([cafe.id])
      expect(upper.totalCount).toBe(1)
      const lower = await pay.merchants.list({ search: `café ${token}` })
      expect(lower.merchants.map((m) => m.id)).toEqual([cafe.id])
      expect(await countOf(token.slice(2, 9).toUpperCase())).toBe(2)
    })

    it("search matches the id, whatever its case", async () => {
      const merchant = await createMerchant(pay, `By id ${uniqueToken()}`)
      for (const search of [merchant.id, merchant.id.toLowerCase(), merchant.id.toUpperCase()]) {
        const page = await pay.merchants.list({ search })
        expect(page.merchants.map((m) => m.id)).toContain(merchant.id)
      }
      expect(await countOf(merchant.id)).toBe(1)
    })

    it("search treats SQL wildcards literally", async () => {
      const token = uniqueToken()
      await createMerchant(pay, `Wild ${token} abc`)
      expect(await countOf(`Wild ${token} %`)).toBe(0)
      expect(await countOf(`Wild ${token} _bc`)).toBe(0)
    })

    it("search of 256 characters is accepted; of 257 or empty: 400 naming search", async () => {
      expect(await countOf("s".repeat(256))).toBe(0)
      expectError(await list({ search: "s".repeat(257) }), 400, "invalid_params", ["search"])
      expectError(await list({ search: "" }), 400, "invalid_params", ["search"])
    })

    it("deleted merchants are hidden from the list and its count", async () => {
      const token = uniqueToken()
      const kept = await createMerchant(pay, `Hidden ${token} kept`)
      const gone = await createMerchant(pay, `Hidden ${token} gone`)
      expect(await countOf(token)).toBe(2)
      expect(await pay.merchants.delete(gone.id)).toEqual({ id: gone.id, deleted: true })
      const after = await pay.merchants.list({ search: token })
      expect(after.merchants.map((m) => m.id)).toEqual([kept.id])
      expect(after.totalCount).toBe(1)
      expect(await countOf(gone.id)).toBe(0)
    })
  })

  describe("GET /v1/merchants/{id}", () => {
    it("the profile, with settlements {crypto: [], fiat: []}", async () => {
      const created = await createMerchant(pay, `Profile ${uniqueToken()}`)
      const { merchant } = whole(pay, await pay.merchants.get(created.id))
      expect(merchant).toEqual({ ...created, settlements: { crypto: [], fiat: [] } })
    })

    it("a malformed id names nothing: 404 not_found, whatever its shape", async () => {
      for (const id of ["nope", "mrch_", "mrch_abc-def", "pay_0000000000ZZZZZZZZZZ"]) {
        const response = await api.get(`/v1/merchants/${id}`)
        expectError(response, 404, "not_found")
        expect(response.body.message).toBe(`No merchant ${id}`)
      }
    })

    it("an unknown well-formed id: 404 not_found", async () => {
      await expectRefusal(pay, pay.merchants.get(unknownId("mrch")), 404, "not_found")
    })

    it("a deleted merchant: 404 not_found", async () => {
      const created = await createMerchant(pay, `Gone ${uniqueToken()}`)
      await pay.merchants.delete(created.id)
      await expectRefusal(pay, pay.merchants.get(created.id), 404, "not_found")
    })
  })

  describe("PATCH /v1/merchants/{id}", () => {
    const patch = (id: string, body: unknown) =>
      api.request("PATCH", `/v1/merchants/${id}`, { body })

    it("an empty object: 400", async () => {
      const created = await createMerchant(pay, `Patch empty ${uniqueToken()}`)
      expectError(await patch(created.id, {}), 400, "params_validation")
    })

    it("each field alone changes only that field", async () => {
      const created = await createMerchant(pay, `Patch ${uniqueToken()}`)
      const renamed = whole(
        pay,
        await pay.merchants.update(created.id, { merchantName: "Renamed Shop" })
      )
      expect(renamed.merchant).toEqual({ ...created, name: "Renamed Shop" })

      const emailed = await pay.merchants.update(created.id, { merchantEmail: "new@shop.example" })
      expect(emailed.merchant).toEqual({
        ...created,
        name: "Renamed Shop",
        email: "new@shop.example"
      })

      const logo = await pay.merchants.update(created.id, {
        iconUrl: `${logos.origin}/new.png`
      })
      expect(logo.merchant.iconUrl).toMatch(FROZEN_LOGO)
      const expected = {
        ...created,
        name: "Renamed Shop",
        email: "new@shop.example",
        iconUrl: logo.merchant.iconUrl
      }
      expect(logo.merchant).toEqual(expected)

      const fetched = whole(pay, await pay.merchants.get(created.id))
      expect(fetched.merchant).toEqual({ ...expected, settlements: { crypto: [], fiat: [] } })
    })

    it("iconUrl: null removes the logo", async () => {
      const created = await pay.merchants.create({
        merchantName: "Logo Shop",
        merchantEmail: "l@shop.example",
        iconUrl: `${logos.origin}/logo.png`
      })
      const { id } = created.merchant
      expect(created.merchant.iconUrl).toMatch(FROZEN_LOGO)
      const patched = await pay.merchants.update(id, { iconUrl: null })
      expect(patched.merchant.iconUrl).toBeNull()
      expect(patched.merchant.name).toBe("Logo Shop")
      expect((await pay.merchants.get(id)).merchant.iconUrl).toBeNull()
    })

    it("invalid values: 400 naming each field", async () => {
      const created = await createMerchant(pay, `Patch invalid ${uniqueToken()}`)
      expectError(
        await patch(created.id, {
          merchantName: "",
          merchantEmail: "nope",
          iconUrl: "http://cdn.shop.example/x.png"
        }),
        400,
        "params_validation",
        ["merchantName", "merchantEmail", "iconUrl"]
      )
      expectError(await patch(created.id, { merchantName: "\t " }), 400, "params_validation", [
        "merchantName"
      ])
      expectError(await patch(created.id, { merchantName: null }), 400, "params_validation", [
        "merchantName"
      ])
      const unchanged = await pay.merchants.get(created.id)
      expect(unchanged.merchant.name).toBe(created.name)
    })

    it("an unknown field: 400 naming it", async () => {
      const created = await createMerchant(pay, `Patch unknown ${uniqueToken()}`)
      const response = await patch(created.id, { merchantName: "Fine", nickname: "x" })
      expectError(response, 400, "params_validation", ["nickname"])
      expect((await pay.merchants.get(created.id)).merchant.name).toBe(created.name)
    })

    it("status cannot be changed by PATCH: it is an unknown field", async () => {
      const created = await createMerchant(pay, `Patch status ${uniqueToken()}`)
      expectError(await patch(created.id, { status: "inactive" }), 400, "params_validation", [
        "status"
      ])
      expectError(
        await patch(created.id, { merchantName: "Still active", status: "suspended" }),
        400,
        "params_validation",
        ["status"]
      )
      const fetched = await pay.merchants.get(created.id)
      expect(fetched.merchant.status).toBe("active")
      expect(fetched.merchant.name).toBe(created.name)
    })

    it("a deleted merchant: 404", async () => {
      const created = await createMerchant(pay, `Patch deleted ${uniqueToken()}`)
      await pay.merchants.delete(created.id)
      await expectRefusal(
        pay,
        pay.merchants.update(created.id, { merchantName: "Back" }),
        404,
        "not_found"
      )
    })

    it("an unknown merchant and a malformed id: 404 not_found", async () => {
      await expectRefusal(
        pay,
        pay.merchants.update(unknownId("mrch"), { merchantName: "X" }),
        404,
        "not_found"
      )
      // The client answers a malformed path id itself, so it goes over raw HTTP.
      expectError(await patch("nope", { merchantName: "X" }), 404, "not_found")
    })
  })

  describe("DELETE /v1/merchants/{id}", () => {
    it("answers {id, deleted: true}, again the same; then GET is 404 and the list hides it", async () => {
      const token = uniqueToken()
      const created = await createMerchant(pay, `Delete ${token}`)
      expect(await pay.merchants.delete(created.id)).toEqual({ id: created.id, deleted: true })
      const first = pay.lastAnswer()
      expect(first.status, first.text).toBe(200)
      expect(Object.keys(first.body).sort()).toEqual(["deleted", "id"])
      expect(await pay.merchants.delete(created.id)).toEqual({ id: created.id, deleted: true })
      const second = pay.lastAnswer()
      expect(second.status).toBe(200)
      expect(second.body).toEqual(first.body)
      await expectRefusal(pay, pay.merchants.get(created.id), 404, "not_found")
      expect(await countOf(token)).toBe(0)
    })

    it("an unknown merchant: 404", async () => {
      await expectRefusal(pay, pay.merchants.delete(unknownId("mrch")), 404, "not_found")
    })
  })

  describe("another partner's merchants", () => {
    it("GET, PATCH and DELETE with another partner's key: 403 forbidden, and nothing changes", async () => {
      const created = await createMerchant(pay, `Mine ${uniqueToken()}`)
      await expectRefusal(other, other.merchants.get(created.id), 403, "forbidden")
      await expectRefusal(
        other,
        other.merchants.update(created.id, { merchantName: "Stolen" }),
        403,
        "forbidden"
      )
      await expectRefusal(other, other.merchants.delete(created.id), 403, "forbidden")
      const fetched = await pay.merchants.get(created.id)
      expect(fetched.merchant.name).toBe(created.name)
    })

    it("the other partner's list never shows the first partner's merchants", async () => {
      const token = uniqueToken()
      const mine = await createMerchant(pay, `Private ${token}`)
      const theirs = await createMerchant(other, `Theirs ${token}`)

      const theirList = await other.merchants.list({ limit: 100 })
      const theirIds = theirList.merchants.map((m) => m.id)
      expect(theirIds).toContain(theirs.id)
      expect(theirIds).not.toContain(mine.id)
      expect((await other.merchants.list({ search: token })).merchants.map((m) => m.id)).toEqual([
        theirs.id
      ])
      expect(await countOf(mine.id, other)).toBe(0)
      expect((await pay.merchants.list({ search: token })).merchants.map((m) => m.id)).toEqual([
        mine.id
      ])

      // Walking all of the other partner's pages never reaches a merchant of the first.
      let cursor: string | null = null
      const walked: Array<string> = []
      do {
        const page: {
          readonly merchants: ReadonlyArray<Json>
          readonly nextCursor: string | null
        } = await other.merchants.list(cursor === null ? { limit: 100 } : { limit: 100, cursor })
        walked.push(...page.merchants.map((m) => m.id))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(walked).toContain(theirs.id)
      expect(walked).not.toContain(mine.id)
      expect(walked.length).toBe(theirList.totalCount)
    })

    it("a cursor from the first partner's list shows the other partner nothing of the first", async () => {
      const token = uniqueToken()
      for (let n = 0; n < 3; n++) await createMerchant(pay, `Cursor ${token} ${n}`)
      const page = await pay.merchants.list({ search: token, limit: 1 })
      const cursor = page.nextCursor as string
      expect(cursor).toEqual(expect.any(String))
      const theirs = await other.merchants.list({ cursor, limit: 100 })
      for (const merchant of theirs.merchants) expect(merchant.name).not.toContain(token)
    })
  })

  describe("error bodies", () => {
    it("name every issue with a field and a message", async () => {
      const response = await post({ merchantName: "", merchantEmail: "x", extra: 1 })
      expectError(response, 400, "params_validation", ["merchantName", "merchantEmail", "extra"])
      for (const field of ["merchantName", "merchantEmail", "extra"]) {
        expect(
          response.body.issues.find((i: Json) => i.field === field).message.length
        ).toBeGreaterThan(0)
      }
    })
  })
})
