/**
 * End to end over loopback against the real standalone server: sorting,
 * page sizes and cursors of GET /v1/payments (SPEC.md 4.3 and 8), walks that
 * visit every match exactly once even while payments are being created, and
 * GET /v1/merchants/payments (SPEC.md 4.5). Listings go through the typed
 * client (@pay/client), each page checked to be its whole raw answer; query
 * values the client would refuse before sending, and missing or malformed
 * headers, go over raw HTTP.
 */
import { Encoding } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  expectRefusal,
  type Merchant,
  type PayClient,
  payClient,
  STORES,
  startServer,
  whole
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
  paramsOf,
  type Query,
  qs,
  type SortBy,
  type SortDir,
  sortModel,
  token,
  usd
} from "./payments-support.js"

/** A page of a payment listing, as the typed client answers it. */
type Page = Awaited<ReturnType<PayClient["payments"]["list"]>>
type MerchantParams = Parameters<PayClient["payments"]["listForMerchant"]>[1]

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let data: Dataset
  /** The typed client with the bootstrap partner's key (not the dataset's). */
  let pay: PayClient
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
    pay = payClient(server)
    data = await buildDataset(server, DATASET)
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** GET /v1/payments over raw HTTP, for query values the client would refuse. */
  const list = (query: Query) => api.get(`/v1/payments${qs(query)}`, { key: data.key })

  /** GET /v1/payments through `by` (default: the dataset partner's client): the whole answer. */
  const listed =
    (by?: PayClient) =>
    async (query: Query): Promise<Page> => {
      const partner = by ?? data.pay
      return whole(partner, await partner.payments.list(paramsOf(query)))
    }
  const read = (query: Query) => listed()(query)

  /** GET /v1/merchants/payments through the dataset partner's client: the whole answer. */
  const merchantListed =
    (merchantId: string) =>
    async (query: Query): Promise<Page> =>
      whole(
        data.pay,
        await data.pay.payments.listForMerchant(merchantId, paramsOf<MerchantParams>(query))
      )

  const where = (keep: (p: ModelPayment) => boolean) => data.payments.filter(keep)
  const idsOf = (rows: ReadonlyArray<ModelPayment>) => rows.map((p) => p.id)

  /**
   * Follows `nextCursor` from the first page to the last, calling `between`
   * after each page that has a next one; returns the ids in visiting order.
   */
  const walk = async (
    pageOf: (query: Query) => Promise<Page>,
    query: Query,
    limit: number,
    between?: () => Promise<unknown>
  ) => {
    const ids: Array<string> = []
    const pages: Array<Page> = []
    let cursor: string | null = null
    for (let page = 0; page < 200; page++) {
      const body: Page = await pageOf([
        ...query,
        ["limit", limit],
        ...(cursor === null ? [] : [["cursor", cursor] as const])
      ])
      ids.push(...body.data.map((p) => p.paymentId))
      pages.push(body)
      cursor = body.nextCursor
      if (cursor === null) break
      expect(body.data).toHaveLength(limit)
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
        const body = await read([...query, ["limit", 200]])
        expect(body.data.map((p) => p.paymentId)).toEqual(idsOf(sortModel(data.payments, by, dir)))
      })
    }

    it("amounts sort as numbers, not as text, across fiat and token units", async () => {
      const body = await read([
        ["sortBy", "amount"],
        ["sortDir", "asc"],
        ["limit", 200]
      ])
      const values = body.data.map((p) =>
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
      const one = await read([["limit", 1]])
      expect(one.data.map((p) => p.paymentId)).toEqual([idsOf(sortModel(data.payments))[0]])
      expect(one.nextCursor).not.toBeNull()
      expect((await read([["limit", 200]])).data).toHaveLength(40)
    })

    it("a page exactly as large as the matches has no next cursor", async () => {
      const body = await read([["limit", 40]])
      expect(body.data).toHaveLength(40)
      expect(body.nextCursor).toBeNull()
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
      const dateDesc = (await read([["limit", 5]])).nextCursor as string
      const amountAsc = (
        await read([
          ["limit", 5],
          ["sortBy", "amount"],
          ["sortDir", "asc"]
        ])
      ).nextCursor as string
      expect(dateDesc).toEqual(expect.any(String))
      expect(amountAsc).toEqual(expect.any(String))
      // Raw, as every refusal of a query value here: these are the engine's to make.
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
              listed(),
              [...query, ["sortBy", by], ["sortDir", dir]],
              limit
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
      const whale = payClient(server, (await createPartner(server, "Whale partner")).apiKey)
      const shop = await createMerchant(whale, "Whale shop")
      const values = [MAX_UINT256, (2n ** 256n - 2n).toString(), `1${"0".repeat(76)}`, "1", "999"]
      const created = new Map<string, bigint>()
      for (const value of values) {
        const { paymentId } = await newPayment(whale, shop.id, { amount: token(EURC_BASE, value) })
        created.set(paymentId, BigInt(value))
      }
      const byValue = [...created].sort(([, x], [, y]) => (x < y ? -1 : 1)).map(([id]) => id)
      for (const dir of ["asc", "desc"] as const) {
        const { ids } = await walk(
          listed(whale),
          [
            ["sortBy", "amount"],
            ["sortDir", dir]
          ],
          1
        )
        expect(ids).toEqual(dir === "asc" ? byValue : [...byValue].reverse())
      }
    })
  })

  describe("GET /v1/payments while payments are being created", () => {
    let partner: PayClient
    let shop: Merchant

    const create = async (value: string) =>
      (await newPayment(partner, shop.id, { amount: usd(value) })).paymentId

    /** Every payment of the partner now, in `by`/`dir` order, computed from one full read. */
    const snapshot = async (by: SortBy, dir: SortDir): Promise<Array<string>> => {
      const all = await listed(partner)([["limit", 200]])
      expect(all.nextCursor).toBeNull()
      const rows = all.data.map((p) => ({
        id: p.paymentId,
        createdAt: BigInt(Date.parse(p.createdAt)),
        value: BigInt(p.fiatAmount!.value)
      }))
      return rows
        .sort((a, b) => {
          const [x, y] = by === "date" ? [a.createdAt, b.createdAt] : [a.value, b.value]
          const o = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1
          return dir === "asc" ? o : -o
        })
        .map((p) => p.id)
    }

    beforeAll(async () => {
      partner = payClient(server, (await createPartner(server, "Growing partner")).apiKey)
      shop = await createMerchant(partner, "Growing shop")
      for (let i = 0; i < 55; i++) await create(String(100 + ((i * 37) % 50)))
    })

    it("the default page size is 50", async () => {
      const expected = await snapshot("date", "desc")
      expect(expected).toHaveLength(55)
      const first = await listed(partner)([])
      expect(first.data.map((p) => p.paymentId)).toEqual(expected.slice(0, 50))
      expect(first.nextCursor).not.toBeNull()
      const second = await listed(partner)([["cursor", first.nextCursor!]])
      expect(second.data.map((p) => p.paymentId)).toEqual(expected.slice(50))
      expect(second.nextCursor).toBeNull()
    })

    it("newest first: payments created during the walk do not appear; nothing repeats or is skipped", async () => {
      const expected = await snapshot("date", "desc")
      const added: Array<string> = []
      const { ids } = await walk(listed(partner), [], 6, async () => {
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
          listed(partner),
          [
            ["sortBy", by],
            ["sortDir", dir]
          ],
          7,
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
    /** Over raw HTTP, for a missing or malformed Merchant-Id. */
    const merchantList = (merchantId: string | null) =>
      api.get("/v1/merchants/payments", {
        key: data.key,
        ...(merchantId === null ? {} : { headers: { "merchant-id": merchantId } })
      })

    it("only the Merchant-Id's payments, newest first, with its own stats", async () => {
      for (const merchant of data.merchants) {
        const body = await merchantListed(merchant.id)([["limit", 200]])
        const expected = where((p) => p.merchantId === merchant.id)
        expect(body.data.map((p) => p.paymentId)).toEqual(idsOf(sortModel(expected)))
        expect(body.nextCursor).toBeNull()
        expect(normalStats(body.stats)).toEqual(modelStats(expected))
      }
    })

    it("filters, sorting and cursors work as on GET /v1/payments", async () => {
      const [a] = data.merchants
      const body = await merchantListed(a.id)([
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
      expect(body.data.map((p) => p.paymentId)).toEqual(idsOf(sortModel(expected, "amount", "asc")))
      expect(normalStats(body.stats)).toEqual(modelStats(expected))
      const { ids } = await walk(merchantListed(a.id), [["sortDir", "asc"]], 4)
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
      await expectRefusal(pay, pay.payments.listForMerchant(data.merchants[0].id), 403, "forbidden")
      const theirs = await createMerchant(pay, "Someone else's")
      await expectRefusal(data.pay, data.pay.payments.listForMerchant(theirs.id), 403, "forbidden")
      await expectRefusal(
        data.pay,
        data.pay.payments.listForMerchant("mrch_0000000000ZZZZZZZZZZ"),
        404,
        "merchant_not_found"
      )
    })
  })
})
