/**
 * `npm run bench:list [-- sqlite|postgres]`: listing and statistics over a large account.
 * Seeds 1,000,000 payments of one partner (200 merchants, about 100,000 buyers, 12 months)
 * through the real store ports (`PaymentStore.insert`, then `transition` to succeed), so
 * whatever the stores maintain on a write is maintained here too; then starts the
 * standalone server on that database and times `GET /v1/payments` over loopback, one
 * request at a time: a merchant's month (a dashboard), the whole account, each list filter
 * (reference search, network, token symbol, asset) on the whole account and within a
 * merchant's month, and the second page of each through its cursor. Every answer's
 * statistics are checked against what was seeded; the table gives each filter's matches and
 * their share of the payments. Bounded in time; removes its files and its PostgreSQL schema whatever happens.
 * BENCH_LIST_PAYMENTS and BENCH_LIST_REQUESTS shrink a run; PAY_BENCH_PG names the server
 * (default postgres://postgres@127.0.0.1:5432/test); BENCH_LIST_KEEP=1 leaves the seeded
 * database in place (its file or schema is printed) for looking at query plans by hand.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { SqlClient } from "@effect/sql"
import {
  type Caip10,
  type Caip19,
  findCurrency,
  type MerchantId,
  MerchantStore,
  type PartnerId,
  type Payment,
  type PaymentId,
  type PaymentStatus,
  PaymentStore
} from "@pay/core"
import * as PgStorage from "@pay/storage-postgres"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect, Option } from "effect"
import { BENCH_API_KEY, inParallel } from "./client.js"
import { killAllNow, ROOT, type ServerProcess, startServer } from "./server-process.js"

export type ListingStore = "sqlite" | "postgres"

export interface LatencySummary {
  readonly name: string
  /** The mean number of payments the shape's filter matched (its first page's rows). */
  readonly matches?: number
  readonly requests: number
  readonly p50Ms: number
  readonly p95Ms: number
  readonly maxMs: number
}

export interface ListingFigures {
  readonly store: ListingStore
  readonly payments: number
  readonly succeeded: number
  readonly customers: number
  readonly merchants: number
  readonly seedSeconds: number
  readonly queries: ReadonlyArray<LatencySummary>
}

export interface ListingOptions {
  readonly payments?: number
  readonly requests?: number
}

const DAY = 86_400_000
export const MERCHANTS = 200
const BUYERS = 100_000
const BATCH = 10_000
/** Concurrent seeding transactions on PostgreSQL; each owns the merchants and buyers ≡ w. */
const PG_WORKERS = 4
/** Payments written at once on SQLite: a full batch of its group commit (128) and more. */
const SQLITE_WRITERS = 512
const WARMUP_REQUESTS = 3
export const DEFAULT_PG = "postgres://postgres@127.0.0.1:5432/test"

// --- The data set: every payment a pure function of its index, so nothing is held in memory.

/** A 32-bit hash of (index, salt): the data set's only randomness, repeatable. */
const hash = (k: number, salt: number) => {
  let x = Math.imul(k ^ (salt * 0x9e3779b9), 0x85ebca6b) ^ 0x27d4eb2f
  x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d)
  x = Math.imul(x ^ (x >>> 12), 0x297a2d39)
  return (x ^ (x >>> 15)) >>> 0
}
const uniform = (k: number, salt: number) => hash(k, salt) / 2 ** 32

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const base62 = (n: number, width: number) => {
  let out = ""
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}
/** An id as the engine makes them: 8 characters of creation time, then 12 unique ones. */
const paymentId = (k: number, at: number) =>
  `pay_${base62(at, 8)}${base62(k, 6)}${base62(hash(k, 9), 6)}` as PaymentId

const USD = { kind: "fiat", currency: findCurrency("USD")! } as const
const EUR = { kind: "fiat", currency: findCurrency("EUR")! } as const
export const TOKENS = [
  "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
  "eip155:42161/erc20:0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
] as ReadonlyArray<string> as ReadonlyArray<Caip19>
/** The second symbol of the data set, on Ethereum: one payment in twenty. */
export const USDT = "eip155:1/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7" as Caip19
const USDT_SHARE = 20

interface Seeded {
  readonly payment: Payment
  /** Present when the payment then succeeds through a transition. */
  readonly succeedAt?: Date
  readonly buyer?: number
}

export const makeDataset = (count: number, now: number) => {
  const start = now - 365 * DAY
  const step = (365 * DAY) / count
  const merchantOf = (k: number) => hash(k, 1) % MERCHANTS
  const at = (k: number) => Math.floor(start + k * step)
  /** USDC on one of three chains, or (one in USDT_SHARE) USDT on Ethereum. */
  const tokenOf = (k: number) =>
    hash(k, 10) % USDT_SHARE === 0 ? USDT : TOKENS[hash(k, 3) % TOKENS.length]!
  /** The token a payment was paid in: only paid ones (succeeded or failed) have one. */
  const paidTokenOf = (k: number) => {
    const seeded = payment(k, "" as PartnerId, [])
    return seeded.payment.tokenAmount?.asset
  }
  const payment = (k: number, partnerId: PartnerId, merchants: ReadonlyArray<MerchantId>) => {
    const created = at(k)
    const m = merchantOf(k)
    const roll = uniform(k, 2)
    const token = tokenOf(k)
    const unitRoll = uniform(k, 4)
    const tokenDenominated = unitRoll >= 0.8
    const amount = tokenDenominated
      ? {
          unit: { kind: "token" as const, asset: token },
          value: BigInt(1_000_000 + (hash(k, 5) % 500_000_000))
        }
      : { unit: unitRoll < 0.7 ? USD : EUR, value: BigInt(100 + (hash(k, 5) % 100_000)) }
    // Pending payments are recent; an old unpaid one has expired long ago.
    const status: PaymentStatus =
      roll < 0.6
        ? "succeeded"
        : roll < 0.73
          ? "expired"
          : roll < 0.86
            ? "cancelled"
            : roll < 0.95
              ? "failed"
              : created >= now - DAY
                ? "requires_action"
                : "expired"
    const paid = status === "succeeded" || status === "failed"
    // Buyers are spread over every merchant with the same residue mod PG_WORKERS, so the
    // concurrent PostgreSQL batches never touch the same aggregate rows.
    const raw = hash(k, 6) % BUYERS
    const buyer = Math.min(BUYERS - 1, raw - (raw % PG_WORKERS) + (m % PG_WORKERS))
    const chain = token.slice(0, token.indexOf("/"))
    const base: Payment = {
      id: paymentId(k, created),
      partnerId,
      merchantId: merchants[m] ?? ("" as MerchantId),
      referenceId: `ORDER-${k}`,
      amount,
      status: status === "succeeded" ? "processing" : status,
      failureCode: status === "failed" ? "declined_user" : null,
      cancelledReason: status === "cancelled" ? "cancelled_by_merchant" : null,
      expiresAt: new Date(status === "requires_action" ? now + DAY : created + 300_000),
      createdAt: new Date(created),
      updatedAt: new Date(created),
      finalAt: status === "succeeded" || status === "requires_action" ? null : new Date(created),
      checkout: null,
      tokenAmount: paid
        ? { asset: token, value: tokenDenominated ? amount.value : amount.value * 10_000n }
        : null,
      buyer: paid
        ? {
            account: `${chain}:0x${buyer.toString(16).padStart(40, "0")}` as Caip10,
            providerName: "Bench Wallet",
            providerIcon: null
          }
        : null,
      transaction: paid
        ? { networkId: chain, hash: `0x${hash(k, 7).toString(16).padStart(64, "0")}`, nonce: k }
        : null,
      txId: null,
      refund: null,
      fees: null,
      settlement: null,
      livemode: true
    }
    return status === "succeeded"
      ? ({ payment: base, succeedAt: new Date(created + 20_000), buyer } satisfies Seeded)
      : ({ payment: base } satisfies Seeded)
  }
  /** Rows, succeeded payments and their distinct buyers among payments `k` selects. */
  const expected = (
    selects: (k: number, at: number) => boolean,
    window: { readonly from: number; readonly to: number } = { from: start, to: now + 1 }
  ) => {
    let rows = 0
    let transactions = 0
    const buyers = new Set<number>()
    const first = Math.max(0, Math.floor((window.from - start) / step) - 1)
    const last = Math.min(count, Math.ceil((window.to - start) / step) + 1)
    for (let k = first; k < last; k++) {
      if (!selects(k, at(k))) continue
      rows++
      const seeded = payment(k, "" as PartnerId, [])
      if (seeded.succeedAt === undefined) continue
      transactions++
      if (seeded.buyer !== undefined) buyers.add(seeded.buyer)
    }
    return { rows, transactions, customers: buyers.size }
  }
  return { count, merchantOf, paidTokenOf, payment, expected }
}

export type Dataset = ReturnType<typeof makeDataset>

export interface SeedTotals {
  succeeded: number
  readonly buyers: Set<number>
}

const write = (store: PaymentStore["Type"], seeded: Seeded, totals: SeedTotals) =>
  Effect.gen(function* () {
    yield* store.insert(seeded.payment)
    if (seeded.succeedAt === undefined) return
    const done = yield* store.transition(seeded.payment.id, "processing", {
      status: "succeeded",
      at: seeded.succeedAt,
      finalAt: seeded.succeedAt,
      txId: seeded.payment.transaction?.hash ?? "0x0"
    })
    if (Option.isNone(done)) throw new Error(`payment ${seeded.payment.id} did not succeed`)
    totals.succeeded++
    if (seeded.buyer !== undefined) totals.buyers.add(seeded.buyer)
  })

const partnerOf = (merchant: MerchantId) =>
  Effect.flatMap(MerchantStore, (store) => store.find(merchant)).pipe(
    Effect.map((m) => Option.getOrThrow(m).partnerId)
  )

const progress = (done: number, startedAt: number) => {
  if (done % 100_000 !== 0) return
  const seconds = (performance.now() - startedAt) / 1000
  console.log(`    ${done.toLocaleString("en-US")} payments written, ${seconds.toFixed(0)} s`)
}

/**
 * SQLite: the store's writes go through its group commit (a batch of concurrent writes per
 * transaction, each in its own savepoint), so many payments are written at once; each
 * payment's insert and success stay in order.
 */
export const seedSqlite = (filename: string, data: Dataset, merchants: ReadonlyArray<MerchantId>) =>
  Effect.gen(function* () {
    const store = yield* PaymentStore
    const partnerId = yield* partnerOf(merchants[0]!)
    const totals: SeedTotals = { succeeded: 0, buyers: new Set() }
    const startedAt = performance.now()
    for (let from = 0; from < data.count; from += BATCH) {
      const ks = Array.from({ length: Math.min(BATCH, data.count - from) }, (_, i) => from + i)
      yield* Effect.forEach(
        ks,
        (k) => write(store, data.payment(k, partnerId, merchants), totals),
        { concurrency: SQLITE_WRITERS, discard: true }
      )
      progress(Math.min(from + BATCH, data.count), startedAt)
    }
    return totals
  }).pipe(Effect.provide(SqliteStorage.layer({ filename })), Effect.scoped)

/**
 * PostgreSQL: PG_WORKERS transactions at once, each on its own share of merchants and buyers,
 * in batches of BATCH; the seeding session does not wait for each commit's flush.
 */
export const seedPostgres = (url: string, data: Dataset, merchants: ReadonlyArray<MerchantId>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* PaymentStore
    const partnerId = yield* partnerOf(merchants[0]!)
    const totals: SeedTotals = { succeeded: 0, buyers: new Set() }
    const startedAt = performance.now()
    let written = 0
    const worker = (w: number) =>
      Effect.gen(function* () {
        let batch: Array<number> = []
        const flush = (ks: ReadonlyArray<number>) =>
          sql.withTransaction(
            Effect.zipRight(
              sql`SET LOCAL synchronous_commit = off`,
              Effect.forEach(
                ks,
                (k) => write(store, data.payment(k, partnerId, merchants), totals),
                { discard: true }
              )
            )
          )
        for (let k = 0; k < data.count; k++) {
          if (data.merchantOf(k) % PG_WORKERS !== w) continue
          batch.push(k)
          if (batch.length === BATCH) {
            yield* flush(batch)
            written += batch.length
            progress(written, startedAt)
            batch = []
          }
        }
        if (batch.length > 0) {
          yield* flush(batch)
          written += batch.length
        }
      })
    yield* Effect.forEach(
      Array.from({ length: PG_WORKERS }, (_, w) => w),
      worker,
      {
        concurrency: PG_WORKERS,
        discard: true
      }
    )
    // What autovacuum would have done by now on tables this size: planner statistics and
    // the visibility map (index-only scans). This schema's tables only.
    const tables = yield* sql<{ readonly name: string }>`SELECT tablename AS name FROM pg_tables
      WHERE schemaname = current_schema()`
    for (const { name } of tables) yield* sql`VACUUM ANALYZE ${sql(name)}`
    return totals
  }).pipe(Effect.provide(PgStorage.layer({ url, maxConnections: PG_WORKERS + 1 })), Effect.scoped)

// --- PostgreSQL schema of the run

export const withSearchPath = (url: string, schema: string) => {
  const u = new URL(url)
  u.searchParams.set("options", `-c search_path=${schema}`)
  return u.toString()
}

export const adminRun = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgStorage.clientLayer({ url, maxConnections: 1 })),
      Effect.scoped,
      Effect.asVoid
    )
  )

// --- HTTP

const headers = { "Api-Key": BENCH_API_KEY }

interface ListAnswer {
  readonly data: ReadonlyArray<{ readonly id?: string; readonly paymentId?: string }>
  readonly nextCursor: string | null
  readonly stats: {
    readonly totalRevenue: ReadonlyArray<{ readonly amount: number; readonly currency: string }>
    readonly totalTransactions: number
    readonly totalCustomers: number
  }
}

const timedGet = async (url: string): Promise<{ ms: number; body: ListAnswer }> => {
  const started = performance.now()
  const response = await fetch(url, { headers })
  const text = await response.text()
  const ms = performance.now() - started
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`)
  return { ms, body: JSON.parse(text) as ListAnswer }
}

export const createMerchants = async (url: string, count: number): Promise<Array<MerchantId>> =>
  inParallel(count, 10, async (i) => {
    const response = await fetch(`${url}/v1/merchants`, {
      method: "POST",
      headers: {
        ...headers,
        "Idempotency-Key": `bench-list-merchant-${i}`,
        "Content-Type": "application/json"
      },
      body: JSON.stringify({ merchantName: `Shop ${i}`, merchantEmail: `shop${i}@bench.example` })
    })
    const body = (await response.json()) as { merchant?: { id?: string } }
    if (response.status !== 201 || body.merchant?.id === undefined) {
      throw new Error(`creating merchant ${i} answered ${response.status}`)
    }
    return body.merchant.id as MerchantId
  })

export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN

const summarize = (name: string, samples: ReadonlyArray<number>): LatencySummary => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    name,
    requests: sorted.length,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    maxMs: sorted.at(-1) ?? Number.NaN
  }
}

/** Calendar months (UTC) wholly inside the seeded year, newest first. */
const wholeMonths = (now: number) => {
  const months: Array<{ readonly from: string; readonly to: string }> = []
  const d = new Date(now)
  for (let back = 1; back <= 11; back++) {
    const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1)
    const to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back + 1, 1)
    months.push({ from: new Date(from).toISOString(), to: new Date(to).toISOString() })
  }
  return months
}

export const startEngine = (database: string) =>
  startServer({
    name: "engine",
    command: process.execPath,
    args: ["--enable-source-maps", "examples/standalone/dist/main.mjs"],
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      PAY_DATABASE: database,
      PAY_BOOTSTRAP_API_KEY: BENCH_API_KEY
    },
    startTimeoutMs: 120_000
  })

interface Expected {
  readonly rows: number
  readonly transactions: number
  readonly customers: number
}

const measureQueries = async (
  server: ServerProcess,
  data: Dataset,
  merchants: ReadonlyArray<MerchantId>,
  requests: number,
  now: number
): Promise<Array<LatencySummary>> => {
  const months = wholeMonths(now)
  const base = `${server.url}/v1/payments`
  const whole = data.expected(() => true)
  const dashboard = (i: number) => ({
    month: months[i % months.length]!,
    merchant: (i * 7) % merchants.length
  })
  type Shape = {
    readonly name: string
    readonly url: (i: number) => string
    readonly expected: (i: number) => Expected
  }
  /** A merchant's calendar month, at UTC or at another offset (partial days at both ends). */
  const monthOfMerchant = (name: string, shiftMs: number): Shape => {
    const window = (i: number) => {
      const { month, merchant } = dashboard(i)
      const from = Date.parse(month.from) - shiftMs
      const to = Date.parse(month.to) - shiftMs
      return { merchant, from, to }
    }
    return {
      name,
      url: (i) => {
        const { merchant, from, to } = window(i)
        const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString())
        return `${base}?merchantId=${merchants[merchant]}&startTs=${iso(from)}&endTs=${iso(to)}`
      },
      expected: (i) => {
        const { merchant, from, to } = window(i)
        return data.expected((k, at) => at >= from && at < to && data.merchantOf(k) === merchant, {
          from,
          to
        })
      }
    }
  }
  /**
   * The list filters (issue 18), each on the whole account and within a merchant's month.
   * References are `ORDER-${k}`: a prefix two digits short of the longest matches about 111
   * payments, the reference of one recent payment (in lower case) that one, and `ORDER-1` one
   * in nine (the cost of a search that is hardly one). Networks and tokens are those of paid
   * payments (succeeded or failed): Ethereum carries USDC and USDT, USDT is one in twenty.
   */
  const digits = String(data.count - 1).length
  const referenceOf = (k: number) => `order-${k}`
  const filters: ReadonlyArray<{
    readonly name: string
    readonly query: string
    readonly selects: (k: number) => boolean
  }> = [
    ...[
      `ORDER-${"1234".slice(0, Math.max(1, digits - 2))}`,
      `order-${Math.max(0, data.count - 12_345)}`,
      "ORDER-1"
    ].map((needle) => ({
      name: `referenceId=${needle}`,
      query: `referenceId=${encodeURIComponent(needle)}`,
      selects: (k: number) => referenceOf(k).includes(needle.toLowerCase())
    })),
    {
      name: "network=eip155:1",
      query: "network=eip155:1",
      selects: (k) => data.paidTokenOf(k)?.startsWith("eip155:1/") === true
    },
    {
      name: "token_symbol=USDT",
      query: "token_symbol=USDT",
      selects: (k) => data.paidTokenOf(k) === USDT
    },
    {
      name: "asset=USDC on Base",
      query: `asset=${encodeURIComponent(TOKENS[0]!)}`,
      selects: (k) => data.paidTokenOf(k) === TOKENS[0]
    }
  ]
  const filterShapes = filters.flatMap((filter): ReadonlyArray<Shape> => {
    const all = data.expected(filter.selects)
    const dashboardShape = monthOfMerchant("", 0)
    const windowed = new Map<number, Expected>()
    return [
      {
        name: `${filter.name}, whole account`,
        url: () => `${base}?${filter.query}`,
        expected: () => all
      },
      {
        name: `${filter.name}, 1 merchant, 1 month`,
        url: (i) => `${dashboardShape.url(i)}&${filter.query}`,
        expected: (i) => {
          const key = i % (months.length * merchants.length)
          let found = windowed.get(key)
          if (found === undefined) {
            const { month, merchant } = dashboard(i)
            const [from, to] = [Date.parse(month.from), Date.parse(month.to)]
            found = data.expected(
              (k, at) =>
                at >= from && at < to && data.merchantOf(k) === merchant && filter.selects(k),
              { from, to }
            )
            windowed.set(key, found)
          }
          return found
        }
      }
    ]
  })
  const shapes: ReadonlyArray<Shape> = [
    monthOfMerchant("dashboard: 1 merchant, 1 month", 0),
    monthOfMerchant("dashboard: 1 merchant, month at UTC+02:00", 2 * 3600_000),
    { name: "whole account", url: () => base, expected: () => whole },
    {
      name: "whole account, sortBy=amount",
      url: () => `${base}?sortBy=amount`,
      expected: () => whole
    },
    ...filterShapes
  ]
  const results: Array<LatencySummary> = []
  for (const shape of shapes) {
    const first: Array<number> = []
    const second: Array<number> = []
    let matched = 0
    for (let i = 0; i < WARMUP_REQUESTS + requests; i++) {
      const url = shape.url(i)
      const page1 = await timedGet(url)
      const stats = page1.body.stats
      const want = shape.expected(i)
      if (
        stats.totalTransactions !== want.transactions ||
        stats.totalCustomers !== want.customers
      ) {
        throw new Error(
          `${shape.name}: ${stats.totalTransactions} transactions and ${stats.totalCustomers} ` +
            `customers, seeded ${want.transactions} and ${want.customers} (${url})`
        )
      }
      const cursor = page1.body.nextCursor
      if (
        page1.body.data.length !== Math.min(50, want.rows) ||
        (cursor === null) !== want.rows <= 50
      ) {
        throw new Error(`${shape.name}: a first page of ${page1.body.data.length} rows (${url})`)
      }
      const page2 =
        cursor === null
          ? undefined
          : await timedGet(
              `${url}${url.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`
            )
      if (page2 !== undefined && JSON.stringify(page2.body.stats) !== JSON.stringify(stats)) {
        throw new Error(`${shape.name}: the second page's statistics differ from the first's`)
      }
      if (i >= WARMUP_REQUESTS) {
        matched += want.rows
        first.push(page1.ms)
        if (page2 !== undefined) second.push(page2.ms)
      }
    }
    const matches = matched / requests
    results.push({ ...summarize(`${shape.name}, page 1`, first), matches })
    results.push({ ...summarize(`${shape.name}, page 2 (cursor)`, second), matches })
  }
  return results
}

/** Seeds a database on `store`, serves it, and times the listings; cleans up after itself. */
export const measureListing = async (
  store: ListingStore,
  options: ListingOptions = {}
): Promise<ListingFigures> => {
  const count = options.payments ?? 1_000_000
  const requests = options.requests ?? 30
  const now = Date.now()
  const dir = mkdtempSync(join(tmpdir(), "pay-bench-list-"))
  const pgBase = process.env.PAY_BENCH_PG ?? DEFAULT_PG
  const schema = `bench_list_${now.toString(36)}`
  const database = store === "sqlite" ? join(dir, "list.sqlite") : withSearchPath(pgBase, schema)
  let server: ServerProcess | undefined
  let cleaned: Promise<void> | undefined
  const cleanUp = () => {
    cleaned ??= (async () => {
      await server?.stop()
      const keep = process.env.BENCH_LIST_KEEP === "1"
      if (keep) console.log(`  kept: ${database}`)
      if (!keep || store === "postgres") rmSync(dir, { recursive: true, force: true })
      if (keep) return
      if (store === "postgres") {
        await adminRun(pgBase, `DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((error: unknown) =>
          console.error(`could not drop schema ${schema}: ${String(error)}`)
        )
      }
    })()
    return cleaned
  }
  cleanUps.add(cleanUp)
  try {
    if (store === "postgres") await adminRun(pgBase, `CREATE SCHEMA ${schema}`)
    // The first start migrates the empty database and makes the partner with the bench key.
    server = await startEngine(database)
    const merchants = await createMerchants(server.url, MERCHANTS)
    await server.stop()
    server = undefined

    console.log(`  seeding ${count.toLocaleString("en-US")} payments on ${store}…`)
    const data = makeDataset(count, now)
    const started = performance.now()
    const totals = await Effect.runPromise<SeedTotals, unknown>(
      store === "sqlite"
        ? seedSqlite(database, data, merchants)
        : seedPostgres(database, data, merchants)
    )
    const seedSeconds = (performance.now() - started) / 1000

    server = await startEngine(database)
    console.log(
      `  measuring ${requests} requests of each shape (after ${WARMUP_REQUESTS} unmeasured)…`
    )
    const queries = await measureQueries(server, data, merchants, requests, now)
    return {
      store,
      payments: count,
      succeeded: totals.succeeded,
      customers: totals.buyers.size,
      merchants: merchants.length,
      seedSeconds,
      queries
    }
  } finally {
    await cleanUp()
    cleanUps.delete(cleanUp)
  }
}

/** What an interrupted run still has to remove (servers, files, schemas). */
const cleanUps = new Set<() => Promise<void>>()

export const formatListing = (f: ListingFigures): string => {
  const n = (x: number, digits = 0) =>
    x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const lines = [
    "",
    `GET /v1/payments on ${f.store}: ${n(f.payments)} payments of one partner ` +
      `(${n(f.succeeded)} succeeded, ${n(f.customers)} customers), ${n(f.merchants)} merchants, 12 months`,
    `  seeded through the store ports in ${n(f.seedSeconds, 1)} s ` +
      `(${n(f.payments / f.seedSeconds)} payments/s)`,
    `  ${"query (first page of 50 + stats)".padEnd(66)}${"matches".padStart(9)}` +
      `${"share".padStart(11)}${"n".padStart(4)}` +
      `${"p50 ms".padStart(10)}${"p95 ms".padStart(10)}${"max ms".padStart(10)}`
  ]
  const ms = (x: number) => (Number.isNaN(x) ? "-" : n(x, 1))
  for (const q of f.queries) {
    const percent = q.matches === undefined ? undefined : (100 * q.matches) / f.payments
    const share =
      percent === undefined
        ? ""
        : `${percent >= 1 || percent === 0 ? percent.toFixed(1) : percent.toPrecision(2)}%`
    lines.push(
      `  ${q.name.padEnd(66)}` +
        `${(q.matches === undefined ? "" : n(q.matches, q.matches % 1 === 0 ? 0 : 1)).padStart(9)}` +
        `${share.padStart(11)}${String(q.requests).padStart(4)}${ms(q.p50Ms).padStart(10)}` +
        `${ms(q.p95Ms).padStart(10)}${ms(q.maxMs).padStart(10)}`
    )
  }
  return lines.join("\n")
}

const envCount = (name: string): number | undefined => {
  const raw = process.env[name]
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`)
  return value
}

const RUN_DEADLINE_MS = 60 * 60_000

const main = async () => {
  const which = process.argv[2]
  if (which !== undefined && which !== "sqlite" && which !== "postgres") {
    throw new Error("usage: npm run bench:list [-- sqlite|postgres]")
  }
  process.on("exit", killAllNow)
  const abandon = async (why: string, code: number) => {
    console.error(why)
    await Promise.race([Promise.all([...cleanUps].map((f) => f())), sleep(20_000)])
    process.exit(code)
  }
  process.on("SIGINT", () => void abandon("bench:list: interrupted", 130))
  process.on("SIGTERM", () => void abandon("bench:list: terminated", 143))
  setTimeout(
    () =>
      void abandon(`bench:list: still running after ${RUN_DEADLINE_MS / 60_000} min, stopped`, 1),
    RUN_DEADLINE_MS
  ).unref()
  execFileSync(process.execPath, ["examples/build.mjs", "main"], { cwd: ROOT, stdio: "inherit" })
  console.log(
    `Machine: ${cpus()[0]?.model ?? "unknown"}, ${cpus().length} cores, Node ${process.version}`
  )
  const options = {
    ...(envCount("BENCH_LIST_PAYMENTS") === undefined
      ? {}
      : { payments: envCount("BENCH_LIST_PAYMENTS")! }),
    ...(envCount("BENCH_LIST_REQUESTS") === undefined
      ? {}
      : { requests: envCount("BENCH_LIST_REQUESTS")! })
  }
  const stores: ReadonlyArray<ListingStore> = which === undefined ? ["sqlite", "postgres"] : [which]
  for (const store of stores) {
    const figures = await measureListing(store, options)
    console.log(formatListing(figures))
    await sleep(100)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`bench:list failed: ${error instanceof Error ? error.stack : String(error)}`)
      process.exit(1)
    }
  )
}
