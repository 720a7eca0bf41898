import { describe, expect, it } from "@effect/vitest"
import { makeMemoryStorage } from "@pay/testing"
import { Clock, Effect, Layer, TestClock } from "effect"
import { errorReply } from "../ApiFailures.js"
import { ApiKeys, VERIFIED_KEY_TTL_MS } from "../keys/ApiKeys.js"
import { KeyStore } from "../keys/KeyStore.js"
import { Partners } from "../partners/Partners.js"
import { GatewayAuthError, type GatewayAuthReason, WalletAppNotFound } from "./WalletApp.js"
import { WalletAppStore } from "./WalletAppStore.js"
import {
  APP_LAST_USED_PRECISION_MS,
  authenticateWallet,
  KNOWN_APP_TTL_MS,
  WalletApps,
  type WalletCredentials,
  walletCredentials
} from "./WalletApps.js"

/** The in-memory store, counting the reads that authentication makes. */
const countingStorage = () => {
  const reads = { byKey: 0, byId: 0 }
  const memory = makeMemoryStorage()
  const countedApps = Layer.effect(
    WalletAppStore,
    Effect.map(WalletAppStore, (store) =>
      WalletAppStore.of({
        ...store,
        find: (id) => {
          reads.byId++
          return store.find(id)
        }
      })
    )
  ).pipe(Layer.provide(memory))
  const countedKeys = Layer.effect(
    KeyStore,
    Effect.map(KeyStore, (store) =>
      KeyStore.of({
        ...store,
        findByLookupId: (lookupId) => {
          reads.byKey++
          return store.findByLookupId(lookupId)
        }
      })
    )
  ).pipe(Layer.provide(memory))
  return { reads, layer: Layer.mergeAll(memory, countedApps, countedKeys) }
}

const storage = countingStorage()
const services = Layer.mergeAll(WalletApps.Default, Partners.Default).pipe(
  Layer.provide(ApiKeys.Default),
  Layer.provideMerge(storage.layer)
)

/** Two apps, and a partner whose key must not open the gateway. */
const setup = Effect.gen(function* () {
  const apps = yield* WalletApps
  const a = yield* apps.create({ name: "Wallet A", iconUrl: "https://a.example/icon.png" })
  yield* TestClock.adjust(1000)
  const b = yield* apps.create({ name: "Wallet B" })
  const partner = yield* (yield* Partners).create({ name: "A partner" })
  return { a, b, partnerKey: partner.apiKey }
})

const refusal = (credentials: WalletCredentials) =>
  Effect.map(Effect.flip(authenticateWallet(credentials)), (e) => e.reason)

describe("authenticateWallet", () => {
  it.layer(services, { timeout: 10_000 })((it) => {
    it.effect("names the missing headers when neither Api-Key nor App-Id is sent", () =>
      Effect.gen(function* () {
        expect(yield* refusal({})).toBe("missing_auth_headers")
        expect(yield* refusal({ apiKey: "", appId: "" })).toBe("missing_auth_headers")
        expect(yield* refusal({ apiKey: undefined, appId: undefined })).toBe("missing_auth_headers")
        // A Client-Id belongs with an App-Id: that is what is missing.
        expect(yield* refusal({ clientId: "device-1" })).toBe("missing_app_id")
        expect(yield* refusal({ clientId: "" })).toBe("missing_auth_headers")
      })
    )

    it.effect("accepts an app's own Api-Key, and refuses every other key as invalid_api_key", () =>
      Effect.gen(function* () {
        const { a, b, partnerKey } = yield* setup
        expect(a.apiKey).toMatch(/^pk_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/)
        expect(yield* authenticateWallet({ apiKey: a.apiKey })).toEqual(a.app)
        expect(yield* authenticateWallet({ apiKey: b.apiKey })).toEqual(b.app)
        // A partner key is no wallet app's key.
        expect(yield* refusal({ apiKey: partnerKey })).toBe("invalid_api_key")
        // The right prefix with a wrong secret, a well-formed stranger, and garbage.
        const wrongSecret = `${a.apiKey.slice(0, -1)}${a.apiKey.endsWith("x") ? "y" : "x"}`
        expect(yield* refusal({ apiKey: wrongSecret })).toBe("invalid_api_key")
        expect(yield* refusal({ apiKey: `pk_${"0".repeat(12)}_${"0".repeat(40)}` })).toBe(
          "invalid_api_key"
        )
        expect(yield* refusal({ apiKey: "short" })).toBe("invalid_api_key")
        expect(yield* refusal({ apiKey: "has spaces in it, not a key at all" })).toBe(
          "invalid_api_key"
        )
      })
    )

    it.effect("accepts an app's App-Id, and refuses an id of no app as invalid_app_id", () =>
      Effect.gen(function* () {
        const { a } = yield* setup
        expect(yield* authenticateWallet({ appId: a.app.id })).toEqual(a.app)
        expect(yield* authenticateWallet({ appId: a.app.id, clientId: "device-1" })).toEqual(a.app)
        expect(yield* refusal({ appId: `app_${"0".repeat(20)}` })).toBe("invalid_app_id")
        expect(yield* refusal({ appId: "not-an-app-id" })).toBe("invalid_app_id")
        // The secret key is not an App-Id.
        expect(yield* refusal({ appId: a.apiKey })).toBe("invalid_app_id")
      })
    )

    it.effect("accepts both headers naming the same app; two apps conflict", () =>
      Effect.gen(function* () {
        const { a, b } = yield* setup
        expect(yield* authenticateWallet({ apiKey: a.apiKey, appId: a.app.id })).toEqual(a.app)
        expect(yield* refusal({ apiKey: a.apiKey, appId: b.app.id })).toBe(
          "conflicting_auth_headers"
        )
        expect(yield* refusal({ apiKey: b.apiKey, appId: a.app.id })).toBe(
          "conflicting_auth_headers"
        )
        // With both sent, each is checked on its own first.
        expect(yield* refusal({ apiKey: "wrong_key_0123456789abcdef", appId: a.app.id })).toBe(
          "invalid_api_key"
        )
        expect(yield* refusal({ apiKey: a.apiKey, appId: `app_${"0".repeat(20)}` })).toBe(
          "invalid_app_id"
        )
        // An empty header is an absent one.
        expect(yield* authenticateWallet({ apiKey: a.apiKey, appId: "" })).toEqual(a.app)
        expect(yield* authenticateWallet({ apiKey: "", appId: b.app.id })).toEqual(b.app)
      })
    )

    it.effect("remembers a verified key for 4 s and a found app for 4 s, never a refusal", () =>
      Effect.gen(function* () {
        const { a } = yield* setup
        const { reads } = storage
        const before = { ...reads }
        // A key is read with its app; an App-Id is read on its own.
        yield* authenticateWallet({ apiKey: a.apiKey })
        yield* authenticateWallet({ apiKey: a.apiKey })
        yield* authenticateWallet({ appId: a.app.id })
        yield* authenticateWallet({ appId: a.app.id })
        expect(reads).toEqual({ byKey: before.byKey + 1, byId: before.byId + 2 })
        yield* TestClock.adjust(VERIFIED_KEY_TTL_MS - 1)
        yield* authenticateWallet({ apiKey: a.apiKey, appId: a.app.id })
        expect(reads).toEqual({ byKey: before.byKey + 1, byId: before.byId + 2 })
        yield* TestClock.adjust(1)
        yield* authenticateWallet({ apiKey: a.apiKey })
        expect(reads).toEqual({ byKey: before.byKey + 2, byId: before.byId + 3 })
        // An App-Id's app as briefly (its status must reach every instance within 5 s).
        yield* authenticateWallet({ appId: a.app.id })
        expect(reads.byId).toBe(before.byId + 4)
        yield* TestClock.adjust(KNOWN_APP_TTL_MS - 1)
        yield* authenticateWallet({ appId: a.app.id })
        expect(reads.byId).toBe(before.byId + 4)
        yield* TestClock.adjust(1)
        yield* authenticateWallet({ appId: a.app.id })
        expect(reads.byId).toBe(before.byId + 5)
        const unknown = `app_${"1".repeat(20)}`
        yield* refusal({ appId: unknown })
        yield* refusal({ appId: unknown })
        expect(reads.byId).toBe(before.byId + 7)
      })
    )

    it.effect(
      "refuses a disabled app by its key, its App-Id and both within 4 s; enabled, serves it again",
      () =>
        Effect.gen(function* () {
          const { a, b } = yield* setup
          const apps = yield* WalletApps
          const ways: ReadonlyArray<WalletCredentials> = [
            { apiKey: a.apiKey },
            { appId: a.app.id },
            { apiKey: a.apiKey, appId: a.app.id }
          ]
          for (const way of ways) yield* authenticateWallet(way)
          expect((yield* apps.setStatus(a.app.id, "disabled")).status).toBe("disabled")
          // This instance forgets the App-Id's app at once; a key verified a moment ago keeps
          // its app until its 4 s are up, as another instance's cache does.
          expect(yield* refusal({ appId: a.app.id })).toBe("app_disabled")
          yield* TestClock.adjust(Math.max(VERIFIED_KEY_TTL_MS, KNOWN_APP_TTL_MS))
          for (const way of ways) expect(yield* refusal(way)).toBe("app_disabled")
          // The credentials are checked first: a wrong key, or another app's id, say so.
          expect(yield* refusal({ apiKey: "wrong_key_0123456789abcdef", appId: a.app.id })).toBe(
            "invalid_api_key"
          )
          expect(yield* refusal({ apiKey: a.apiKey, appId: b.app.id })).toBe(
            "conflicting_auth_headers"
          )
          expect((yield* authenticateWallet({ appId: b.app.id })).id).toBe(b.app.id)

          yield* apps.setStatus(a.app.id, "active")
          yield* TestClock.adjust(Math.max(VERIFIED_KEY_TTL_MS, KNOWN_APP_TTL_MS))
          for (const way of ways) expect((yield* authenticateWallet(way)).id).toBe(a.app.id)
          const unknown = yield* Effect.flip(apps.setStatus(`app_${"2".repeat(20)}`, "disabled"))
          expect(unknown).toEqual(new WalletAppNotFound({ appId: `app_${"2".repeat(20)}` }))
          expect((yield* Effect.flip(apps.setStatus("nope", "disabled")))._tag).toBe(
            "WalletAppNotFound"
          )
        })
    )

    it.effect("records an app's last use at most once a minute, not per request", () =>
      Effect.gen(function* () {
        const { a } = yield* setup
        const store = yield* WalletAppStore
        const lastUsed = Effect.map(store.find(a.app.id), (found) =>
          found._tag === "Some" ? found.value.lastUsedAt?.getTime() : undefined
        )
        expect(yield* lastUsed).toBeUndefined()
        const first = yield* Clock.currentTimeMillis
        yield* authenticateWallet({ appId: a.app.id })
        expect(yield* lastUsed).toBe(first)
        yield* TestClock.adjust(APP_LAST_USED_PRECISION_MS - 1)
        yield* authenticateWallet({ apiKey: a.apiKey })
        yield* authenticateWallet({ appId: a.app.id })
        expect(yield* lastUsed).toBe(first)
        yield* TestClock.adjust(1)
        yield* authenticateWallet({ appId: a.app.id })
        expect(yield* lastUsed).toBe(first + APP_LAST_USED_PRECISION_MS)
      })
    )
  })

  it("reads the credentials from the request's lower-case headers", () => {
    const headers: Record<string, string> = {
      "api-key": "pk_key",
      "app-id": "app_id",
      "client-id": "device"
    }
    expect(walletCredentials((name) => headers[name])).toEqual({
      apiKey: "pk_key",
      appId: "app_id",
      clientId: "device"
    })
  })

  it("answers a disabled app 403 app_disabled, saying the operator disabled it", () => {
    const reply = errorReply(new GatewayAuthError({ reason: "app_disabled" }))
    expect(reply.status).toBe(403)
    expect(reply.body.code).toBe("app_disabled")
    expect(reply.body.message).toContain("wallet app is disabled by the operator")
  })

  it("answers every refusal of the credentials 401 with its reason as the wire code", () => {
    const reasons: ReadonlyArray<GatewayAuthReason> = [
      "missing_auth_headers",
      "missing_app_id",
      "invalid_api_key",
      "invalid_app_id",
      "conflicting_auth_headers"
    ]
    for (const reason of reasons) {
      const reply = errorReply(new GatewayAuthError({ reason }))
      expect(reply.status).toBe(401)
      expect(reply.body.code).toBe(reason)
      expect(reply.body.message.length).toBeGreaterThan(0)
    }
  })
})

describe("WalletApps.create", () => {
  // Fresh: it.layer shares built layers between suites, and this one wants its own store.
  const fresh = Layer.fresh(WalletApps.Default).pipe(
    Layer.provide(ApiKeys.Default),
    Layer.provideMerge(Layer.suspend(makeMemoryStorage))
  )
  it.layer(fresh)((it) => {
    it.effect("validates the name and icon, trims the name, and lists apps oldest first", () =>
      Effect.gen(function* () {
        const apps = yield* WalletApps
        const first = yield* apps.create({ name: "  Trimmed Wallet  " })
        expect(first.app.name).toBe("Trimmed Wallet")
        expect(first.app.iconUrl).toBeNull()
        expect(first.app.id).toMatch(/^app_[0-9A-Za-z]{20}$/)
        yield* TestClock.adjust(1000)
        const second = yield* apps.create({
          name: "x".repeat(256),
          iconUrl: "https://wallet.example/icon.png"
        })
        expect(second.app.iconUrl).toBe("https://wallet.example/icon.png")
        expect(second.apiKey).not.toBe(first.apiKey)
        expect((yield* apps.list).map((app) => app.id)).toEqual([first.app.id, second.app.id])

        const invalid = (input: Parameters<typeof apps.create>[0]) =>
          Effect.map(Effect.flip(apps.create(input)), (e) => e.issues)
        expect(yield* invalid({ name: "" })).toEqual([
          { field: "name", message: "must be 1 to 256 characters long" }
        ])
        expect(yield* invalid({ name: "   " })).toEqual([
          { field: "name", message: "must be 1 to 256 characters long" }
        ])
        expect((yield* invalid({ name: "x".repeat(257) }))[0]?.field).toBe("name")
        expect(yield* invalid({ name: "W", iconUrl: "http://wallet.example/icon.png" })).toEqual([
          { field: "iconUrl", message: "must be an https:// URL" }
        ])
        expect((yield* invalid({ name: "W", iconUrl: "not a url" }))[0]?.field).toBe("iconUrl")
        expect(yield* apps.list).toHaveLength(2)
      })
    )
  })
})
