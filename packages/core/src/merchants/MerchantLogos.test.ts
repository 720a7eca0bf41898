/**
 * Merchant logos through the engine's fetch handler, on the in-memory stores
 * and a fake LogoCapture (no network, no image library: @pay/logos has its own
 * tests, and the end-to-end suites run the real one): the logo is captured
 * before the merchant is written, every view shows the engine's URL of the
 * frozen image, a refusal is the documented 400 and is kept under the
 * Idempotency-Key unless a retry may pass, and a replay fetches nothing.
 */

import { MemoryStorage } from "@pay/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeFakeLogoCapture } from "../../test/FakeLogoCapture.js"
import type { PaymentEngineService } from "../PaymentEngine.js"
import { makePaymentEngine } from "../PaymentEngine.js"
import { Partners } from "../partners/Partners.js"

const PUBLIC_URL = "https://shop.example/pay"
const LOGO_URL = /^https:\/\/shop\.example\/pay\/logos\/[0-9a-f]{64}\.webp$/

const fake = makeFakeLogoCapture()
let scope: Scope.CloseableScope
let engine: PaymentEngineService
let apiKey: string
let keys = 0

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  engine = await Effect.runPromise(
    Scope.extend(
      makePaymentEngine({
        storage: MemoryStorage,
        logos: fake.layer,
        publicUrl: PUBLIC_URL,
        basePath: "",
        workers: false
      }),
      scope
    )
  )
  apiKey = await Effect.runPromise(
    Effect.provide(
      Effect.map(
        Effect.flatMap(Partners, (p) => p.create({ name: "Logos" })),
        (c) => c.apiKey
      ),
      engine.context
    )
  )
})

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const call = async (
  method: string,
  path: string,
  body?: unknown,
  idempotencyKey: string | undefined = method === "POST" ? `key-${++keys}` : undefined
) => {
  const response = await engine.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method,
      headers: {
        "api-key": apiKey,
        "content-type": "application/json",
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {})
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )
  // biome-ignore lint/suspicious/noExplicitAny: each test reads the fields it checks
  return { status: response.status, body: (await response.json()) as any }
}

const captures = (url: string) => fake.captured.filter((u) => u === url).length

describe("merchant logos", () => {
  it("freezes the logo at create: every view shows the engine's URL, which serves the image", async () => {
    const url = "https://cdn.acme.example/create.png"
    const created = await call("POST", "/v1/merchants", {
      merchantName: "Acme",
      merchantEmail: "a@acme.example",
      iconUrl: url
    })
    expect(created.status).toBe(201)
    const iconUrl: string = created.body.merchant.iconUrl
    expect(iconUrl).toMatch(LOGO_URL)
    expect(captures(url)).toBe(1)
    const id = created.body.merchant.id
    expect((await call("GET", `/v1/merchants/${id}`)).body.merchant.iconUrl).toBe(iconUrl)
    const listed = (await call("GET", "/v1/merchants?limit=100")).body.merchants
    expect(listed.find((m: { id: string }) => m.id === id).iconUrl).toBe(iconUrl)
    const image = await engine.fetch(
      new Request(`http://127.0.0.1${new URL(iconUrl).pathname.slice("/pay".length)}`)
    )
    expect(image.status).toBe(200)
    expect(new TextDecoder().decode(await image.arrayBuffer())).toBe(`${url}#default`)
  })

  it.each([
    ["http://cdn.acme.example/l.png", "must be an https:// URL"],
    ["logo.png", "must be an https:// URL"],
    [`https://cdn.acme.example/${"l".repeat(2048)}.png`, "must be at most 2048 characters long"],
    [42, "must be a string or null"]
  ])(
    "an iconUrl %s is not an HTTPS URL: invalid_icon_url, and nothing is fetched",
    async (iconUrl, message) => {
      const fetched = fake.captured.length
      const refused = await call("POST", "/v1/merchants", {
        merchantName: "Bad URL",
        merchantEmail: "u@acme.example",
        iconUrl
      })
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe("params_validation")
      expect(refused.body.issues).toEqual([{ field: "iconUrl", code: "invalid_icon_url", message }])
      expect(fake.captured.length).toBe(fetched)
    }
  )

  it("a replay of the create answers the same merchant and fetches nothing", async () => {
    const url = "https://cdn.acme.example/replay.png"
    const body = { merchantName: "Replay", merchantEmail: "r@acme.example", iconUrl: url }
    const first = await call("POST", "/v1/merchants", body, "replay-key")
    const again = await call("POST", "/v1/merchants", body, "replay-key")
    expect(again).toEqual(first)
    expect(captures(url)).toBe(1)
  })

  it("a refused logo is 400 params_validation with the iconUrl issue's code; nothing is written, and the refusal is kept under its key", async () => {
    const url = "https://cdn.acme.example/small.png"
    fake.refuse(url, "icon_too_small")
    const before = (await call("GET", "/v1/merchants")).body.totalCount
    const body = { merchantName: "Small", merchantEmail: "s@acme.example", iconUrl: url }
    const refused = await call("POST", "/v1/merchants", body, "small-key")
    expect(refused).toEqual({
      status: 400,
      body: {
        code: "params_validation",
        message: "iconUrl: refused: icon_too_small",
        issues: [{ field: "iconUrl", code: "icon_too_small", message: "refused: icon_too_small" }]
      }
    })
    expect((await call("GET", "/v1/merchants")).body.totalCount).toBe(before)
    // The same key again: the kept answer, without a second fetch.
    expect(await call("POST", "/v1/merchants", body, "small-key")).toEqual(refused)
    expect(captures(url)).toBe(1)
  })

  it("an unreachable logo is not kept under its key: the same key may try again", async () => {
    const url = "https://cdn.acme.example/down.png"
    fake.refuse(url, "icon_unreachable")
    const body = { merchantName: "Down", merchantEmail: "d@acme.example", iconUrl: url }
    const refused = await call("POST", "/v1/merchants", body, "down-key")
    expect(refused.status).toBe(400)
    expect(refused.body.issues).toEqual([
      { field: "iconUrl", code: "icon_unreachable", message: "refused: icon_unreachable" }
    ])
    fake.refuse(url, undefined)
    const retried = await call("POST", "/v1/merchants", body, "down-key")
    expect(retried.status).toBe(201)
    expect(retried.body.merchant.iconUrl).toMatch(LOGO_URL)
    expect(captures(url)).toBe(2)
  })

  it("PATCH with the same iconUrl snapshots again; the old logo stays served; null removes it; other fields leave it", async () => {
    const url = "https://cdn.acme.example/swap.png"
    const created = await call("POST", "/v1/merchants", {
      merchantName: "Swap",
      merchantEmail: "w@acme.example",
      iconUrl: url
    })
    const id = created.body.merchant.id
    const first: string = created.body.merchant.iconUrl

    // The image changes behind the unchanged URL: buyers still see the first one.
    fake.setImage(url, "second")
    expect((await call("GET", `/v1/merchants/${id}`)).body.merchant.iconUrl).toBe(first)

    const renamed = await call("PATCH", `/v1/merchants/${id}`, { merchantName: "Swapped" })
    expect(renamed.body.merchant.iconUrl).toBe(first)
    expect(captures(url)).toBe(1)

    const patched = await call("PATCH", `/v1/merchants/${id}`, { iconUrl: url })
    expect(patched.status).toBe(200)
    const second: string = patched.body.merchant.iconUrl
    expect(second).toMatch(LOGO_URL)
    expect(second).not.toBe(first)
    expect(captures(url)).toBe(2)
    const served = async (logoUrl: string) => {
      const r = await engine.fetch(
        new Request(`http://127.0.0.1${new URL(logoUrl).pathname.slice("/pay".length)}`)
      )
      return new TextDecoder().decode(await r.arrayBuffer())
    }
    expect(await served(first)).toBe(`${url}#default`)
    expect(await served(second)).toBe(`${url}#second`)

    const refusedUrl = "https://cdn.acme.example/wide.png"
    fake.refuse(refusedUrl, "icon_not_square")
    const refused = await call("PATCH", `/v1/merchants/${id}`, {
      merchantName: "Not applied",
      iconUrl: refusedUrl
    })
    expect(refused.status).toBe(400)
    expect(refused.body.issues[0].code).toBe("icon_not_square")
    const unchanged = (await call("GET", `/v1/merchants/${id}`)).body.merchant
    expect([unchanged.name, unchanged.iconUrl]).toEqual(["Swapped", second])

    const removed = await call("PATCH", `/v1/merchants/${id}`, { iconUrl: null })
    expect(removed.body.merchant.iconUrl).toBeNull()
    expect(await served(first)).toBe(`${url}#default`)
  })
})

describe("an engine without a logo fetcher", () => {
  it("refuses an iconUrl with icon_unreachable, naming the logos option; merchants without one are fine", async () => {
    const own = await Effect.runPromise(Scope.make())
    const bare = await Effect.runPromise(
      Scope.extend(
        makePaymentEngine({ storage: MemoryStorage, publicUrl: PUBLIC_URL, workers: false }),
        own
      )
    )
    const key = await Effect.runPromise(
      Effect.provide(
        Effect.map(
          Effect.flatMap(Partners, (p) => p.create({ name: "Bare" })),
          (c) => c.apiKey
        ),
        bare.context
      )
    )
    const post = (body: unknown, idempotencyKey: string) =>
      bare.fetch(
        new Request("http://127.0.0.1/pay/v1/merchants", {
          method: "POST",
          headers: {
            "api-key": key,
            "content-type": "application/json",
            "idempotency-key": idempotencyKey
          },
          body: JSON.stringify(body)
        })
      )
    const refused = await post(
      { merchantName: "Bare", merchantEmail: "b@acme.example", iconUrl: "https://a.example/l.png" },
      "bare-1"
    )
    expect(refused.status).toBe(400)
    const body = await refused.json()
    expect(body.issues[0].code).toBe("icon_unreachable")
    expect(body.issues[0].message).toContain("`logos` option")
    expect(
      (await post({ merchantName: "Bare", merchantEmail: "b@acme.example" }, "bare-2")).status
    ).toBe(201)
    await Effect.runPromise(Scope.close(own, Exit.void))
  })
})
