/**
 * End to end over loopback against the real standalone server: the filters
 * and statistics of GET /v1/payments (SPEC.md 2 "Statistics object" and 4.3,
 * WIRE.md section 3 "Payments"), checked against a dataset of 40 payments
 * whose expected listings the test computes itself. Listings go through the
 * typed client (@pay/client), each checked to be its whole raw answer; query
 * values the client would refuse before sending go over raw HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  type Json,
  payClient,
  STORES,
  startServer,
  whole
} from "./e2e-support.js"
import {
  buildDataset,
  currencyOf,
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
  startProcessing,
  succeed,
  TOKENS,
  token,
  USDC_BASE,
  USDC_ETHEREUM,
  usd
} from "./payments-support.js"

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let data: Dataset
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
    data = await buildDataset(server, DATASET)
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** GET /v1/payments over raw HTTP, for query values the client would refuse. */
  const list = (query: Query) => api.get(`/v1/payments${qs(query)}`, { key: data.key })

  /** GET /v1/payments through the client with the dataset partner's key: the whole answer. */
  const read = async (query: Query) =>
    whole(data.pay, await data.pay.payments.list(paramsOf(query)))

  const where = (keep: (p: ModelPayment) => boolean) => data.payments.filter(keep)

  /**
   * One page of up to 200 for `query`: exactly `expected` in the listing order,
   * no next page, and statistics over exactly `expected`.
   */
  const expectListing = async (
    query: Query,
    expected: ReadonlyArray<ModelPayment>,
    sort: { readonly by?: SortBy; readonly dir?: SortDir } = {}
  ) => {
    const body = await read([...query, ["limit", 200]])
    const ids = body.data.map((p) => p.paymentId)
    expect(ids, qs(query)).toEqual(sortModel(expected, sort.by, sort.dir).map((p) => p.id))
    expect(body.nextCursor).toBeNull()
    expect(normalStats(body.stats), qs(query)).toEqual(modelStats(expected))
    return body
  }

  const symbolOf = (p: ModelPayment) =>
    p.tokenAsset === null ? undefined : TOKENS[p.tokenAsset]!.symbol.toLowerCase()
  const chainOf = (p: ModelPayment) =>
    p.tokenAsset === null ? undefined : TOKENS[p.tokenAsset]!.chain

  describe("GET /v1/payments over the dataset", () => {
    it("without filters: every payment of the partner, newest first, stats over all of them", async () => {
      expect(data.payments).toHaveLength(40)
      const body = await expectListing([], data.payments)
      expect(Object.keys(body).sort()).toEqual(["data", "nextCursor", "stats"])
      expect(body.stats.totalTransactions).toBeGreaterThan(10)
    })

    it("each item shows the merchant, reference, status, amounts, buyer and transaction", async () => {
      const body = await read([["limit", 200]])
      const byId = new Map<string, Json>(body.data.map((p) => [p.paymentId, p]))
      for (const model of data.payments) {
        const item = byId.get(model.id)
        const merchant = data.merchants.find((m) => m.id === model.merchantId)!
        expect(item.merchant).toEqual({ id: merchant.id, name: merchant.name, iconUrl: null })
        expect(item.referenceId).toBe(model.referenceId)
        expect(item.status).toBe(model.status)
        expect(item.isTerminal).toBe(!["requires_action", "processing"].includes(model.status))
        expect(item.createdAt).toBe(model.createdAtText)
        if (model.unit.startsWith("iso4217/")) {
          expect(item.fiatAmount).toMatchObject({ unit: model.unit, value: model.value })
          expect(item.fiatAmount.display.decimals).toBe(currencyOf(model.unit).decimals)
        } else {
          expect(item).not.toHaveProperty("fiatAmount")
        }
        if (model.tokenAsset === null) {
          expect(item).not.toHaveProperty("tokenAmount")
        } else {
          expect(item.tokenAmount.unit).toBe(`caip19/${model.tokenAsset}`)
          expect(item.tokenAmount.display.assetSymbol).toBe(TOKENS[model.tokenAsset]!.symbol)
          if (model.unit.startsWith("caip19/")) expect(item.tokenAmount.value).toBe(model.value)
        }
        if (model.buyer === null) {
          expect(item).not.toHaveProperty("buyer")
          expect(item).not.toHaveProperty("transaction")
        } else {
          expect(item.buyer).toEqual({
            accountCaip10: model.buyer,
            accountProviderName: model.wallet
          })
          expect(item.transaction).toEqual({
            networkId: model.buyer.split(":")[1],
            hash: model.txHash,
            nonce: 1
          })
        }
      }
    })

    it("an overdue unpaid payment is listed as expired and selected by status=expired", async () => {
      const expired = where((p) => p.status === "expired")
      expect(expired).toHaveLength(4)
      const body = await expectListing([["status", "expired"]], expired)
      for (const item of body.data)
        expect(item).toMatchObject({ status: "expired", isTerminal: true })
      await expectListing(
        [["status", "requires_action"]],
        where((p) => p.status === "requires_action")
      )
    })

    it("status, one or repeated", async () => {
      const sets = [
        ["succeeded"],
        ["processing"],
        ["failed"],
        ["cancelled"],
        ["succeeded", "failed"],
        ["requires_action", "processing", "expired"],
        ["requires_action", "processing", "succeeded", "failed", "expired", "cancelled"]
      ]
      for (const statuses of sets) {
        await expectListing(
          statuses.map((s) => ["status", s] as const),
          where((p) => statuses.includes(p.status))
        )
      }
    })

    it("an unknown status: 400 naming status", async () => {
      expectError(await list([["status", "pending"]]), 400, "invalid_params", ["status"])
    })

    it("merchantId, one or repeated; another partner's or unknown merchant selects nothing", async () => {
      const [a, b] = data.merchants
      await expectListing(
        [["merchantId", a.id]],
        where((p) => p.merchantId === a.id)
      )
      await expectListing(
        [["merchantId", b.id]],
        where((p) => p.merchantId === b.id)
      )
      await expectListing(
        [
          ["merchantId", a.id],
          ["merchantId", b.id]
        ],
        data.payments
      )
      await expectListing([["merchantId", "mrch_0000000000ZZZZZZZZZZ"]], [])
    })

    it("token_symbol: case-insensitive symbols, repeatable", async () => {
      const bySymbols = (...symbols: Array<string>) =>
        where((p) => symbols.map((s) => s.toLowerCase()).includes(symbolOf(p) ?? ""))
      await expectListing([["token_symbol", "usdc"]], bySymbols("usdc"))
      await expectListing([["token_symbol", "USDC"]], bySymbols("usdc"))
      await expectListing([["token_symbol", "eUrC"]], bySymbols("eurc"))
      await expectListing(
        [
          ["token_symbol", "usdc"],
          ["token_symbol", "EURC"]
        ],
        bySymbols("usdc", "eurc")
      )
      await expectListing([["token_symbol", "DAI"]], [])
      expect(bySymbols("usdc").length).toBeGreaterThan(5)
    })

    it("network: CAIP-2 chain ids, comma-separated", async () => {
      const onChains = (...chains: Array<string>) => where((p) => chains.includes(chainOf(p) ?? ""))
      await expectListing([["network", "eip155:8453"]], onChains("eip155:8453"))
      await expectListing([["network", "eip155:1"]], onChains("eip155:1"))
      await expectListing(
        [["network", "eip155:1,eip155:8453"]],
        onChains("eip155:1", "eip155:8453")
      )
      await expectListing([["network", "eip155:10"]], [])
      expectError(await list([["network", "base"]]), 400, "invalid_params", ["network"])
    })

    it("asset (deprecated): comma-separated CAIP-19 ids, and with token_symbol both apply", async () => {
      const assets = (...ids: Array<string>) => where((p) => ids.includes(p.tokenAsset ?? ""))
      await expectListing([["asset", USDC_BASE]], assets(USDC_BASE))
      await expectListing([["asset", `${USDC_BASE},${EURC_BASE}`]], assets(USDC_BASE, EURC_BASE))
      await expectListing(
        [
          ["asset", `${USDC_ETHEREUM},${EURC_BASE}`],
          ["token_symbol", "usdc"]
        ],
        assets(USDC_ETHEREUM)
      )
      expectError(await list([["asset", "USDC"]]), 400, "invalid_params", ["asset"])
    })

    it("list parameters are deduplicated and capped: over a cap is 400 naming the field", async () => {
      const [a, b] = data.merchants
      // Repeats count once: 300 repeats of two merchants, 50 of each status.
      await expectListing(
        Array.from({ length: 300 }, (_, i) => ["merchantId", i % 2 ? a.id : b.id] as const),
        data.payments
      )
      const everyStatus = [
        "requires_action",
        "processing",
        "succeeded",
        "failed",
        "expired",
        "cancelled"
      ]
      await expectListing(
        Array.from({ length: 300 }, (_, i) => ["status", everyStatus[i % 6]!] as const),
        data.payments
      )
      await expectListing(
        [["network", Array.from({ length: 120 }, () => "eip155:8453").join(",")]],
        where((p) => chainOf(p) === "eip155:8453")
      )
      await expectListing(
        Array.from({ length: 80 }, (_, i) => ["token_symbol", i % 2 ? "usdc" : "USDC"] as const),
        where((p) => symbolOf(p) === "usdc")
      )
      // 100 distinct merchants is the cap; 101 is refused.
      const merchantIds = (n: number) =>
        Array.from(
          { length: n },
          (_, i) => ["merchantId", i === 0 ? a.id : `mrch_${String(i).padStart(20, "0")}`] as const
        )
      await expectListing(
        merchantIds(100),
        where((p) => p.merchantId === a.id)
      )
      expectError(await list(merchantIds(101)), 400, "invalid_params", ["merchantId"])
      const networks = (n: number) =>
        Array.from({ length: n }, (_, i) => `eip155:${i + 1}`).join(",")
      expect((await list([["network", networks(50)]])).status).toBe(200)
      expectError(await list([["network", networks(51)]]), 400, "invalid_params", ["network"])
      const assets = Array.from(
        { length: 51 },
        (_, i) => `eip155:1/erc20:0x${String(i + 1).padStart(40, "0")}`
      ).join(",")
      expectError(await list([["asset", assets]]), 400, "invalid_params", ["asset"])
      const symbols = Array.from({ length: 51 }, (_, i) => ["token_symbol", `T${i}`] as const)
      expectError(await list(symbols), 400, "invalid_params", ["token_symbol"])
      // The merchant's own list route applies the same caps.
      const byMerchant = await api.get(`/v1/merchants/payments${qs([["network", networks(51)]])}`, {
        key: data.key,
        headers: { "merchant-id": a.id }
      })
      expectError(byMerchant, 400, "invalid_params", ["network"])
    })

    it("referenceId: a case-insensitive substring", async () => {
      const containing = (q: string) =>
        where((p) => p.referenceId.toLowerCase().includes(q.toLowerCase()))
      for (const q of [
        "inv-2024/a",
        "INV-2024/B-01",
        "xyz",
        "ref-B 1",
        "a-00",
        "2024",
        "order x"
      ]) {
        expect(containing(q).length, q).toBeGreaterThan(0)
        await expectListing([["referenceId", q]], containing(q))
      }
      await expectListing([["referenceId", "zzz"]], [])
    })

    it("referenceId rules: 3 to 35 characters of letters, digits, space and / : . , + -", async () => {
      for (const q of ["ab", "x".repeat(36), "*", "inv*", "a_b", "ab%"]) {
        expectError(await list([["referenceId", q]]), 400, "invalid_params", ["referenceId"])
      }
      for (const q of ["abc", "x".repeat(35), "a/b:c.d,e+f-g h"]) {
        expect((await read([["referenceId", q]])).stats, q).toBeDefined()
      }
    })

    it("startTs is inclusive and endTs exclusive, on exact createdAt values", async () => {
      const ordered = sortModel(data.payments, "date", "asc")
      const from = ordered[12]!
      const to = ordered[30]!
      await expectListing(
        [["startTs", from.createdAtText]],
        where((p) => p.createdAt >= from.createdAt)
      )
      await expectListing(
        [["endTs", from.createdAtText]],
        where((p) => p.createdAt < from.createdAt)
      )
      await expectListing(
        [
          ["startTs", from.createdAtText],
          ["endTs", to.createdAtText]
        ],
        where((p) => p.createdAt >= from.createdAt && p.createdAt < to.createdAt)
      )
      // The same instant written with an offset selects the same payments.
      const shifted = new Date(from.createdAt + 3600_000).toISOString().replace("Z", "+01:00")
      await expectListing(
        [["startTs", shifted]],
        where((p) => p.createdAt >= from.createdAt)
      )
      await expectListing(
        [
          ["startTs", to.createdAtText],
          ["endTs", to.createdAtText]
        ],
        []
      )
    })

    it("startTs or endTs that is not RFC 3339: 400 naming it", async () => {
      for (const [name, value] of [
        ["startTs", "yesterday"],
        ["startTs", "2026-01-01"],
        ["endTs", "1767225600"]
      ] as const) {
        expectError(await list([[name, value]]), 400, "invalid_params", [name])
      }
    })

    it("filters combine", async () => {
      const [, b] = data.merchants
      await expectListing(
        [
          ["status", "succeeded"],
          ["status", "processing"],
          ["merchantId", b.id],
          ["network", "eip155:8453"],
          ["token_symbol", "usdc"],
          ["sortBy", "amount"],
          ["sortDir", "asc"]
        ],
        where(
          (p) =>
            ["succeeded", "processing"].includes(p.status) &&
            p.merchantId === b.id &&
            chainOf(p) === "eip155:8453" &&
            symbolOf(p) === "usdc"
        ),
        { by: "amount", dir: "asc" }
      )
    })
  })

  describe("GET /v1/payments stats", () => {
    it("cover every match, not only the page", async () => {
      for (const query of [
        [],
        [["status", "succeeded"]],
        [["merchantId", data.merchants[0].id]]
      ] as Array<Query>) {
        const page = await read([...query, ["limit", 1]])
        expect(page.data).toHaveLength(1)
        expect(page.nextCursor).not.toBeNull()
        const expected =
          query.length === 0
            ? data.payments
            : query[0]![0] === "status"
              ? where((p) => p.status === "succeeded")
              : where((p) => p.merchantId === data.merchants[0].id)
        expect(normalStats(page.stats)).toEqual(modelStats(expected))
      }
    })

    it("succeeded payments only: refunded ones still count; the same address on two chains is one customer", async () => {
      const succeeded = where((p) => p.status === "succeeded")
      const stats = normalStats((await read([])).stats)
      expect(stats.totalTransactions).toBe(succeeded.length)
      const addresses = new Set(succeeded.map((p) => p.buyer!.split(":")[2]))
      const accounts = new Set(succeeded.map((p) => p.buyer))
      expect(accounts.size).toBeGreaterThan(addresses.size)
      expect(stats.totalCustomers).toBe(addresses.size)
      expect(where((p) => p.refunded).every((p) => p.status === "succeeded")).toBe(true)
    })

    it("an empty match: no revenue, no transactions, no customers", async () => {
      const body = await expectListing([["referenceId", "nothing-here"]], [])
      expect(body.stats).toEqual({ totalRevenue: [], totalTransactions: 0, totalCustomers: 0 })
    })
  })

  describe("GET /v1/payments stats: exact amounts in major units", () => {
    /** A new partner with one merchant, and a payment driven to succeeded per amount. */
    const succeededFor = async (
      amounts: ReadonlyArray<{ readonly unit: string; readonly value: string }>,
      pay: string = USDC_BASE
    ) => {
      const partner = payClient(server, (await createPartner(server, "Stats partner")).apiKey)
      const shop = await createMerchant(partner, "Stats shop")
      for (const amount of amounts) {
        const { paymentId } = await newPayment(partner, shop.id, { amount })
        const asset = amount.unit.startsWith("caip19/") ? amount.unit.slice(7) : pay
        await startProcessing(server, paymentId, {
          asset,
          value: amount.unit.startsWith("caip19/") ? amount.value : "1000000"
        })
        await succeed(server, paymentId)
      }
      // An open payment in another currency adds no line.
      await newPayment(partner, shop.id, { amount: { unit: "iso4217/GBP", value: "999" } })
      return normalStats(whole(partner, await partner.payments.list()).stats)
    }

    it("USD 1050 + 1 minor units is 10.51; JPY has no decimals; USDC has 6", async () => {
      const stats = await succeededFor([
        usd("1050"),
        usd("1"),
        { unit: "iso4217/JPY", value: "1500" },
        token(USDC_BASE, "2500000")
      ])
      expect(stats).toEqual({
        totalRevenue: [
          { amount: 1500, currency: "JPY" },
          { amount: 10.51, currency: "USD" },
          { amount: 2.5, currency: "USDC" }
        ],
        totalTransactions: 4,
        totalCustomers: 4
      })
    })

    it("large sums stay exact: two token payments whose sum passes 2^63 minor units", async () => {
      // 5 * 10^18 each: each fits a signed 64-bit integer, their sum does not.
      const stats = await succeededFor([
        token(EURC_BASE, "5000000000000000000"),
        token(EURC_BASE, "5000000000000000000")
      ])
      expect(stats.totalRevenue).toEqual([{ amount: 1e13, currency: "EURC" }])
    })

    it("a 2^256 - 1 token payment counts as a JSON number", async () => {
      const stats = await succeededFor([token(EURC_BASE, MAX_UINT256), token(EURC_BASE, "1")])
      const expected = Number((2n ** 256n).toString()) / 1e6
      expect(stats.totalRevenue).toHaveLength(1)
      expect(stats.totalRevenue[0].currency).toBe("EURC")
      expect(stats.totalRevenue[0].amount).toBeCloseTo(expected, -60)
    })

    it("USDC paid on two chains is one USDC revenue line", async () => {
      const stats = await succeededFor([
        token(USDC_BASE, "1500000"),
        token(USDC_ETHEREUM, "2000000")
      ])
      expect(stats.totalRevenue).toEqual([{ amount: 3.5, currency: "USDC" }])
    })
  })
})
