/**
 * Every error the engine can answer (the rows of `ApiErrors`), provoked over
 * HTTP on the real standalone server on SQLite: its status and code, and a
 * message that names the field or header at fault and what is allowed, in
 * plain words (none of the schema library's own notation). The cases are keyed
 * by the rows, so a row added without a case (or a reason it cannot be
 * provoked here) fails the first test.
 */
import { ApiErrors, WalletApps } from "@pay/core"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ApiResponse,
  type Client,
  client,
  createPartner,
  type E2eServer,
  expectError,
  MAX_BODY_BYTES,
  newKey,
  PARTNER_KEY,
  startServer,
  unknownId
} from "./e2e-support.js"
import {
  confirm,
  fund,
  newBuyer,
  onlyOption,
  options,
  paymentFor,
  settledMerchant,
  signAction,
  signed,
  walletClient
} from "./gateway-support.js"
import {
  cancel,
  getStatus,
  refund,
  setMerchantStatus,
  sleep,
  startProcessing,
  succeed,
  UNKNOWN_PAYMENT
} from "./payments-support.js"

type Row = keyof typeof ApiErrors

/** The rows no test over HTTP can provoke here, each with why. */
const NOT_PROVOKED = {
  InternalError:
    "a defect (a bug, or a store failing mid-request) has no request that causes it; the engine's own tests throw one in (packages/core/src/http/Engine.test.ts)",
  ChainUnavailable:
    "needs a chain RPC that answers while the options are made and stops before the confirm: the chain process behind the fault proxy (chain-work-support.ts), which costs a bundle build and a process; the sandbox chain is in-process and always answers"
} as const satisfies Partial<Record<Row, string>>

/** The three servers: most cases on `main`; a short quote lock; a tight partner rate limit. */
interface World {
  readonly main: E2eServer
  readonly quick: E2eServer
  readonly limited: E2eServer
  readonly partner: Client
  readonly wallet: Client
  readonly walletAppId: string
  readonly walletApiKey: string
  readonly merchantId: string
}

interface Case {
  readonly provoke: (world: World) => Promise<ApiResponse>
  /** What the message names: the field or header at fault, and what is allowed. */
  readonly names: ReadonlyArray<string>
  /** The fields the issues name, when the answer has issues. */
  readonly issues?: ReadonlyArray<string>
}

/** The schema library's own notation, which a message must never show. */
const INTERNALS =
  /\bExpected\b|readonly|Refinement|Schema\b|NonNegativeInt|ReadonlyArray| \| |<[A-Z]/

const QUOTE_LOCK_MS = 1000
const PRICE = 10_500_000n

const merchantOfOther = async (world: World) => {
  const other = await createPartner(world.main, "Other partner")
  const created = await world.partner.request("POST", "/v1/merchants", {
    key: other.apiKey,
    idempotencyKey: newKey(),
    body: { merchantName: "Not yours", merchantEmail: "n@shop.example" }
  })
  expect(created.status, created.text).toBe(201)
  return created.body.merchant.id as string
}

const CASES: Record<Exclude<Row, keyof typeof NOT_PROVOKED>, Case> = {
  ParamsValidation: {
    provoke: ({ partner, merchantId }) =>
      partner.request("POST", "/v1/payments", {
        idempotencyKey: newKey(),
        headers: { "merchant-id": merchantId },
        body: { referenceId: "order-1", amount: "10.50" }
      }),
    names: ["amount", '"unit"', "whole number of minor units as a string of digits", '"1050"'],
    issues: ["amount"]
  },
  InvalidParams: {
    provoke: ({ partner }) => partner.get("/v1/payments?status=paid"),
    names: ["status must be one of: requires_action, processing, succeeded"],
    issues: ["status"]
  },
  MissingIdempotencyKey: {
    provoke: ({ partner }) =>
      partner.request("POST", "/v1/merchants", {
        body: { merchantName: "Shop", merchantEmail: "s@shop.example" }
      }),
    names: ["Missing Idempotency-Key header", "255 characters"],
    issues: ["Idempotency-Key"]
  },
  MissingMerchantId: {
    provoke: ({ partner }) => partner.get("/v1/merchants/payments"),
    names: ["Missing Merchant-Id header", "mrch_"],
    issues: ["Merchant-Id"]
  },
  UnknownApiVersion: {
    provoke: ({ partner }) =>
      partner.get("/v1/merchants", { headers: { "pay-version": "1999-01-01" } }),
    names: [
      "Pay-Version",
      "1999-01-01",
      "2026-02-18",
      "2026-02-19.preview",
      "leave the header out"
    ],
    issues: ["Pay-Version"]
  },
  InvalidWebhookUrl: {
    provoke: ({ partner }) =>
      partner.request("POST", "/v1/webhook-endpoints", {
        idempotencyKey: newKey(),
        body: { url: "https://127.0.0.1/hooks" }
      }),
    names: ["url", "loopback", "public"],
    issues: ["url"]
  },
  CancelRefused: {
    provoke: async (world) => {
      const { paymentId } = await paymentFor(world.partner, world.merchantId)
      await startProcessing(world.main, paymentId)
      await succeed(world.main, paymentId)
      return cancel(world.partner, paymentId, world.merchantId)
    },
    names: ["requires action", "succeeded"]
  },
  MissingApiKey: {
    provoke: ({ partner }) =>
      partner.get("/v1/merchants", { key: null, headers: { "x-api-key": PARTNER_KEY } }),
    names: ["Api-Key", "X-Api-Key", "Authorization: Bearer"],
    issues: ["Api-Key"]
  },
  InvalidApiKey: {
    provoke: ({ partner }) => partner.get("/v1/merchants", { key: "pk_wrong" }),
    names: ["Api-Key", "revoked", "expired"]
  },
  MissingAuthHeaders: {
    provoke: async ({ partner, wallet, merchantId }) => {
      const { paymentId } = await paymentFor(partner, merchantId)
      return wallet.get(`/v1/gateway/payment/${paymentId}`, {
        key: null,
        headers: { authorization: "Bearer pk_some_key" }
      })
    },
    names: ["Api-Key", "App-Id", "Authorization"],
    issues: ["Api-Key"]
  },
  MissingAppId: {
    provoke: async ({ partner, wallet, merchantId }) => {
      const { paymentId } = await paymentFor(partner, merchantId)
      return wallet.get(`/v1/gateway/payment/${paymentId}`, {
        key: null,
        headers: { "client-id": "device-1" }
      })
    },
    names: ["Client-Id", "App-Id", "Api-Key"]
  },
  InvalidAppId: {
    provoke: async ({ partner, wallet, merchantId }) => {
      const { paymentId } = await paymentFor(partner, merchantId)
      return wallet.get(`/v1/gateway/payment/${paymentId}`, {
        key: null,
        headers: { "app-id": `app_${"0".repeat(10)}${"Z".repeat(10)}` }
      })
    },
    names: ["App-Id", "app_"]
  },
  ConflictingAuthHeaders: {
    provoke: async (world) => {
      const other = await walletClient(world.main)
      const { paymentId } = await paymentFor(world.partner, world.merchantId)
      return world.wallet.get(`/v1/gateway/payment/${paymentId}`, {
        headers: { "app-id": other.appId }
      })
    },
    names: ["Api-Key", "App-Id"]
  },
  AppDisabled: {
    provoke: async (world) => {
      const other = await walletClient(world.main)
      await world.main.runEngine(WalletApps.use((apps) => apps.setStatus(other.appId, "disabled")))
      const { paymentId } = await paymentFor(world.partner, world.merchantId)
      return other.api.get(`/v1/gateway/payment/${paymentId}`)
    },
    names: ["wallet app", "disabled by the operator"]
  },
  Forbidden: {
    provoke: async (world) => world.partner.get(`/v1/merchants/${await merchantOfOther(world)}`),
    names: ["mrch_", "another partner"]
  },
  InsufficientScope: {
    provoke: async ({ partner, merchantId }) => {
      const readOnly = await partner.request("POST", "/v1/api-keys", {
        idempotencyKey: newKey(),
        body: { scopes: ["read"] }
      })
      expect(readOnly.status, readOnly.text).toBe(201)
      return partner.request("POST", "/v1/payments", {
        key: readOnly.body.secret,
        idempotencyKey: newKey(),
        headers: { "merchant-id": merchantId },
        body: { referenceId: "order-scope", amount: { unit: "iso4217/USD", value: "1050" } }
      })
    },
    names: ["payments scope", "POST /v1/payments", "this key's scopes: read"]
  },
  CollectTokenInvalid: {
    provoke: async ({ main, partner, merchantId }) => {
      const { paymentId } = await paymentFor(partner, merchantId)
      return client(() => main.baseUrl).get(
        `/collect/${paymentId}?accounts=${newBuyer().account}&token=forged`,
        { key: null, headers: { accept: "application/json" } }
      )
    },
    names: ["token", "collectData.url"]
  },
  NotFound: {
    provoke: ({ partner }) => partner.get(`/v1/merchants/${unknownId("mrch")}`),
    names: [unknownId("mrch")]
  },
  MerchantNotFound: {
    provoke: ({ partner }) =>
      partner.get("/v1/merchants/payments", { headers: { "merchant-id": unknownId("mrch") } }),
    names: ["Merchant-Id", unknownId("mrch")]
  },
  PaymentNotFound: {
    provoke: ({ partner }) => partner.get(`/v1/payments/${UNKNOWN_PAYMENT}`),
    names: [UNKNOWN_PAYMENT]
  },
  MethodNotAllowed: {
    provoke: ({ partner }) => partner.request("DELETE", "/v1/merchants"),
    names: ["DELETE", "GET", "POST"]
  },
  IdempotencyConflict: {
    provoke: async ({ partner }) => {
      const idempotencyKey = newKey()
      const first = await partner.request("POST", "/v1/merchants", {
        idempotencyKey,
        body: { merchantName: "First", merchantEmail: "f@shop.example" }
      })
      expect(first.status, first.text).toBe(201)
      return partner.request("POST", "/v1/merchants", {
        idempotencyKey,
        body: { merchantName: "Second", merchantEmail: "f@shop.example" }
      })
    },
    names: ["Idempotency-Key", "new"]
  },
  SettlementAssetConflict: {
    provoke: ({ partner, merchantId }) =>
      partner.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
        idempotencyKey: newKey(),
        body: {
          settlements: [
            {
              asset: "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116",
              destination: "eip155:31337:0x000000000000000000000000000000000000bEEF"
            }
          ]
        }
      }),
    names: ["mrch_", "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116"]
  },
  MerchantInactive: {
    provoke: async (world) => {
      const merchantId = await settledMerchant(world.partner)
      await setMerchantStatus(world.main, merchantId, "suspended")
      return world.partner.request("POST", "/v1/payments", {
        idempotencyKey: newKey(),
        headers: { "merchant-id": merchantId },
        body: { referenceId: "order-1", amount: { unit: "iso4217/USD", value: "1050" } }
      })
    },
    names: ["suspended", "only an active merchant"]
  },
  RefundExists: {
    provoke: async (world) => {
      const { paymentId } = await paymentFor(world.partner, world.merchantId)
      await startProcessing(world.main, paymentId)
      await succeed(world.main, paymentId)
      const first = await refund(world.partner, paymentId)
      expect(first.status, first.text).toBe(201)
      return refund(world.partner, paymentId)
    },
    names: ["rfnd_"]
  },
  LastActiveApiKey: {
    provoke: async ({ main, partner }) => {
      const { apiKey } = await createPartner(main, "One key")
      const keys = await partner.get("/v1/api-keys", { key: apiKey })
      return partner.request("POST", `/v1/api-keys/${keys.body.data[0].id}/revoke`, {
        key: apiKey
      })
    },
    names: ["last active API key", "create another"]
  },
  ApiKeyInactive: {
    provoke: async ({ main, partner }) => {
      const { apiKey } = await createPartner(main, "Two keys")
      const spare = await partner.request("POST", "/v1/api-keys", {
        key: apiKey,
        idempotencyKey: newKey(),
        body: { name: "spare" }
      })
      expect(spare.status, spare.text).toBe(201)
      const revoked = await partner.request("POST", `/v1/api-keys/${spare.body.id}/revoke`, {
        key: apiKey
      })
      expect(revoked.status, revoked.text).toBe(200)
      return partner.request("POST", `/v1/api-keys/${spare.body.id}/rotate`, {
        key: apiKey,
        idempotencyKey: newKey(),
        body: {}
      })
    },
    names: ["revoked or expired", "active key"]
  },
  InvalidState: {
    provoke: async ({ partner, merchantId }) => {
      const { paymentId } = await paymentFor(partner, merchantId)
      return refund(partner, paymentId)
    },
    names: ["requires_action", "succeeded"]
  },
  QuoteExpired: {
    provoke: async ({ quick }) => {
      const partner = client(() => quick.baseUrl)
      const wallet = (await walletClient(quick)).api
      const merchantId = await settledMerchant(partner)
      const buyer = newBuyer()
      await fund(quick, buyer, PRICE)
      const { paymentId } = await paymentFor(partner, merchantId)
      const option = await onlyOption(wallet, paymentId, buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      await sleep(QUOTE_LOCK_MS + 1200)
      return confirm(wallet, paymentId, signed(option.id, signature))
    },
    names: ["opt_", "options again"]
  },
  InsufficientBalance: {
    provoke: async ({ main, partner, wallet, merchantId }) => {
      const buyer = newBuyer()
      await fund(main, buyer, PRICE - 1n)
      const { paymentId } = await paymentFor(partner, merchantId)
      const option = await onlyOption(wallet, paymentId, buyer)
      const signature = await signAction(buyer.key, option.actions[0])
      return confirm(wallet, paymentId, signed(option.id, signature))
    },
    names: [String(PRICE - 1n), String(PRICE)]
  },
  PaymentExpired: {
    provoke: async ({ partner, wallet, merchantId }) => {
      const expiresAt = Math.floor(Date.now() / 1000) + 2
      const { paymentId } = await paymentFor(partner, merchantId, "1050", { expiresAt })
      await sleep(expiresAt * 1000 - Date.now() + 300)
      return options(wallet, paymentId, [newBuyer().account])
    },
    names: ["pay_", "expired"]
  },
  PayloadTooLarge: {
    provoke: ({ partner }) =>
      partner.request("POST", "/v1/merchants", {
        idempotencyKey: newKey(),
        body: { merchantName: "x".repeat(MAX_BODY_BYTES), merchantEmail: "s@shop.example" }
      }),
    names: [String(MAX_BODY_BYTES)]
  },
  UnsupportedMediaType: {
    provoke: ({ partner }) =>
      partner.request("POST", "/v1/merchants", {
        idempotencyKey: newKey(),
        rawBody: "merchantName=Shop",
        headers: { "content-type": "text/plain" }
      }),
    names: ["Content-Type", "application/json"]
  },
  RateLimited: {
    provoke: async ({ limited }) => {
      const partner = client(() => limited.baseUrl)
      const first = await partner.get("/v1/merchants")
      expect(first.status, first.text).toBe(200)
      return partner.get("/v1/merchants")
    },
    names: ["API key", "retry in"]
  },
  TooManyLongPolls: {
    provoke: async ({ main, partner, merchantId }) => {
      const { paymentId } = await paymentFor(partner, merchantId)
      const url = `${main.baseUrl}/v1/payments/${paymentId}/status?maxPollMs=20000`
      const stop = new AbortController()
      const held = fetch(url, {
        headers: { "api-key": PARTNER_KEY, "merchant-id": merchantId },
        signal: stop.signal
      }).catch(() => undefined)
      try {
        for (let i = 0; i < 50; i++) {
          const answer = await getStatus(partner, paymentId, merchantId, "?maxPollMs=1")
          if (answer.status === 503) return answer
          await sleep(100)
        }
        throw new Error("no long-poll was refused")
      } finally {
        stop.abort()
        await held
      }
    },
    names: ["maxPollMs", "retry in"]
  }
}

describe("every error code, over HTTP on the standalone server (SQLite)", () => {
  let world: World

  beforeAll(async () => {
    const [main, quick, limited] = await Promise.all([
      startServer("sqlite", { maxHeldLongPolls: 1 }),
      startServer("sqlite", { quoteLockMs: Option.some(QUOTE_LOCK_MS) }),
      startServer("sqlite", { rateLimits: { perApiKey: { perSecond: 1, burst: 1 } } })
    ])
    const partner = client(() => main.baseUrl)
    const app = await walletClient(main)
    const merchantId = await settledMerchant(partner)
    world = {
      main,
      quick,
      limited,
      partner,
      wallet: app.api,
      walletAppId: app.appId,
      walletApiKey: app.apiKey,
      merchantId
    }
  }, 120_000)

  afterAll(async () => {
    await Promise.all([world?.main.stop(), world?.quick.stop(), world?.limited.stop()])
  })

  it("has a case for every row of ApiErrors, or says why it cannot", () => {
    expect(Object.keys(NOT_PROVOKED).sort()).toEqual(["ChainUnavailable", "InternalError"])
    expect([...Object.keys(CASES), ...Object.keys(NOT_PROVOKED)].sort()).toEqual(
      Object.keys(ApiErrors).sort()
    )
  })

  it.each([
    [
      { "x-api-key": PARTNER_KEY },
      "a key was sent in X-Api-Key, which only GET /v1/merchants/:merchant_id/payments reads"
    ],
    [{ apikey: PARTNER_KEY }, "a key was sent in ApiKey, which the engine does not read"],
    [
      { authorization: `Basic ${PARTNER_KEY}` },
      'a key was sent in Authorization, which is read only as "Bearer <key>"'
    ],
    [
      { authorization: "Bearer" },
      'a key was sent in Authorization, which is read only as "Bearer <key>"'
    ],
    [{ "api-key": " " }, "the Api-Key header sent is empty"],
    [{}, "Authorization: Bearer <key>"]
  ])(
    "a partner key missing with headers %j: 401 missing_api_key saying %s",
    async (headers, said) => {
      const answer = await world.partner.get("/v1/merchants", { key: null, headers })
      expectError(answer, 401, "missing_api_key", ["Api-Key"])
      expect(answer.body.message).toMatch(/^Missing API key: send it in the Api-Key header/)
      expect(answer.body.message).toContain(said)
    }
  )

  it("the legacy route reads X-Api-Key; the gateway names the header it does not read", async () => {
    const legacy = await world.partner.get(`/v1/merchants/${world.merchantId}/payments`, {
      key: null,
      headers: { "x-api-key": PARTNER_KEY }
    })
    expect(legacy.status, legacy.text).toBe(200)
    const { paymentId } = await paymentFor(world.partner, world.merchantId)
    const gateway = await world.wallet.get(`/v1/gateway/payment/${paymentId}`, {
      key: null,
      headers: { "x-api-key": world.walletApiKey }
    })
    expectError(gateway, 401, "missing_auth_headers", ["Api-Key"])
    expect(gateway.body.message).toBe(
      "Missing wallet credentials: send the wallet app's Api-Key header or its App-Id header (a key was sent in X-Api-Key, which wallet gateway routes do not read)"
    )
  })

  it.each(Object.keys(CASES) as Array<keyof typeof CASES>)(
    "%s",
    async (row) => {
      const { status, code } = ApiErrors[row]
      const spec = CASES[row]
      const answer = await spec.provoke(world)
      expectError(answer, status, code, spec.issues)
      const message = answer.body.message as string
      for (const named of spec.names) expect(message, `${row}: ${message}`).toContain(named)
      const said = [
        message,
        ...((answer.body.issues ?? []) as Array<{ message: string }>).map((i) => i.message)
      ]
      for (const text of said) expect(text, `${row}: ${text}`).not.toMatch(INTERNALS)
      if (spec.issues !== undefined) expect(answer.body.issues).toHaveLength(spec.issues.length)
    },
    30_000
  )
})
