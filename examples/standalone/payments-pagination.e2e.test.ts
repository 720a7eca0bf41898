/**
 * End to end over loopback against the real standalone server: sorting,
 * page sizes and cursors of GET /v1/payments (SPEC.md 4.3 and 8), walks that
 * visit every match exactly once even while payments are being created, and
 * GET /v1/merchants/payments (SPEC.md 4.5).
 */
import { Encoding, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { merchantPayments as merchantPaymentsEndpoint } from "../../packages/core/src/payments/Api.js"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  type Json,
  PARTNER_KEY,
  type RequestOptions,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  buildDataset,
  DATASET,
  type Dataset,
  EURC_BASE,
  MAX_UINT256,
  type ModelPayment,
  modelStats,
  newPayment,
  normalStats,
  qs,
  type SortBy,
  type SortDir,
  sortModel,
  token,
  usd
} from "./payments-support.js"

const decodeMerchantPayments = Schema.decodeUnknownSync(merchantPaymentsEndpoint.successSchema)

type Query = ReadonlyArray<readonly [string, string | number]>

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let data: Dataset
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
    data = await buildDataset(server, api, DATASET, createPartner, createMerchant)
  })

  afterAll(async () => {
    await server?.stop()
  })

  const list = (query: Query, options: RequestOptions = { key: data.key }) =>
    api.get(`/v1/payments${qs(query)}`, options)

  const where = (keep: (p: ModelPayment) => boolean) => data.payments.filter(keep)
  const idsOf = (rows: ReadonlyArray<ModelPayment>) => rows.map((p) => p.id)

  /**
   * Follows `nextCursor` from the first page to the last, calling `between`
   * after each page that has a next one; returns the ids in visiting order.
   */
  const walk = async (
    path: string,
    query: Query,
    limit: number,
    options: RequestOptions,
    between?: () => Promise<unknown>
  ) => {
    const ids: Array<string> = []
    const pages: Array<Json> = []
    let cursor: string | null = null
    for (let page = 0; page < 200; page++) {
      const response = await api.get(
        `${path}${qs([...query, ["limit", limit], ...(cursor === null ? [] : [["cursor", cursor] as const])])}`,
        options
      )
      expect(response.status, response.text).toBe(200)
      ids.push(...response.body.data.map((p: Json) => p.paymentId))
      pages.push(response.body)
      cursor = response.body.nextCursor
      if (cursor === null) break
      expect(response.body.data).toHaveLength(limit)
      await between?.()
    }
    expect(cursor).toBeNull()
    return { ids, pages }
  }

  describe("GET /v1/payments sorting", () => {
    const orders: ReadonlyArray<{ query: Query; by: SortBy; dir: SortDir }> = [
      { query: [], by: "date", dir: "desc" },
      { query: [["sortDir", "desc"]], by: "date", dir: "desc" },
      { query: [["sortDir", "asc"]], by: "date", dir: "asc" },
      { query: [["sortBy", "date"]], by: "date", dir: "desc" },
      { query: [["sortBy", "amount"]], by: "amount", dir: "desc" },
      {
        query: [
          ["sortBy", "amount"],
          ["sortDir", "asc"]
        ],
        by: "amount",
        dir: "asc"
      }
    ]

    for (const { query, by, dir } of orders) {
      it(`${qs(query) || "(default)"}: ${by} ${dir}, ties broken by id`, async () => {
        const response = await list([...query, ["limit", 200]])
        expect(response.status, response.text).toBe(200)
        expect(response.body.data.map((p: Json) => p.paymentId)).toEqual(
          idsOf(sortModel(data.payments, by, dir))
        )
      })
    }

    it("amounts sort as numbers, not as text, across fiat and token units", async () => {
      const response = await list([
        ["sortBy", "amount"],
        ["sortDir", "asc"],
        ["limit", 200]
      ])
      const values = response.body.data.map((p: Json) =>
        BigInt(data.payments.find((m) => m.id === p.paymentId)!.value)
      )
      for (let i = 1; i < values.length; i++) expect(values[i]! >= values[i - 1]!).toBe(true)
      expect(new Set(values.map(String)).size).toBeLessThan(values.length)
    })

    it("an unknown sortBy or sortDir: 400 naming it", async () => {
      expectError(await list([["sortBy", "price"]]), 400, "invalid_params", ["sortBy"])
      expectError(await list([["sortDir", "up"]]), 400, "invalid_params", ["sortDir"])
    })
  })

  describe("GET /v1/payments page size", () => {
    it("limit 1 to 200; 0, 201, -1, 1.5 and abc: 400 naming limit", async () => {
      for (const limit of ["0", "201", "-1", "1.5", "abc", ""]) {
        expectError(await list([["limit", limit]]), 400, "invalid_params", ["limit"])
      }
      const one = await list([["limit", 1]])
      expect(one.body.data.map((p: Json) => p.paymentId)).toEqual([
        idsOf(sortModel(data.payments))[0]
      ])
      expect(one.body.nextCursor).not.toBeNull()
      expect((await list([["limit", 200]])).body.data).toHaveLength(40)
    })

    it("a page exactly as large as the matches has no next cursor", async () => {
      const response = await list([["limit", 40]])
      expect(response.body.data).toHaveLength(40)
      expect(response.body.nextCursor).toBeNull()
    })
  })

  describe("GET /v1/payments cursors", () => {
    it("a cursor that is not one: 400 naming cursor", async () => {
      const forged = (json: unknown) => `p1.${Encoding.encodeBase64Url(JSON.stringify(json))}`
      const cursors = [
        "abc",
        "p1.",
        "p1.!!!!",
        forged({ s: "date", d: "desc", k: "not-a-number", i: "pay_0000000000ZZZZZZZZZZ" }),
        forged({ s: "date", d: "desc", k: "1", i: "not-an-id" }),
        forged({ hello: "world" })
      ]
      for (const cursor of cursors) {
        expectError(await list([["cursor", cursor]]), 400, "invalid_params", ["cursor"])
      }
    })

    it("a cursor used with another sort: 400 naming cursor", async () => {
      const dateDesc = (await list([["limit", 5]])).body.nextCursor
      const amountAsc = (
        await list([
          ["limit", 5],
          ["sortBy", "amount"],
          ["sortDir", "asc"]
        ])
      ).body.nextCursor
      expect(dateDesc).toEqual(expect.any(String))
      expect(amountAsc).toEqual(expect.any(String))
      const misuses: ReadonlyArray<Query> = [
        [
          ["cursor", dateDesc],
          ["sortBy", "amount"]
        ],
        [
          ["cursor", dateDesc],
          ["sortDir", "asc"]
        ],
        [["cursor", amountAsc]],
        [
          ["cursor", amountAsc],
          ["sortBy", "amount"],
          ["sortDir", "desc"]
        ],
        [
          ["cursor", amountAsc],
          ["sortBy", "date"],
          ["sortDir", "asc"]
        ]
      ]
      for (const query of misuses) {
        expectError(await list(query), 400, "invalid_params", ["cursor"])
      }
    })

    it("walking with nextCursor visits every match exactly once, in order, stats on every page", async () => {
      const filters: ReadonlyArray<{ query: Query; keep: (p: ModelPayment) => boolean }> = [
        { query: [], keep: () => true },
        { query: [["status", "succeeded"]], keep: (p) => p.status === "succeeded" },
        {
          query: [["merchantId", data.merchants[1].id]],
          keep: (p) => p.merchantId === data.merchants[1].id
        },
        {
          query: [["referenceId", "inv-2024"]],
          keep: (p) => p.referenceId.toLowerCase().includes("inv-2024")
        }
      ]
      const sorts: ReadonlyArray<[SortBy, SortDir]> = [
        ["date", "desc"],
        ["date", "asc"],
        ["amount", "asc"],
        ["amount", "desc"]
      ]
      for (const { query, keep } of filters) {
        const expected = where(keep)
        for (const [by, dir] of sorts) {
          for (const limit of [3, 7]) {
            const { ids, pages } = await walk(
              "/v1/payments",
              [...query, ["sortBy", by], ["sortDir", dir]],
              limit,
              { key: data.key }
            )
            expect(ids, `${qs(query)} ${by} ${dir} ${limit}`).toEqual(
              idsOf(sortModel(expected, by, dir))
            )
            expect(new Set(ids).size).toBe(ids.length)
            expect(pages).toHaveLength(Math.max(1, Math.ceil(expected.length / limit)))
            for (const page of pages) expect(normalStats(page.stats)).toEqual(modelStats(expected))
          }
        }
      }
    })
  })

  describe("GET /v1/payments sorted by amount up to 2^256 - 1", () => {
    it("token amounts of up to 78 digits sort exactly and page through cursors", async () => {
      const { apiKey: key } = await createPartner(server, "Whale partner")
      const shop = await createMerchant(api, "Whale shop", { key })
      const values = [MAX_UINT256, (2n ** 256n - 2n).toString(), `1${"0".repeat(76)}`, "1", "999"]
      const created = new Map<string, bigint>()
      for (const value of values) {
        const { paymentId } = await newPayment(
          api,
          shop.id,
          { amount: token(EURC_BASE, value) },
          { key }
        )
        created.set(paymentId, BigInt(value))
      }
      const byValue = [...created].sort(([, x], [, y]) => (x < y ? -1 : 1)).map(([id]) => id)
      for (const dir of ["asc", "desc"] as const) {
        const { ids } = await walk(
          "/v1/payments",
          [
            ["sortBy", "amount"],
            ["sortDir", dir]
          ],
          1,
          { key }
        )
        expect(ids).toEqual(dir === "asc" ? byValue : [...byValue].reverse())
      }
    })
  })

  describe("GET /v1/payments while payments are being created", () => {
    let key: string
    let shop: Json

    const create = async (value: string) =>
      (await newPayment(api, shop.id, { amount: usd(value) }, { key })).paymentId as string

    /** Every payment of the partner now, in `by`/`dir` order, computed from one full read. */
    const snapshot = async (by: SortBy, dir: SortDir): Promise<Array<string>> => {
      const all = await api.get("/v1/payments?limit=200", { key })
      expect(all.body.nextCursor).toBeNull()
      const rows = all.body.data.map((p: Json) => ({
        id: p.paymentId as string,
        createdAt: BigInt(Date.parse(p.createdAt)),
        value: BigInt(p.fiatAmount.value)
      }))
      return rows
        .sort((a: (typeof rows)[number], b: (typeof rows)[number]) => {
          const [x, y] = by === "date" ? [a.createdAt, b.createdAt] : [a.value, b.value]
          const o = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1
          return dir === "asc" ? o : -o
        })
        .map((p: { id: string }) => p.id)
    }

    beforeAll(async () => {
      key = (await createPartner(server, "Growing partner")).apiKey
      shop = await createMerchant(api, "Growing shop", { key })
      for (let i = 0; i < 55; i++) await create(String(100 + ((i * 37) % 50)))
    })

    it("the default page size is 50", async () => {
      const expected = await snapshot("date", "desc")
      expect(expected).toHaveLength(55)
      const first = await api.get("/v1/payments", { key })
      expect(first.body.data.map((p: Json) => p.paymentId)).toEqual(expected.slice(0, 50))
      expect(first.body.nextCursor).not.toBeNull()
      const second = await api.get(`/v1/payments${qs([["cursor", first.body.nextCursor]])}`, {
        key
      })
      expect(second.body.data.map((p: Json) => p.paymentId)).toEqual(expected.slice(50))
      expect(second.body.nextCursor).toBeNull()
    })

    it("newest first: payments created during the walk do not appear; nothing repeats or is skipped", async () => {
      const expected = await snapshot("date", "desc")
      const added: Array<string> = []
      const { ids } = await walk("/v1/payments", [], 6, { key }, async () => {
        added.push(await create("125"))
      })
      expect(added.length).toBeGreaterThan(5)
      expect(ids).toEqual(expected)
    })

    it("oldest first and by amount: every earlier payment exactly once, in order, whatever is added", async () => {
      for (const [by, dir] of [
        ["date", "asc"],
        ["amount", "asc"],
        ["amount", "desc"]
      ] as const) {
        const expected = await snapshot(by, dir)
        const known = new Set(expected)
        const added = new Set<string>()
        let n = 0
        const { ids } = await walk(
          "/v1/payments",
          [
            ["sortBy", by],
            ["sortDir", dir]
          ],
          7,
          { key },
          async () => {
            added.add(await create(String(100 + ((n++ * 13) % 60))))
          }
        )
        expect(added.size).toBeGreaterThan(5)
        expect(new Set(ids).size, `${by} ${dir}`).toBe(ids.length)
        expect(ids.filter((id) => known.has(id))).toEqual(expected)
        expect(ids.every((id) => known.has(id) || added.has(id))).toBe(true)
        if (by === "date") {
          // Created later, so listed after every earlier payment.
          const firstNew = ids.findIndex((id) => !known.has(id))
          expect(firstNew).toBe(expected.length)
        }
      }
    })
  })

  describe("GET /v1/merchants/payments", () => {
    const merchantList = (merchantId: string | null, query: Query = [], key = data.key) =>
      api.get(`/v1/merchants/payments${qs(query)}`, {
        key,
        ...(merchantId === null ? {} : { headers: { "merchant-id": merchantId } })
      })

    it("only the Merchant-Id's payments, newest first, with its own stats", async () => {
      for (const merchant of data.merchants) {
        const response = await merchantList(merchant.id, [["limit", 200]])
        expect(response.status, response.text).toBe(200)
        decodeMerchantPayments(response.body)
        const expected = where((p) => p.merchantId === merchant.id)
        expect(response.body.data.map((p: Json) => p.paymentId)).toEqual(idsOf(sortModel(expected)))
        expect(response.body.nextCursor).toBeNull()
        expect(normalStats(response.body.stats)).toEqual(modelStats(expected))
      }
    })

    it("filters, sorting and cursors work as on GET /v1/payments", async () => {
      const [a] = data.merchants
      const response = await merchantList(a.id, [
        ["status", "succeeded"],
        ["status", "failed"],
        ["network", "eip155:8453"],
        ["sortBy", "amount"],
        ["sortDir", "asc"],
        ["limit", 200]
      ])
      const expected = where(
        (p) =>
          p.merchantId === a.id &&
          ["succeeded", "failed"].includes(p.status) &&
          (p.tokenAsset ?? "").startsWith("eip155:8453/")
      )
      expect(response.body.data.map((p: Json) => p.paymentId)).toEqual(
        idsOf(sortModel(expected, "amount", "asc"))
      )
      expect(normalStats(response.body.stats)).toEqual(modelStats(expected))
      const { ids } = await walk("/v1/merchants/payments", [["sortDir", "asc"]], 4, {
        key: data.key,
        headers: { "merchant-id": a.id }
      })
      expect(ids).toEqual(
        idsOf(
          sortModel(
            where((p) => p.merchantId === a.id),
            "date",
            "asc"
          )
        )
      )
    })

    it("without Merchant-Id: 400 missing_merchant_id; a malformed one: 400", async () => {
      expectError(await merchantList(null), 400, "missing_merchant_id", ["Merchant-Id"])
      const malformed = await merchantList("shop-a")
      expect(malformed.status).toBe(400)
      expectError(malformed, 400, "invalid_params", ["Merchant-Id"])
    })

    it("another partner's merchant: 403 forbidden; an unknown one: 404 merchant_not_found", async () => {
      expectError(await merchantList(data.merchants[0].id, [], PARTNER_KEY), 403, "forbidden")
      const theirs = await createMerchant(api, "Someone else's")
      expectError(await merchantList(theirs.id), 403, "forbidden")
      expectError(await merchantList("mrch_0000000000ZZZZZZZZZZ"), 404, "merchant_not_found")
    })
  })
})
