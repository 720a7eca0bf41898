/**
 * The payment routes' wire contract as the bench uses it (headers, bodies, expected
 * answers), and the setup calls made over plain fetch. A route the server does not
 * serve yet fails here with a message that says so, before any load is sent.
 */

export const BENCH_API_KEY = "bench_partner_key_0123456789"

/** A production-shaped network configuration; a throwaway key, an RPC nothing calls here. */
export const BENCH_PAY_CONFIG = {
  networks: [
    {
      chainId: "eip155:8453",
      name: "Base",
      rpcUrl: "http://127.0.0.1:9/",
      collectorKey: `0x${"11".repeat(32)}`,
      tokens: [
        {
          asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          symbol: "USDC",
          name: "USD Coin",
          decimals: 6,
          priceCurrency: "USD"
        }
      ]
    }
  ]
}

/** A server under test, with the merchant the bench's payments belong to. */
export interface Target {
  readonly name: string
  readonly url: string
  readonly merchantId: string
}

export const paymentHeaders = (target: Target): Record<string, string> => ({
  "Api-Key": BENCH_API_KEY,
  "Merchant-Id": target.merchantId,
  "Content-Type": "application/json"
})

// An hour's lifetime, so no payment expires (and ends a long-poll) during the bench.
export const paymentBody = (n: number): string =>
  JSON.stringify({
    referenceId: `order-${n}`,
    amount: { unit: "iso4217/USD", value: "1050" },
    expiresAt: Math.floor(Date.now() / 1000) + 3600
  })

export const statusPath = (paymentId: string, maxPollMs?: number): string =>
  `/v1/payments/${encodeURIComponent(paymentId)}/status${
    maxPollMs === undefined ? "" : `?maxPollMs=${maxPollMs}`
  }`

const call = async (
  target: Target,
  method: "GET" | "POST",
  path: string,
  expected: number,
  options: { readonly headers?: Record<string, string>; readonly body?: string } = {}
): Promise<Record<string, unknown>> => {
  const response = await fetch(target.url + path, {
    method,
    headers: options.headers ?? paymentHeaders(target),
    ...(options.body === undefined ? {} : { body: options.body })
  })
  const text = await response.text()
  if (response.status === expected) return JSON.parse(text) as Record<string, unknown>
  const route = `${method} ${path.replace(/pay_\w+/, "{id}").replace(/\?.*/, "")}`
  if (response.status === 404) {
    throw new Error(
      `${target.name} answers 404 for ${route}: the route does not exist there ` +
        `(have the payment routes landed?) or did not find what it was given. Body: ${text}`
    )
  }
  throw new Error(
    `${target.name}: ${route} answered ${response.status}, expected ${expected}: ${text}`
  )
}

/** The engine's own merchant creation, which the bench needs before any payment. */
export const createMerchant = async (name: string, url: string): Promise<string> => {
  const target = { name, url, merchantId: "" }
  const body = await call(target, "POST", "/v1/merchants", 201, {
    headers: {
      "Api-Key": BENCH_API_KEY,
      "Idempotency-Key": `bench-merchant-${Date.now()}`,
      "Content-Type": "application/json"
    },
    body: JSON.stringify({ merchantName: "Bench Shop", merchantEmail: "bench@shop.example" })
  })
  const id = (body.merchant as { id?: unknown } | undefined)?.id
  if (typeof id !== "string") throw new Error(`${name}: no merchant.id in ${JSON.stringify(body)}`)
  return id
}

export const createPayment = async (target: Target, n: number): Promise<string> => {
  const body = await call(target, "POST", "/v1/payments", 201, { body: paymentBody(n) })
  if (typeof body.paymentId !== "string" || body.status !== "requires_action") {
    throw new Error(`${target.name}: unexpected create answer ${JSON.stringify(body)}`)
  }
  return body.paymentId
}

export const paymentStatus = async (target: Target, paymentId: string): Promise<string> => {
  const body = await call(target, "GET", statusPath(paymentId), 200)
  if (typeof body.status !== "string") {
    throw new Error(`${target.name}: unexpected status answer ${JSON.stringify(body)}`)
  }
  return body.status
}

export const cancelPayment = async (target: Target, paymentId: string): Promise<void> => {
  const path = `/v1/payments/${encodeURIComponent(paymentId)}/cancel`
  const body = await call(target, "POST", path, 200, {
    headers: { "Api-Key": BENCH_API_KEY, "Merchant-Id": target.merchantId }
  })
  if (body.status !== "cancelled") {
    throw new Error(`${target.name}: unexpected cancel answer ${JSON.stringify(body)}`)
  }
}

/** Runs `task` for 0..count-1, at most `concurrency` at a time, results in order. */
export const inParallel = async <A>(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<A>
): Promise<Array<A>> => {
  const results = new Array<A>(count)
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      results[i] = await task(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return results
}
