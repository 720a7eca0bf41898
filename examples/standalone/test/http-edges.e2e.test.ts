/**
 * End to end over loopback against the real standalone server: the parts of
 * the HTTP exchange every route shares (system routes, authentication,
 * versions, body reading, routing and the error shape).
 */
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  DEFAULT_VERSION,
  type E2eServer,
  expectError,
  MAX_BODY_BYTES,
  newKey,
  PARTNER_KEY,
  PREVIEW_VERSION,
  payClient,
  STORES,
  startServer,
  uniqueToken
} from "./e2e-support.js"
import { paymentFor, settledMerchant, walletClient } from "./gateway-support.js"

/** A POST with exactly these headers: no Content-Type unless given (fetch adds one to a string body). */
const postUntyped = (url: string, headers: Record<string, string>, body: string) =>
  new Promise<{ status: number; text: string; body: unknown }>((resolve, reject) => {
    const request = httpRequest(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }
    })
    request.on("error", reject)
    request.on("response", (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
      })
      response.on("end", () => {
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        resolve({ status: response.statusCode ?? 0, text, body: parsed })
      })
    })
    request.end(body)
  })

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let previewKey: string
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
    previewKey = (await createPartner(server, "Preview partner", PREVIEW_VERSION)).apiKey
  })

  afterAll(async () => {
    await server?.stop()
  })

  const validMerchant = { merchantName: "Edge Shop", merchantEmail: "edge@shop.example" }

  describe("system routes", () => {
    it("GET /health answers 200 without a key", async () => {
      const response = await api.get("/health", { key: null })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ status: "ok" })
    })

    it("GET /openapi.json is an OpenAPI 3.1 document listing every partner route", async () => {
      const response = await api.get("/openapi.json", { key: null })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^application\/json\b/)
      const document = response.body
      expect(document.openapi).toMatch(/^3\.1\.\d+$/)
      const operations = (path: string) => Object.keys(document.paths?.[path] ?? {}).sort()
      expect(operations("/v1/merchants")).toEqual(expect.arrayContaining(["get", "post"]))
      expect(operations("/v1/merchants/{merchantId}")).toEqual(
        expect.arrayContaining(["delete", "get", "patch"])
      )
      expect(operations("/v1/merchants/{merchantId}/settlements")).toEqual(
        expect.arrayContaining(["get"])
      )
      expect(operations("/v1/merchants/{merchantId}/settlements/crypto")).toEqual(
        expect.arrayContaining(["post"])
      )
      expect(operations("/v1/merchants/{merchantId}/settlements/crypto/{id}")).toEqual(
        expect.arrayContaining(["delete", "put"])
      )
    })

    it("GET /docs is the reference page: Scalar, from this server, reading /openapi.json", async () => {
      // What it renders is checked in a browser (api-reference.browser.test.ts).
      const response = await api.get("/docs", { key: null })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^text\/html\b/)
      expect(response.headers.get("content-security-policy")).toContain("script-src 'self'")
      expect(response.text).toMatch(/<script src="\/docs\/scalar\.js\?v=[^"]+"><\/script>/)
      expect(response.text).toContain("&quot;url&quot;:&quot;/openapi.json&quot;")
    })
  })

  describe("authentication", () => {
    it("no key: 401 missing_api_key", async () => {
      expectError(await api.get("/v1/merchants", { key: null }), 401, "missing_api_key")
      expectError(
        await api.request("POST", "/v1/merchants", {
          key: null,
          idempotencyKey: newKey(),
          body: validMerchant
        }),
        401,
        "missing_api_key"
      )
    })

    it("an empty Api-Key header: 401 missing_api_key", async () => {
      expectError(await api.get("/v1/merchants", { key: "" }), 401, "missing_api_key")
    })

    it("a wrong key: 401 invalid_api_key", async () => {
      expectError(
        await api.get("/v1/merchants", { key: "e2e_partner_key_0123456780" }),
        401,
        "invalid_api_key"
      )
      expectError(await api.get("/v1/merchants", { key: "short" }), 401, "invalid_api_key")
      expectError(
        await api.get("/v1/merchants", {
          key: "pk_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
        }),
        401,
        "invalid_api_key"
      )
    })

    it("Authorization: Bearer <key> works", async () => {
      const response = await api.get("/v1/merchants", {
        key: null,
        headers: { authorization: `Bearer ${PARTNER_KEY}` }
      })
      expect(response.status, response.text).toBe(200)
      expect(Array.isArray(response.body.merchants)).toBe(true)
    })

    it("Authorization: Bearer with a wrong key: 401 invalid_api_key", async () => {
      expectError(
        await api.get("/v1/merchants", {
          key: null,
          headers: { authorization: "Bearer e2e_partner_key_9999999999" }
        }),
        401,
        "invalid_api_key"
      )
    })

    it("a wrong key is refused before the body is looked at", async () => {
      expectError(
        await api.request("POST", "/v1/merchants", {
          key: "e2e_partner_key_0123456780",
          rawBody: "{not json",
          headers: { "content-type": "application/json" }
        }),
        401,
        "invalid_api_key"
      )
    })
  })

  describe("versions", () => {
    it("without a version header, the partner's pinned 2026-02-18 is echoed in pay-version and wcp-version", async () => {
      const response = await api.get("/v1/merchants")
      expect(response.status).toBe(200)
      expect(response.headers.get("pay-version")).toBe(DEFAULT_VERSION)
      expect(response.headers.get("wcp-version")).toBe(DEFAULT_VERSION)
    })

    it("a partner pinned to the preview version gets it without a header", async () => {
      const response = await api.get("/v1/merchants", { key: previewKey })
      expect(response.status).toBe(200)
      expect(response.headers.get("pay-version")).toBe(PREVIEW_VERSION)
      expect(response.headers.get("wcp-version")).toBe(PREVIEW_VERSION)
    })

    it.each(["Pay-Version", "WCP-Version", "Api-Version"])("%s is accepted", async (header) => {
      const response = await api.get("/v1/merchants", { headers: { [header]: PREVIEW_VERSION } })
      expect(response.status, response.text).toBe(200)
      expect(response.headers.get("pay-version")).toBe(PREVIEW_VERSION)
      expect(response.headers.get("wcp-version")).toBe(PREVIEW_VERSION)
    })

    it("the version is echoed on errors too", async () => {
      const response = await api.get("/v1/merchants/nope", {
        headers: { "Pay-Version": PREVIEW_VERSION }
      })
      expectError(response, 404, "not_found")
      expect(response.headers.get("pay-version")).toBe(PREVIEW_VERSION)
      expect(response.headers.get("wcp-version")).toBe(PREVIEW_VERSION)
    })

    it("Pay-Version wins when the headers disagree", async () => {
      const response = await api.get("/v1/merchants", {
        headers: {
          "Pay-Version": PREVIEW_VERSION,
          "WCP-Version": DEFAULT_VERSION,
          "Api-Version": DEFAULT_VERSION
        }
      })
      expect(response.status).toBe(200)
      expect(response.headers.get("pay-version")).toBe(PREVIEW_VERSION)
      expect(response.headers.get("wcp-version")).toBe(PREVIEW_VERSION)

      const other = await api.get("/v1/merchants", {
        key: previewKey,
        headers: { "Pay-Version": DEFAULT_VERSION, "WCP-Version": PREVIEW_VERSION }
      })
      expect(other.status).toBe(200)
      expect(other.headers.get("pay-version")).toBe(DEFAULT_VERSION)
      expect(other.headers.get("wcp-version")).toBe(DEFAULT_VERSION)
    })

    it("WCP-Version wins over Api-Version", async () => {
      const response = await api.get("/v1/merchants", {
        headers: { "WCP-Version": PREVIEW_VERSION, "Api-Version": DEFAULT_VERSION }
      })
      expect(response.status).toBe(200)
      expect(response.headers.get("pay-version")).toBe(PREVIEW_VERSION)
    })

    it("an unknown version: 400 unknown_api_version naming the header", async () => {
      expectError(
        await api.get("/v1/merchants", { headers: { "Pay-Version": "2020-01-01" } }),
        400,
        "unknown_api_version",
        ["Pay-Version"]
      )
      expectError(
        await api.get("/v1/merchants", { headers: { "WCP-Version": "latest" } }),
        400,
        "unknown_api_version",
        ["WCP-Version"]
      )
      expectError(
        await api.get("/v1/merchants", { headers: { "Api-Version": "2026-02-19" } }),
        400,
        "unknown_api_version",
        ["Api-Version"]
      )
    })
  })

  describe("request bodies", () => {
    it("malformed JSON: 400 params_validation naming the body (the reference's code)", async () => {
      expectError(
        await api.request("POST", "/v1/merchants", {
          idempotencyKey: newKey(),
          rawBody: '{"merchantName": "Shop",',
          headers: { "content-type": "application/json" }
        }),
        400,
        "params_validation",
        ["body"]
      )
    })

    it.each([
      ["an array", [validMerchant]],
      ["a string", "Edge Shop"],
      ["a number", 42],
      ["null", null]
    ])("a JSON body that is %s: 400 naming the body", async (_, body) => {
      const response = await api.request("POST", "/v1/merchants", {
        idempotencyKey: newKey(),
        rawBody: JSON.stringify(body),
        headers: { "content-type": "application/json" }
      })
      expectError(response, 400, "params_validation", ["body"])
    })

    it("no body at all: 400", async () => {
      const response = await api.request("POST", "/v1/merchants", { idempotencyKey: newKey() })
      expectError(response, 400, "params_validation")
    })

    it(`a body over ${MAX_BODY_BYTES} bytes: 413 payload_too_large`, async () => {
      const token = uniqueToken()
      const response = await api.request("POST", "/v1/merchants", {
        idempotencyKey: newKey(),
        body: {
          merchantName: `Big ${token}`,
          merchantEmail: "big@shop.example",
          padding: "x".repeat(MAX_BODY_BYTES)
        }
      })
      expectError(response, 413, "payload_too_large")
      const list = await api.get(`/v1/merchants?search=${token}`)
      expect(list.body.totalCount).toBe(0)
    })

    it("a chunked body (no Content-Length) over the limit: 413 payload_too_large", async () => {
      const chunk = new TextEncoder().encode(`{"padding":"${"x".repeat(4096)}`)
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > MAX_BODY_BYTES * 2) {
            controller.enqueue(new TextEncoder().encode('"}'))
            controller.close()
            return
          }
          sent += chunk.length
          controller.enqueue(chunk)
        }
      })
      const init = {
        method: "POST",
        headers: {
          "api-key": PARTNER_KEY,
          "idempotency-key": newKey(),
          "content-type": "application/json"
        },
        body: stream,
        duplex: "half"
      }
      const raw = await fetch(`${server.baseUrl}/v1/merchants`, init as RequestInit)
      const text = await raw.text()
      expectError(
        { status: raw.status, headers: raw.headers, text, body: JSON.parse(text) },
        413,
        "payload_too_large"
      )
    })

    it("a body just under the limit is read (and then validated)", async () => {
      const body = JSON.stringify({ ...validMerchant, padding: "" })
      const padded = JSON.stringify({
        ...validMerchant,
        padding: "x".repeat(MAX_BODY_BYTES - body.length)
      })
      expect(padded.length).toBe(MAX_BODY_BYTES)
      const response = await api.request("POST", "/v1/merchants", {
        idempotencyKey: newKey(),
        rawBody: padded,
        headers: { "content-type": "application/json" }
      })
      expectError(response, 400, "params_validation", ["padding"])
    })

    it("Content-Type: text/plain with a body: 415 unsupported_media_type", async () => {
      expectError(
        await api.request("POST", "/v1/merchants", {
          idempotencyKey: newKey(),
          rawBody: JSON.stringify(validMerchant),
          headers: { "content-type": "text/plain" }
        }),
        415,
        "unsupported_media_type"
      )
    })

    it("a body without a Content-Type, on every JSON route: 415 (a browser may send one cross-site)", async () => {
      const { paymentId } = await paymentFor(api, await settledMerchant(api))
      const wallet = await walletClient(server)
      const gateway = { "api-key": wallet.apiKey, accept: "application/json" }
      const routes: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
        ["/v1/merchants", { "api-key": PARTNER_KEY, "idempotency-key": newKey() }, "{}"],
        [`/v1/gateway/payment/${paymentId}/options`, gateway, '{"accounts":[]}'],
        [`/v1/gateway/payment/${paymentId}/confirm`, gateway, '{"optionId":"x","results":[]}'],
        [`/${paymentId}/options`, {}, '{"address":"0x0"}'],
        [`/${paymentId}/confirm`, {}, '{"optionId":"x","results":[]}'],
        ["/sandbox/faucet", {}, '{"account":"eip155:31337:0x0","amount":"1"}'],
        ["/sandbox/rpc", {}, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}']
      ]
      for (const [path, headers, body] of routes) {
        const response = await postUntyped(`${server.baseUrl}${path}`, headers, body)
        expect(response, path).toMatchObject({
          status: 415,
          body: { code: "unsupported_media_type" }
        })
      }
      // The same bodies sent as JSON reach the routes.
      const rpc = await postUntyped(
        `${server.baseUrl}/sandbox/rpc`,
        { "content-type": "application/json; charset=utf-8" },
        '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'
      )
      expect(rpc).toMatchObject({ status: 200, body: { result: "0x7a69" } })
      const options = await postUntyped(
        `${server.baseUrl}/${paymentId}/options`,
        { "content-type": "application/json; charset=utf-8" },
        '{"address":"0x0"}'
      )
      expect(options.status).not.toBe(415)
      // A route that takes no body still answers an empty POST without a Content-Type.
      const cancel = await postUntyped(
        `${server.baseUrl}/v1/gateway/payment/${paymentId}/cancel`,
        gateway,
        ""
      )
      expect(cancel, cancel.text).toMatchObject({ status: 200, body: { status: "cancelled" } })
    })

    it("Content-Type: application/json; charset=utf-8 is JSON", async () => {
      const token = uniqueToken()
      const response = await api.request("POST", "/v1/merchants", {
        idempotencyKey: newKey(),
        rawBody: JSON.stringify({
          merchantName: `Charset ${token}`,
          merchantEmail: "c@shop.example"
        }),
        headers: { "content-type": "application/json; charset=utf-8" }
      })
      expect(response.status, response.text).toBe(201)
    })
  })

  describe("routing", () => {
    it("an unknown route: 404 not_found", async () => {
      expectError(await api.get("/v1/nothing-here"), 404, "not_found")
      expectError(await api.get("/v2/merchants"), 404, "not_found")
      expectError(await api.get("/v1/merchants/a/b/c/d/e"), 404, "not_found")
    })

    it("a wrong method on a known path: 405 with an allow header", async () => {
      const onCollection = await api.request("PUT", "/v1/merchants", { body: validMerchant })
      expectError(onCollection, 405, "method_not_allowed")
      const allow = (onCollection.headers.get("allow") ?? "").split(/\s*,\s*/).sort()
      expect(allow).toEqual(["GET", "POST"])

      const merchant = await createMerchant(payClient(server), `Routing ${uniqueToken()}`)
      const onItem = await api.request("POST", `/v1/merchants/${merchant.id}`, {
        body: validMerchant
      })
      expectError(onItem, 405, "method_not_allowed")
      expect((onItem.headers.get("allow") ?? "").split(/\s*,\s*/).sort()).toEqual([
        "DELETE",
        "GET",
        "PATCH"
      ])

      const onSettlement = await api.get(
        `/v1/merchants/${merchant.id}/settlements/crypto/crypto_00000000000000000000`
      )
      expectError(onSettlement, 405, "method_not_allowed")
      expect((onSettlement.headers.get("allow") ?? "").split(/\s*,\s*/).sort()).toEqual([
        "DELETE",
        "PUT"
      ])
    })

    it("a wrong method on /health: 405", async () => {
      const response = await api.request("POST", "/health", { key: null })
      expectError(response, 405, "method_not_allowed")
      expect(response.headers.get("allow")).toBe("GET")
    })

    it("a badly percent-encoded path id names nothing: 404", async () => {
      expectError(await api.get("/v1/merchants/%E0%A4%A"), 404, "not_found")
      expectError(await api.get("/v1/payments/%E0%A4%A"), 404, "payment_not_found")
    })
  })
})
