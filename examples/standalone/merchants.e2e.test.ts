/**
 * End to end over loopback against the real standalone server: the merchant
 * routes (SPEC.md 4.1 and 4.5, WIRE.md section 3), with idempotency,
 * validation, listing, and another partner's view of them.
 */
import { type MerchantId, Merchants } from "@pay/core"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createMerchant as createMerchantEndpoint,
  deleteMerchant as deleteMerchantEndpoint,
  getMerchant as getMerchantEndpoint,
  listMerchants as listMerchantsEndpoint,
  updateMerchant as updateMerchantEndpoint
} from "../../packages/core/src/merchants/Api.js"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  type Json,
  MERCHANT_ID,
  newKey,
  RFC3339,
  STORES,
  startServer,
  uniqueToken,
  unknownId
} from "./e2e-support.js"

const decodeCreated = Schema.decodeUnknownSync(createMerchantEndpoint.successSchema)
const decodeList = Schema.decodeUnknownSync(listMerchantsEndpoint.successSchema)
const decodeProfile = Schema.decodeUnknownSync(getMerchantEndpoint.successSchema)
const decodeUpdated = Schema.decodeUnknownSync(updateMerchantEndpoint.successSchema)
const decodeDeleted = Schema.decodeUnknownSync(deleteMerchantEndpoint.successSchema)

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let otherKey: string
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
    otherKey = (await createPartner(server, "Other")).apiKey
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** POST /v1/merchants; `idempotencyKey: null` sends none. */
  const post = (body: unknown, idempotencyKey: string | null = newKey()) =>
    api.request("POST", "/v1/merchants", {
      body,
      ...(idempotencyKey === null ? {} : { idempotencyKey })
    })

  const list = (query: Record<string, string | number>, key?: string) =>
    api.get(
      `/v1/merchants?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`,
      key === undefined ? {} : { key }
    )

  const setStatus = (id: string, status: "active" | "inactive" | "suspended") =>
    server.runEngine(
      Effect.flatMap(Merchants, (merchants) => merchants.setStatus(id as MerchantId, status))
    )

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  describe("POST /v1/merchants", () => {
    it("201 with the merchant: id, name, email, status active, iconUrl, createdAt", async () => {
      const before = Date.now()
      const response = await post({
        merchantName: "Acme Store",
        merchantEmail: "billing@acme.example",
        iconUrl: "https://cdn.acme.example/logo.png"
      })
      expect(response.status, response.text).toBe(201)
      expect(response.headers.get("content-type")).toMatch(/^application\/json\b/)
      const { merchant } = decodeCreated(response.body)
      expect(Object.keys(response.body)).toEqual(["merchant"])
      expect(Object.keys(response.body.merchant).sort()).toEqual(
        ["createdAt", "email", "iconUrl", "id", "name", "status"].sort()
      )
      expect(merchant.id).toMatch(MERCHANT_ID)
      expect(merchant).toMatchObject({
        name: "Acme Store",
        email: "billing@acme.example",
        status: "active",
        iconUrl: "https://cdn.acme.example/logo.png"
      })
      expect(merchant.createdAt).toMatch(RFC3339)
      const createdAt = Date.parse(merchant.createdAt)
      expect(createdAt).toBeGreaterThanOrEqual(before - 1000)
      expect(createdAt).toBeLessThanOrEqual(Date.now() + 1000)
    })

    it("iconUrl null is allowed, and a missing iconUrl is null", async () => {
      const withNull = await post({
        merchantName: "No Logo",
        merchantEmail: "a@b.example",
        iconUrl: null
      })
      expect(withNull.status, withNull.text).toBe(201)
      expect(withNull.body.merchant.iconUrl).toBeNull()
      const without = await post({ merchantName: "No Logo 2", merchantEmail: "a@b.example" })
      expect(without.status, without.text).toBe(201)
      expect(without.body.merchant.iconUrl).toBeNull()
    })

    it("names of 1 and 256 characters (counted as characters, not UTF-16 units) are accepted", async () => {
      for (const name of ["x", "n".repeat(256), "😀".repeat(256)]) {
        const response = await post({ merchantName: name, merchantEmail: "a@b.example" })
        expect(response.status, response.text).toBe(201)
        expect(response.body.merchant.name).toBe(name)
      }
    })

    it("without Idempotency-Key: 400 missing_idempotency_key", async () => {
      const token = uniqueToken()
      const response = await post(
        { merchantName: `No key ${token}`, merchantEmail: "a@b.example" },
        null
      )
      expectError(response, 400, "missing_idempotency_key", ["Idempotency-Key"])
      expect((await list({ search: token })).body.totalCount).toBe(0)
    })

    it("an Idempotency-Key of 256 characters: 400; of 255: accepted", async () => {
      const body = { merchantName: "Long key", merchantEmail: "a@b.example" }
      const tooLong = await post(body, "k".repeat(256))
      expectError(tooLong, 400, "params_validation", ["Idempotency-Key"])
      const longest = await post(body, `${newKey()}${"k".repeat(255)}`.slice(0, 255))
      expect(longest.status, longest.text).toBe(201)
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
      const listed = await list({ search: token })
      expect(listed.body.totalCount).toBe(1)
      expect(listed.body.merchants.map((m: Json) => m.id)).toEqual([first.body.merchant.id])
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
      expect((await list({ search: token })).body.totalCount).toBe(1)
    })

    it("the same key with another body: 409 idempotency_conflict, nothing created", async () => {
      const token = uniqueToken()
      const key = newKey()
      const first = await post(
        { merchantName: `Conflict ${token}`, merchantEmail: "c@x.example" },
        key
      )
      expect(first.status).toBe(201)
      const second = await post(
        { merchantName: `Conflict ${token} B`, merchantEmail: "c@x.example" },
        key
      )
      expectError(second, 409, "idempotency_conflict")
      const listed = await list({ search: token })
      expect(listed.body.totalCount).toBe(1)
      expect(listed.body.merchants[0].name).toBe(`Conflict ${token}`)
    })

    it("a key is scoped to the partner: another partner's same key creates its own merchant", async () => {
      const token = uniqueToken()
      const key = newKey()
      const body = { merchantName: `Scoped ${token}`, merchantEmail: "s@x.example" }
      const mine = await post(body, key)
      const theirs = await api.request("POST", "/v1/merchants", {
        key: otherKey,
        idempotencyKey: key,
        body
      })
      expect(mine.status).toBe(201)
      expect(theirs.status, theirs.text).toBe(201)
      expect(theirs.body.merchant.id).not.toBe(mine.body.merchant.id)
    })

    it("a request refused by validation does not use up its key", async () => {
      const token = uniqueToken()
      const key = newKey()
      const bad = await post({ merchantName: "", merchantEmail: "v@x.example" }, key)
      expectError(bad, 400, "params_validation", ["merchantName"])
      const good = await post({ merchantName: `Retry ${token}`, merchantEmail: "v@x.example" }, key)
      expect(good.status, good.text).toBe(201)
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
      const listed = await list({ search: token })
      expect(listed.body.totalCount).toBe(1)
      expect(listed.body.merchants[0].id).toBe([...ids][0])
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
    ])("an iconUrl that is %s: 400 naming iconUrl", async (_, iconUrl) => {
      expectError(
        await post({ merchantName: "Shop", merchantEmail: "a@b.example", iconUrl }),
        400,
        "params_validation",
        ["iconUrl"]
      )
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
      expect((await list({ search: token })).body.totalCount).toBe(0)
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
        created.push((await createMerchant(api, `Newest ${token} ${n}`)).id)
        await sleep(5)
      }
      const response = await list({ search: token })
      expect(response.status).toBe(200)
      const page = decodeList(response.body)
      expect(Object.keys(response.body).sort()).toEqual(["merchants", "nextCursor", "totalCount"])
      expect(page.merchants.map((m) => m.id)).toEqual([...created].reverse())
      expect(page.totalCount).toBe(3)
      expect(page.nextCursor).toBeNull()
      for (const merchant of response.body.merchants) {
        expect(Object.keys(merchant).sort()).toEqual(
          ["createdAt", "email", "iconUrl", "id", "name", "status"].sort()
        )
      }
    })

    it("limit defaults to 20; totalCount counts every match; the pages visit each merchant once", async () => {
      const token = uniqueToken()
      const created = new Set<string>()
      for (let n = 0; n < 25; n++) created.add((await createMerchant(api, `Page ${token} ${n}`)).id)

      const first = decodeList((await list({ search: token })).body)
      expect(first.merchants).toHaveLength(20)
      expect(first.totalCount).toBe(25)
      expect(first.nextCursor).not.toBeNull()

      const seen: Array<string> = []
      let cursor: string | null = null
      let pages = 0
      do {
        const query: Record<string, string | number> = { search: token, limit: 7 }
        if (cursor !== null) query.cursor = cursor
        const response = await list(query)
        expect(response.status, response.text).toBe(200)
        const page = decodeList(response.body)
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
      for (let n = 0; n < 4; n++) await createMerchant(api, `Exact ${token} ${n}`)
      const first = decodeList((await list({ search: token, limit: 2 })).body)
      expect(first.merchants).toHaveLength(2)
      expect(first.nextCursor).not.toBeNull()
      const second = decodeList(
        (await list({ search: token, limit: 2, cursor: first.nextCursor ?? "" })).body
      )
      expect(second.merchants).toHaveLength(2)
      expect(second.nextCursor).toBeNull()
      const all = decodeList((await list({ search: token, limit: 4 })).body)
      expect(all.merchants).toHaveLength(4)
      expect(all.nextCursor).toBeNull()
    })

    it("limit 1 and 100 are accepted", async () => {
      await createMerchant(api, `Limit ${uniqueToken()}`)
      const one = await list({ limit: 1 })
      expect(one.status).toBe(200)
      expect(one.body.merchants).toHaveLength(1)
      expect((await list({ limit: 100 })).status).toBe(200)
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
      const active = await createMerchant(api, `Status ${token} active`)
      const inactive = await createMerchant(api, `Status ${token} inactive`)
      const suspended = await createMerchant(api, `Status ${token} suspended`)
      await setStatus(inactive.id, "inactive")
      await setStatus(suspended.id, "suspended")

      const ids = async (status?: string) => {
        const response = await list(
          status === undefined ? { search: token } : { search: token, status }
        )
        expect(response.status, response.text).toBe(200)
        return {
          ids: response.body.merchants.map((m: Json) => m.id),
          total: response.body.totalCount
        }
      }
      expect(await ids("active")).toEqual({ ids: [active.id], total: 1 })
      expect(await ids("inactive")).toEqual({ ids: [inactive.id], total: 1 })
      expect(await ids("suspended")).toEqual({ ids: [suspended.id], total: 1 })
      expect((await ids()).total).toBe(3)

      const fetched = await api.get(`/v1/merchants/${inactive.id}`)
      expect(fetched.body.merchant.status).toBe("inactive")
      expectError(await list({ status: "deleted" }), 400, "invalid_params", ["status"])
    })

    it("search is case-insensitive on the name, including non-ASCII letters", async () => {
      const token = uniqueToken()
      const cafe = await createMerchant(api, `Café ${token}`)
      await createMerchant(api, `Cafe ${token}`)
      const upper = await list({ search: `CAFÉ ${token.toUpperCase()}` })
      expect(upper.status).toBe(200)
      expect(upper.body.merchants.map((m: Json) => m.id)).toEqual([cafe.id])
      expect(upper.body.totalCount).toBe(1)
      const lower = await list({ search: `café ${token}` })
      expect(lower.body.merchants.map((m: Json) => m.id)).toEqual([cafe.id])
      const substring = await list({ search: token.slice(2, 9).toUpperCase() })
      expect(substring.body.totalCount).toBe(2)
    })

    it("search matches the id, whatever its case", async () => {
      const merchant = await createMerchant(api, `By id ${uniqueToken()}`)
      for (const search of [merchant.id, merchant.id.toLowerCase(), merchant.id.toUpperCase()]) {
        const response = await list({ search })
        expect(response.body.merchants.map((m: Json) => m.id)).toContain(merchant.id)
      }
      const exact = await list({ search: merchant.id })
      expect(exact.body.totalCount).toBe(1)
    })

    it("search treats SQL wildcards literally", async () => {
      const token = uniqueToken()
      await createMerchant(api, `Wild ${token} abc`)
      const response = await list({ search: `Wild ${token} %` })
      expect(response.status).toBe(200)
      expect(response.body.totalCount).toBe(0)
      const underscore = await list({ search: `Wild ${token} _bc` })
      expect(underscore.body.totalCount).toBe(0)
    })

    it("search of 256 characters is accepted; of 257 or empty: 400 naming search", async () => {
      const ok = await list({ search: "s".repeat(256) })
      expect(ok.status).toBe(200)
      expect(ok.body.totalCount).toBe(0)
      expectError(await list({ search: "s".repeat(257) }), 400, "invalid_params", ["search"])
      expectError(await list({ search: "" }), 400, "invalid_params", ["search"])
    })

    it("deleted merchants are hidden from the list and its count", async () => {
      const token = uniqueToken()
      const kept = await createMerchant(api, `Hidden ${token} kept`)
      const gone = await createMerchant(api, `Hidden ${token} gone`)
      expect((await list({ search: token })).body.totalCount).toBe(2)
      expect((await api.request("DELETE", `/v1/merchants/${gone.id}`)).status).toBe(200)
      const after = await list({ search: token })
      expect(after.body.merchants.map((m: Json) => m.id)).toEqual([kept.id])
      expect(after.body.totalCount).toBe(1)
      expect((await list({ search: gone.id })).body.totalCount).toBe(0)
    })
  })

  describe("GET /v1/merchants/{id}", () => {
    it("the profile, with settlements {crypto: [], fiat: []}", async () => {
      const created = await createMerchant(api, `Profile ${uniqueToken()}`)
      const response = await api.get(`/v1/merchants/${created.id}`)
      expect(response.status, response.text).toBe(200)
      const { merchant } = decodeProfile(response.body)
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
      expectError(await api.get(`/v1/merchants/${unknownId("mrch")}`), 404, "not_found")
    })

    it("a deleted merchant: 404 not_found", async () => {
      const created = await createMerchant(api, `Gone ${uniqueToken()}`)
      await api.request("DELETE", `/v1/merchants/${created.id}`)
      expectError(await api.get(`/v1/merchants/${created.id}`), 404, "not_found")
    })
  })

  describe("PATCH /v1/merchants/{id}", () => {
    const patch = (id: string, body: unknown) =>
      api.request("PATCH", `/v1/merchants/${id}`, { body })

    it("an empty object: 400", async () => {
      const created = await createMerchant(api, `Patch empty ${uniqueToken()}`)
      expectError(await patch(created.id, {}), 400, "params_validation")
    })

    it("each field alone changes only that field", async () => {
      const created = await createMerchant(api, `Patch ${uniqueToken()}`)
      const renamed = await patch(created.id, { merchantName: "Renamed Shop" })
      expect(renamed.status, renamed.text).toBe(200)
      expect(decodeUpdated(renamed.body).merchant).toEqual({ ...created, name: "Renamed Shop" })

      const emailed = await patch(created.id, { merchantEmail: "new@shop.example" })
      expect(emailed.status, emailed.text).toBe(200)
      expect(decodeUpdated(emailed.body).merchant).toEqual({
        ...created,
        name: "Renamed Shop",
        email: "new@shop.example"
      })

      const logo = await patch(created.id, { iconUrl: "https://cdn.shop.example/new.png" })
      expect(logo.status, logo.text).toBe(200)
      const expected = {
        ...created,
        name: "Renamed Shop",
        email: "new@shop.example",
        iconUrl: "https://cdn.shop.example/new.png"
      }
      expect(decodeUpdated(logo.body).merchant).toEqual(expected)

      const fetched = await api.get(`/v1/merchants/${created.id}`)
      expect(fetched.body.merchant).toEqual({ ...expected, settlements: { crypto: [], fiat: [] } })
    })

    it("iconUrl: null removes the logo", async () => {
      const response = await post({
        merchantName: "Logo Shop",
        merchantEmail: "l@shop.example",
        iconUrl: "https://cdn.shop.example/logo.png"
      })
      const { id } = response.body.merchant
      const patched = await patch(id, { iconUrl: null })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.body.merchant.iconUrl).toBeNull()
      expect(patched.body.merchant.name).toBe("Logo Shop")
      expect((await api.get(`/v1/merchants/${id}`)).body.merchant.iconUrl).toBeNull()
    })

    it("invalid values: 400 naming each field", async () => {
      const created = await createMerchant(api, `Patch invalid ${uniqueToken()}`)
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
      const unchanged = await api.get(`/v1/merchants/${created.id}`)
      expect(unchanged.body.merchant.name).toBe(created.name)
    })

    it("an unknown field: 400 naming it", async () => {
      const created = await createMerchant(api, `Patch unknown ${uniqueToken()}`)
      const response = await patch(created.id, { merchantName: "Fine", nickname: "x" })
      expectError(response, 400, "params_validation", ["nickname"])
      expect((await api.get(`/v1/merchants/${created.id}`)).body.merchant.name).toBe(created.name)
    })

    it("status cannot be changed by PATCH: it is an unknown field", async () => {
      const created = await createMerchant(api, `Patch status ${uniqueToken()}`)
      expectError(await patch(created.id, { status: "inactive" }), 400, "params_validation", [
        "status"
      ])
      expectError(
        await patch(created.id, { merchantName: "Still active", status: "suspended" }),
        400,
        "params_validation",
        ["status"]
      )
      const fetched = await api.get(`/v1/merchants/${created.id}`)
      expect(fetched.body.merchant.status).toBe("active")
      expect(fetched.body.merchant.name).toBe(created.name)
    })

    it("a deleted merchant: 404", async () => {
      const created = await createMerchant(api, `Patch deleted ${uniqueToken()}`)
      await api.request("DELETE", `/v1/merchants/${created.id}`)
      expectError(await patch(created.id, { merchantName: "Back" }), 404, "not_found")
    })

    it("an unknown merchant and a malformed id: 404 not_found", async () => {
      expectError(await patch(unknownId("mrch"), { merchantName: "X" }), 404, "not_found")
      expectError(await patch("nope", { merchantName: "X" }), 404, "not_found")
    })
  })

  describe("DELETE /v1/merchants/{id}", () => {
    it("answers {id, deleted: true}, again the same; then GET is 404 and the list hides it", async () => {
      const token = uniqueToken()
      const created = await createMerchant(api, `Delete ${token}`)
      const first = await api.request("DELETE", `/v1/merchants/${created.id}`)
      expect(first.status, first.text).toBe(200)
      expect(decodeDeleted(first.body)).toEqual({ id: created.id, deleted: true })
      expect(Object.keys(first.body).sort()).toEqual(["deleted", "id"])
      const second = await api.request("DELETE", `/v1/merchants/${created.id}`)
      expect(second.status).toBe(200)
      expect(second.body).toEqual(first.body)
      expectError(await api.get(`/v1/merchants/${created.id}`), 404, "not_found")
      expect((await list({ search: token })).body.totalCount).toBe(0)
    })

    it("an unknown merchant: 404", async () => {
      expectError(
        await api.request("DELETE", `/v1/merchants/${unknownId("mrch")}`),
        404,
        "not_found"
      )
    })
  })

  describe("another partner's merchants", () => {
    it("GET, PATCH and DELETE with another partner's key: 403 forbidden, and nothing changes", async () => {
      const created = await createMerchant(api, `Mine ${uniqueToken()}`)
      const path = `/v1/merchants/${created.id}`
      expectError(await api.get(path, { key: otherKey }), 403, "forbidden")
      expectError(
        await api.request("PATCH", path, { key: otherKey, body: { merchantName: "Stolen" } }),
        403,
        "forbidden"
      )
      expectError(await api.request("DELETE", path, { key: otherKey }), 403, "forbidden")
      const fetched = await api.get(path)
      expect(fetched.status).toBe(200)
      expect(fetched.body.merchant.name).toBe(created.name)
    })

    it("the other partner's list never shows the first partner's merchants", async () => {
      const token = uniqueToken()
      const mine = await createMerchant(api, `Private ${token}`)
      const theirs = await createMerchant(api, `Theirs ${token}`, { key: otherKey })

      const theirList = await list({ limit: 100 }, otherKey)
      const theirIds = theirList.body.merchants.map((m: Json) => m.id)
      expect(theirIds).toContain(theirs.id)
      expect(theirIds).not.toContain(mine.id)
      expect(
        (await list({ search: token }, otherKey)).body.merchants.map((m: Json) => m.id)
      ).toEqual([theirs.id])
      expect((await list({ search: mine.id }, otherKey)).body.totalCount).toBe(0)
      expect((await list({ search: token })).body.merchants.map((m: Json) => m.id)).toEqual([
        mine.id
      ])

      // Walking all of the other partner's pages never reaches a merchant of the first.
      let cursor: string | null = null
      const walked: Array<string> = []
      do {
        const response = await list(
          cursor === null ? { limit: 100 } : { limit: 100, cursor },
          otherKey
        )
        walked.push(...response.body.merchants.map((m: Json) => m.id))
        cursor = response.body.nextCursor
      } while (cursor !== null)
      expect(walked).toContain(theirs.id)
      expect(walked).not.toContain(mine.id)
      expect(walked.length).toBe(theirList.body.totalCount)
    })

    it("a cursor from the first partner's list shows the other partner nothing of the first", async () => {
      const token = uniqueToken()
      for (let n = 0; n < 3; n++) await createMerchant(api, `Cursor ${token} ${n}`)
      const page = await list({ search: token, limit: 1 })
      const cursor = page.body.nextCursor as string
      expect(cursor).toEqual(expect.any(String))
      const theirs = await list({ cursor, limit: 100 }, otherKey)
      expect(theirs.status).toBe(200)
      for (const merchant of theirs.body.merchants) expect(merchant.name).not.toContain(token)
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
