/**
 * The Promise facade against a scripted fetch: the key header, idempotency
 * keys and their reuse across retries, which failures are retried, and how
 * each kind of failure rejects. The end-to-end suite
 * (examples/standalone/test/client.e2e.test.ts) runs it against the real server.
 */
import { describe, expect, it } from "vitest"
import { PayApiError, PayNetworkError, PayResponseError } from "./Errors.js"
import { createPayClient } from "./PromiseClient.js"

const MERCHANT = {
  id: "mrch_0000000000AAAAAAAAAA",
  name: "Shop",
  email: "billing@shop.example",
  status: "active",
  iconUrl: null,
  createdAt: "2026-01-01T00:00:00.000Z"
}

interface Sent {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: unknown
}

type Answer = Response | "network-error" | "hang"

/** A fetch that answers from `answers` in turn (the last one repeats) and records each request. */
const scripted = (...answers: ReadonlyArray<() => Answer>) => {
  const sent: Array<Sent> = []
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const body = init?.body
    const text =
      body === undefined || body === null
        ? undefined
        : body instanceof Uint8Array
          ? new TextDecoder().decode(body)
          : String(body)
    sent.push({
      method: init?.method ?? "GET",
      url: String(input),
      headers,
      body: text === undefined ? undefined : JSON.parse(text)
    })
    const answer = answers[Math.min(sent.length, answers.length) - 1]!()
    if (answer === "network-error") throw new TypeError("fetch failed")
    if (answer === "hang") {
      return new Promise((_, reject) =>
        init?.signal?.addEventListener("abort", () => reject(new Error("aborted")))
      )
    }
    return answer
  }
  return { fetch: fetch as typeof globalThis.fetch, sent }
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

const client = (fetch: typeof globalThis.fetch, retries = 2) =>
  createPayClient({
    baseUrl: "http://pay.test/",
    apiKey: "key_123",
    fetch,
    retries,
    retryDelayMs: 1
  })

const newMerchant = { merchantName: "Shop", merchantEmail: "billing@shop.example" }

describe("createPayClient", () => {
  it("sends the key, the body and a generated idempotency key; answers the decoded body", async () => {
    const { fetch, sent } = scripted(() => json(201, { merchant: MERCHANT }))
    const result = await client(fetch).merchants.create(newMerchant)
    expect(result).toEqual({ merchant: MERCHANT })
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatchObject({
      method: "POST",
      url: "http://pay.test/v1/merchants",
      body: newMerchant,
      headers: { "api-key": "key_123", "content-type": "application/json" }
    })
    expect(sent[0]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
    // No trace ids leave for the engine unless asked for.
    expect(Object.keys(sent[0]!.headers).filter((h) => h === "traceparent" || h === "b3")).toEqual(
      []
    )
  })

  it("a fresh key per call; the caller's key as given", async () => {
    const { fetch, sent } = scripted(() => json(201, { merchant: MERCHANT }))
    const pay = client(fetch)
    await pay.merchants.create(newMerchant)
    await pay.merchants.create(newMerchant)
    await pay.merchants.create(newMerchant, { idempotencyKey: "order-42" })
    const keys = sent.map((s) => s.headers["idempotency-key"])
    expect(new Set(keys).size).toBe(3)
    expect(keys[2]).toBe("order-42")
  })

  it("retries a create after a network failure, a 5xx and an in-progress 409, with the same key", async () => {
    const { fetch, sent } = scripted(
      () => "network-error",
      () => json(500, { code: "internal_error", message: "Internal Server Error" }),
      () => json(409, { code: "idempotency_conflict", message: "still being processed" }),
      () => json(201, { merchant: MERCHANT })
    )
    const result = await client(fetch, 3).merchants.create(newMerchant)
    expect(result.merchant.id).toBe(MERCHANT.id)
    expect(sent).toHaveLength(4)
    expect(new Set(sent.map((s) => s.headers["idempotency-key"])).size).toBe(1)
  })

  it("when the retries are spent, the rejection carries the key to retry with", async () => {
    const { fetch, sent } = scripted(() => "network-error")
    const error = await client(fetch, 2)
      .payments.create("mrch_0000000000AAAAAAAAAA", {
        referenceId: "order-1",
        amount: { unit: "iso4217/USD", value: "1050" }
      })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PayNetworkError)
    expect(error).toMatchObject({ reason: "transport", operation: "payments.create" })
    expect(sent).toHaveLength(3)
    expect((error as PayNetworkError).idempotencyKey).toBe(sent[0]!.headers["idempotency-key"])
    expect(sent[0]!.headers["merchant-id"]).toBe("mrch_0000000000AAAAAAAAAA")
    expect(sent[0]!.body).toEqual({
      referenceId: "order-1",
      amount: { unit: "iso4217/USD", value: "1050" }
    })
  })

  it("a declared 4xx: PayApiError with status, code, message and issues, not retried", async () => {
    const { fetch, sent } = scripted(() =>
      json(400, {
        code: "params_validation",
        message: "Invalid body",
        issues: [{ field: "merchantName", message: "is taken" }]
      })
    )
    const pay = client(fetch)
    const error = await pay.merchants.create(newMerchant).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PayApiError)
    expect(error).toMatchObject({
      status: 400,
      code: "params_validation",
      message: "Invalid body",
      issues: [{ field: "merchantName", message: "is taken" }],
      source: "server",
      operation: "merchants.create"
    })
    expect(pay.merchants.create.isError(error)).toBe(true)
    expect(pay.merchants.get.isError(error)).toBe(false)
    expect(sent).toHaveLength(1)
  })

  it("the same code at two statuses keeps the status it came with", async () => {
    const { fetch } = scripted(
      () => json(409, { code: "invalid_state", message: "not succeeded" }),
      () => json(400, { code: "invalid_state", message: "cannot cancel" })
    )
    const pay = client(fetch, 0)
    const refund = await pay.refunds.create("pay_0000000000AAAAAAAAAA").catch((e: unknown) => e)
    expect(refund).toMatchObject({ status: 409, code: "invalid_state" })
    const cancel = await pay.payments
      .cancel("pay_0000000000AAAAAAAAAA", { merchantId: MERCHANT.id })
      .catch((e: unknown) => e)
    expect(cancel).toMatchObject({ status: 400, code: "invalid_state" })
  })

  it("an undeclared status: PayResponseError with the body; a read is not retried", async () => {
    const { fetch, sent } = scripted(() => new Response("Bad Gateway", { status: 502 }))
    const error = await client(fetch)
      .merchants.get(MERCHANT.id)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PayResponseError)
    expect(error).toMatchObject({ status: 502, body: "Bad Gateway", operation: "merchants.get" })
    expect(sent).toHaveLength(1)
  })

  it("a success body that breaks the definition: PayResponseError", async () => {
    const { fetch } = scripted(() => json(200, { merchant: { id: 1 } }))
    const error = await client(fetch)
      .merchants.get(MERCHANT.id)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PayResponseError)
    expect(error).toMatchObject({ status: 200 })
  })

  it("input the definition refuses is not sent: PayApiError from the client", async () => {
    const { fetch, sent } = scripted(() => json(201, { merchant: MERCHANT }))
    const pay = client(fetch)
    const body = await pay.merchants
      .create({ merchantName: "", merchantEmail: "nope" })
      .catch((e: unknown) => e)
    expect(body).toBeInstanceOf(PayApiError)
    expect(body).toMatchObject({ status: 400, code: "params_validation", source: "client" })
    expect((body as PayApiError).issues.map((i) => i.field).sort()).toEqual([
      "merchantEmail",
      "merchantName"
    ])
    // As the engine answers: a path id that cannot name anything is not found.
    const path = await pay.merchants.get("nope").catch((e: unknown) => e)
    expect(path).toMatchObject({ status: 404, code: "not_found", source: "client" })
    const payment = await pay.payments.get("pay_x").catch((e: unknown) => e)
    expect(payment).toMatchObject({ status: 404, code: "payment_not_found", source: "client" })
    const query = await pay.merchants.list({ limit: 1000 }).catch((e: unknown) => e)
    expect(query).toMatchObject({
      code: "invalid_params",
      issues: [{ field: "limit", message: "must be a whole number from 1 to 100" }]
    })
    expect(sent).toHaveLength(0)
  })

  it("query values: numbers written as strings, defaults from the definition", async () => {
    const { fetch, sent } = scripted(() =>
      json(200, { merchants: [MERCHANT], totalCount: 1, nextCursor: null })
    )
    const pay = client(fetch)
    const page = await pay.merchants.list({ limit: 5, search: "Shop" })
    expect(page.totalCount).toBe(1)
    await pay.merchants.list()
    expect(new URL(sent[0]!.url).searchParams.toString()).toBe("search=Shop&limit=5")
    expect(new URL(sent[1]!.url).searchParams.get("limit")).toBe("20")
  })

  it("an aborted call rejects with PayNetworkError aborted", async () => {
    const { fetch } = scripted(() => "hang")
    const controller = new AbortController()
    const pending = client(fetch)
      .payments.status("pay_0000000000AAAAAAAAAA", {
        merchantId: MERCHANT.id,
        maxPollMs: 30_000,
        signal: controller.signal
      })
      .catch((e: unknown) => e)
    setTimeout(() => controller.abort(), 20)
    const error = await pending
    expect(error).toBeInstanceOf(PayNetworkError)
    expect(error).toMatchObject({ reason: "aborted", operation: "payments.status" })
  })
})
