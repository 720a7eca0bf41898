/**
 * End to end over loopback against the real standalone server: the
 * deprecated GET /v1/merchants/{merchant_id}/payments (SPEC.md 2 "legacy
 * view", 3 rule 4, 4.3 and 5.2; WIRE.md section 3), checked against the
 * shared dataset (seeded through the typed client, @pay/client). The legacy
 * route itself is read over raw HTTP: the client's Promise facade does not
 * offer it (it is deprecated, and its documented key header is X-Api-Key).
 */
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LegacyPaymentsResponse } from "../../../packages/core/src/payments/Api.js"
import {
  client,
  createMerchant,
  type E2eServer,
  expectError,
  type Json,
  PARTNER_KEY,
  payClient,
  RFC3339,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  buildDataset,
  currencyOf,
  DATASET,
  type Dataset,
  type ModelPayment,
  modelStats,
  type Query,
  qs,
  type SortBy,
  type SortDir,
  sortModel,
  TOKENS
} from "./payments-support.js"

const decodeLegacy = Schema.decodeUnknownSync(LegacyPaymentsResponse)

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

  /** The legacy route with the key in `X-Api-Key` (its documented header). */
  const legacy = (merchantId: string, query: Query = [], key = data.key) =>
    api.get(`/v1/merchants/${merchantId}/payments${qs(query)}`, {
      key: null,
      headers: { "x-api-key": key }
    })

  /** A merchant's payments the legacy list may show: every status but cancelled. */
  const shown = (merchantId: string, keep: (p: ModelPayment) => boolean = () => true) =>
    data.payments.filter((p) => p.merchantId === merchantId && p.status !== "cancelled" && keep(p))

  const ids = (body: Json): Array<string> => body.data.map((p: Json) => p.payment_id)
  const idsOf = (rows: ReadonlyArray<ModelPayment>, by?: SortBy, dir?: SortDir) =>
    sortModel(rows, by, dir).map((p) => p.id)

  /** The legacy stats: the currency line with the largest total, no conversion. */
  const legacyStats = (rows: ReadonlyArray<ModelPayment>) => {
    const stats = modelStats(rows)
    const top = [...stats.totalRevenue].sort((a, b) => b.amount - a.amount)[0]
    return {
      total_customers: stats.totalCustomers,
      total_revenue: top ?? { amount: 0, currency: expect.any(String) },
      total_transactions: stats.totalTransactions
    }
  }

  const LEGACY_FIELDS = [
    "payment_id",
    "merchant_id",
    "reference_id",
    "status",
    "is_terminal",
    "wallet_name",
    "token_symbol",
    "token_decimals",
    "token_logo",
    "chain_logo",
    "wallet_logo",
    "chain_id",
    "buyer_caip10",
    "token_caip19",
    "tx_hash",
    "nonce",
    "token_amount",
    "fiat_amount",
    "fiat_currency",
    "created_at",
    "last_updated_at",
    "settled_at",
    "settlement_status",
    "settlement_tx_hash",
    "livemode"
  ]

  describe("GET /v1/merchants/{merchant_id}/payments (deprecated)", () => {
    it("with X-Api-Key and with Api-Key: the same answer", async () => {
      const [a] = data.merchants
      const withLegacyHeader = await legacy(a.id)
      expect(withLegacyHeader.status, withLegacyHeader.text).toBe(200)
      const withApiKey = await api.get(`/v1/merchants/${a.id}/payments`, { key: data.key })
      expect(withApiKey.status, withApiKey.text).toBe(200)
      expect(withApiKey.body).toEqual(withLegacyHeader.body)
    })

    it("without a key: 401; a wrong X-Api-Key: 401 invalid_api_key", async () => {
      const [a] = data.merchants
      const none = await api.get(`/v1/merchants/${a.id}/payments`, { key: null })
      expect(none.status).toBe(401)
      expectError(await legacy(a.id, [], "wrong_key_0123456789abcdef"), 401, "invalid_api_key")
    })

    it("every payment but cancelled ones, newest first, in snake_case", async () => {
      for (const merchant of data.merchants) {
        const response = await legacy(merchant.id, [["limit", 200]])
        decodeLegacy(response.body)
        expect(Object.keys(response.body).sort()).toEqual(["data", "next_cursor", "stats"])
        expect(ids(response.body)).toEqual(idsOf(shown(merchant.id)))
        expect(response.body.next_cursor).toBeNull()
        const byId = new Map<string, ModelPayment>(data.payments.map((p) => [p.id, p]))
        for (const item of response.body.data) {
          const model = byId.get(item.payment_id)!
          expect(Object.keys(item).sort()).toEqual([...LEGACY_FIELDS].sort())
          const tokenFacts = model.tokenAsset === null ? undefined : TOKENS[model.tokenAsset]
          const fiat = model.unit.startsWith("iso4217/")
          expect(item).toMatchObject({
            merchant_id: merchant.id,
            reference_id: model.referenceId,
            status: model.status,
            is_terminal: !["requires_action", "processing"].includes(model.status),
            wallet_name: model.wallet ?? "",
            token_symbol: tokenFacts?.symbol ?? null,
            token_decimals: tokenFacts?.decimals ?? 0,
            chain_id: tokenFacts?.chain ?? null,
            buyer_caip10: model.buyer,
            token_caip19: model.tokenAsset,
            tx_hash: model.txHash,
            nonce: model.txHash === null ? null : 1,
            token_amount: model.tokenAsset === null ? null : fiat ? "1000000" : model.value,
            fiat_amount: fiat ? Number(model.value) : null,
            fiat_currency: fiat ? currencyOf(model.unit).currency : null,
            created_at: model.createdAtText,
            livemode: false
          })
          if (fiat) expect(Number.isInteger(item.fiat_amount)).toBe(true)
          expect(item.last_updated_at).toMatch(RFC3339)
        }
      }
    })

    it("stats: customers, transactions, and the currency with the largest total", async () => {
      for (const merchant of data.merchants) {
        const response = await legacy(merchant.id, [["limit", 1]])
        expect(response.body.data).toHaveLength(1)
        expect(response.body.stats).toEqual(legacyStats(shown(merchant.id)))
        expect(response.body.stats.total_transactions).toBeGreaterThan(3)
      }
    })

    it("stats with no succeeded payment: zero customers, transactions and revenue", async () => {
      const [a] = data.merchants
      const response = await legacy(a.id, [["status", "requires_action"]])
      expect(ids(response.body)).toEqual(idsOf(shown(a.id, (p) => p.status === "requires_action")))
      expect(response.body.stats).toMatchObject({ total_customers: 0, total_transactions: 0 })
      expect(response.body.stats.total_revenue.amount).toBe(0)
    })

    it("status filters on the five states it knows; cancelled: 400 naming status", async () => {
      const [, b] = data.merchants
      for (const statuses of [
        ["succeeded"],
        ["expired"],
        ["processing", "failed"],
        ["requires_action"]
      ]) {
        const response = await legacy(b.id, [
          ...statuses.map((s) => ["status", s] as const),
          ["limit", 200]
        ])
        expect(response.status, response.text).toBe(200)
        const expected = shown(b.id, (p) => statuses.includes(p.status))
        expect(ids(response.body), statuses.join()).toEqual(idsOf(expected))
        expect(response.body.stats).toEqual(legacyStats(expected))
      }
      expectError(await legacy(b.id, [["status", "cancelled"]]), 400, "invalid_params", ["status"])
    })

    it("start_ts is inclusive and end_ts exclusive", async () => {
      const [a] = data.merchants
      const ordered = sortModel(shown(a.id), "date", "asc")
      const from = ordered[3]!
      const to = ordered[10]!
      const response = await legacy(a.id, [
        ["start_ts", from.createdAtText],
        ["end_ts", to.createdAtText],
        ["limit", 200]
      ])
      expect(response.status, response.text).toBe(200)
      expect(ids(response.body)).toEqual(
        idsOf(shown(a.id, (p) => p.createdAt >= from.createdAt && p.createdAt < to.createdAt))
      )
      expectError(await legacy(a.id, [["start_ts", "last week"]]), 400, "invalid_params", [
        "start_ts"
      ])
      expectError(await legacy(a.id, [["end_ts", "2026-01-01"]]), 400, "invalid_params", ["end_ts"])
    })

    it("sort_by, sort_dir, limit and next_cursor walk every payment once, in order", async () => {
      const [a] = data.merchants
      for (const [by, dir] of [
        ["date", "desc"],
        ["date", "asc"],
        ["amount", "asc"],
        ["amount", "desc"]
      ] as const) {
        const seen: Array<string> = []
        let cursor: string | null = null
        for (let page = 0; page < 50; page++) {
          const response = await legacy(a.id, [
            ["sort_by", by],
            ["sort_dir", dir],
            ["limit", 4],
            ...(cursor === null ? [] : [["cursor", cursor] as const])
          ])
          expect(response.status, response.text).toBe(200)
          expect(response.body.data.length).toBeLessThanOrEqual(4)
          seen.push(...ids(response.body))
          cursor = response.body.next_cursor
          if (cursor === null) break
        }
        expect(seen, `${by} ${dir}`).toEqual(idsOf(shown(a.id), by, dir))
      }
    })

    it("limit 0 or 201, or an unknown sort: 400 naming it", async () => {
      const [a] = data.merchants
      for (const limit of ["0", "201"]) {
        expectError(await legacy(a.id, [["limit", limit]]), 400, "invalid_params", ["limit"])
      }
      expectError(await legacy(a.id, [["sort_by", "price"]]), 400, "invalid_params", ["sort_by"])
      expectError(await legacy(a.id, [["sort_dir", "up"]]), 400, "invalid_params", ["sort_dir"])
      expect((await legacy(a.id, [["limit", "200"]])).status).toBe(200)
    })

    it("another partner's merchant: 403; an unknown or malformed one: 404", async () => {
      const [a] = data.merchants
      expectError(await legacy(a.id, [], PARTNER_KEY), 403, "forbidden")
      const theirs = await createMerchant(payClient(server), "Not the dataset's")
      expectError(await legacy(theirs.id), 403, "forbidden")
      const unknown = await legacy("mrch_0000000000ZZZZZZZZZZ")
      expect(unknown.status, unknown.text).toBe(404)
      expectError(unknown, 404, "not_found")
      expectError(await legacy("shop-a"), 404, "not_found")
    })
  })
})
