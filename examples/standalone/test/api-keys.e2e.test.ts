/**
 * Partner API keys end to end over loopback against the real standalone
 * server, on either store (issue 19): several keys per partner, each secret
 * shown once (and in a replay, kept sealed meanwhile), listed without
 * secrets, revoked (refused at once; never the last active one through the
 * API, and of two revocations racing for the last two keys exactly one wins),
 * rotated with an overlap, expiring; no part of a secret in the database; each
 * change in the audit trail with the key that made it. Revocation across
 * instances: multi-instance.e2e.test.ts.
 */
import { AuditStore, type PartnerId } from "@pay/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ApiResponse,
  client,
  createPartner,
  type E2eServer,
  expectError,
  type Json,
  newKey,
  PARTNER_KEY,
  RFC3339,
  STORES,
  startServer,
  storedText
} from "./e2e-support.js"

const VIEW_FIELDS = ["createdAt", "expiresAt", "id", "lastUsedAt", "name", "revokedAt", "scopes"]
const CREATED_FIELDS = ["createdAt", "expiresAt", "id", "name", "scopes", "secret"]
const KEY_ID = /^key_[0-9A-Za-z]{20}$/
const SECRET = /^pk_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(STORES)("%s: API keys", (store) => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
  })

  afterAll(async () => {
    await server?.stop()
  })

  const create = (body: Json, key?: string, idempotencyKey = newKey()) =>
    api.request("POST", "/v1/api-keys", {
      body,
      idempotencyKey,
      ...(key === undefined ? {} : { key })
    })
  const list = (key?: string) => api.get("/v1/api-keys", key === undefined ? {} : { key })
  const revoke = (id: string, key?: string) =>
    api.request("POST", `/v1/api-keys/${id}/revoke`, key === undefined ? {} : { key })
  const rotate = (id: string, body: Json, key?: string, idempotencyKey = newKey()) =>
    api.request("POST", `/v1/api-keys/${id}/rotate`, {
      body,
      idempotencyKey,
      ...(key === undefined ? {} : { key })
    })
  /** A partner of its own with its first (generated) key, and that key's id. */
  const freshPartner = async (name: string) => {
    const { partnerId, apiKey } = await createPartner(server, name)
    const listed = await list(apiKey)
    expect(listed.status, listed.text).toBe(200)
    return { partnerId, apiKey, keyId: listed.body.data[0].id as string }
  }
  const expectAccepted = async (key: string) => {
    const answer = await list(key)
    expect(answer.status, answer.text).toBe(200)
  }
  const expectRefused = async (key: string) => expectError(await list(key), 401, "invalid_api_key")

  it("creates a key: 201 with its secret once; the secret works; a replay answers the same", async () => {
    const idempotencyKey = newKey()
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const created = await create({ name: "CI deploys", expiresAt }, undefined, idempotencyKey)
    expect(created.status, created.text).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual(CREATED_FIELDS)
    expect(created.body).toMatchObject({ name: "CI deploys", expiresAt })
    expect(created.body.id).toMatch(KEY_ID)
    expect(created.body.createdAt).toMatch(RFC3339)
    expect(created.body.secret).toMatch(SECRET)
    await expectAccepted(created.body.secret)

    const replay = await create({ name: "CI deploys", expiresAt }, undefined, idempotencyKey)
    expect(replay.status).toBe(201)
    expect(replay.text).toBe(created.text)
    // The same key, not a second one.
    const ids = (await list()).body.data.map((k: Json) => k.id)
    expect(ids.filter((id: string) => id === created.body.id)).toHaveLength(1)

    // Another request under the same Idempotency-Key is a conflict, not a key.
    expectError(
      await create({ name: "other" }, undefined, idempotencyKey),
      409,
      "idempotency_conflict"
    )
    // Neither the secret nor its lookup-free part is stored in clear: the replay's copy is sealed.
    const stored = await storedText(server)
    expect(stored).not.toContain(created.body.secret)
    expect(stored).not.toContain(created.body.secret.slice(16))
  })

  it("refuses a create without Idempotency-Key, a past or malformed expiry, a bad name or unknown field", async () => {
    const missing = await api.request("POST", "/v1/api-keys", { body: {} })
    expectError(missing, 400, "missing_idempotency_key")
    expectError(
      await create({ expiresAt: new Date(Date.now() - 1000).toISOString() }),
      400,
      "params_validation",
      ["expiresAt"]
    )
    expectError(await create({ expiresAt: "tomorrow" }), 400, "params_validation", ["expiresAt"])
    expectError(await create({ name: "" }), 400, "params_validation", ["name"])
    expectError(await create({ name: "x".repeat(101) }), 400, "params_validation", ["name"])
    expectError(await create({ secret: "mine" }), 400, "params_validation", ["secret"])
    expectError(await create({}, "pk_nope"), 401, "invalid_api_key")
  })

  it("lists the partner's keys newest first, never a secret, with when each was last used", async () => {
    const { apiKey, keyId } = await freshPartner("Lister")
    const second = await create({ name: "second" }, apiKey)
    await expectAccepted(second.body.secret)
    const listed = await list(apiKey)
    expect(listed.status).toBe(200)
    expect(Object.keys(listed.body)).toEqual(["data"])
    expect(listed.body.data.map((k: Json) => k.id)).toEqual([second.body.id, keyId])
    for (const key of listed.body.data) expect(Object.keys(key).sort()).toEqual(VIEW_FIELDS)
    expect(listed.text).not.toContain(second.body.secret)
    expect(listed.text).not.toContain(apiKey)
    // Both were used (the first to list): a use is recorded, to within a minute.
    for (const key of listed.body.data) expect(key.lastUsedAt).toMatch(RFC3339)
    // Another partner sees none of them.
    const other = await list()
    expect(other.body.data.map((k: Json) => k.id)).not.toContain(keyId)
  })

  it("revokes a key: refused at once, idempotent; never the last active key, nor another partner's", async () => {
    const { apiKey, keyId } = await freshPartner("Revoker")
    expectError(await revoke(keyId, apiKey), 409, "last_active_api_key")
    await expectAccepted(apiKey)

    const spare = await create({ name: "spare" }, apiKey)
    // Another partner's key id is not found, never forbidden.
    expectError(await revoke(keyId), 404, "not_found")
    expectError(await revoke("key_0000000000ZZZZZZZZZZ", apiKey), 404, "not_found")
    expectError(await revoke("nonsense", apiKey), 404, "not_found")

    // Revoking the key the request carries: answered, then refused at once.
    const revoked = await revoke(keyId, apiKey)
    expect(revoked.status, revoked.text).toBe(200)
    expect(Object.keys(revoked.body).sort()).toEqual(VIEW_FIELDS)
    expect(revoked.body.revokedAt).toMatch(RFC3339)
    await expectRefused(apiKey)
    const again = await revoke(keyId, spare.body.secret)
    expect(again.status).toBe(200)
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt)
    // The spare is now the last one.
    expectError(await revoke(spare.body.id, spare.body.secret), 409, "last_active_api_key")
  })

  it("of two revocations racing for a partner's last two keys, exactly one wins", async () => {
    for (let round = 0; round < 4; round++) {
      // Both requests carry a third key, rotated away but still accepted for an hour: it is
      // no "last active key", and neither revocation takes the other request's key from it.
      const { apiKey, keyId } = await freshPartner(`Racer ${round}`)
      const second = await create({}, apiKey)
      const third = await rotate(keyId, { overlapSeconds: 3600 }, apiKey)
      expect(third.status, third.text).toBe(201)
      const answers = await Promise.all([
        revoke(second.body.id, apiKey),
        revoke(third.body.id, apiKey)
      ])
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
      expectError(answers.find((a) => a.status === 409) as ApiResponse, 409, "last_active_api_key")
      const notEnding = (await list(apiKey)).body.data.filter((k: Json) => k.revokedAt === null)
      expect(notEnding).toHaveLength(1)
    }
  })

  it("rotates a key: a new one with the same name, the old one accepted for the overlap only", async () => {
    const { apiKey, keyId } = await freshPartner("Rotator")
    const idempotencyKey = newKey()
    const before = Date.now()
    const rotated = await rotate(keyId, { overlapSeconds: 3600 }, apiKey, idempotencyKey)
    expect(rotated.status, rotated.text).toBe(201)
    expect(Object.keys(rotated.body).sort()).toEqual([...CREATED_FIELDS, "previousKey"].sort())
    expect(rotated.body.secret).toMatch(SECRET)
    expect(rotated.body.id).not.toBe(keyId)
    expect(rotated.body.previousKey.id).toBe(keyId)
    const ends = Date.parse(rotated.body.previousKey.revokedAt)
    expect(ends).toBeGreaterThanOrEqual(before + 3_600_000 - 1000)
    expect(ends).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000)
    // Both work during the overlap.
    await expectAccepted(apiKey)
    await expectAccepted(rotated.body.secret)
    // A replay answers the same secret and rotates nothing more.
    const replay = await rotate(keyId, { overlapSeconds: 3600 }, apiKey, idempotencyKey)
    expect(replay.text).toBe(rotated.text)
    expect((await list(apiKey)).body.data).toHaveLength(2)
    // The old key, already ending, can be revoked now: the new one stays.
    expect((await revoke(keyId, rotated.body.secret)).status).toBe(200)
    await expectRefused(apiKey)

    // Overlap 0: the rotated key stops at once; a stopped key cannot be rotated.
    const now = await rotate(rotated.body.id, { overlapSeconds: 0 }, rotated.body.secret)
    expect(now.status, now.text).toBe(201)
    await expectRefused(rotated.body.secret)
    await expectAccepted(now.body.secret)
    expectError(await rotate(rotated.body.id, {}, now.body.secret), 409, "api_key_inactive")
    expectError(
      await rotate(now.body.id, { overlapSeconds: -1 }, now.body.secret),
      400,
      "params_validation",
      ["overlapSeconds"]
    )
    expectError(
      await rotate(now.body.id, { overlapSeconds: 31 * 86_400 }, now.body.secret),
      400,
      "params_validation",
      ["overlapSeconds"]
    )
    expectError(await rotate(keyId, {}), 404, "not_found")
  })

  it("the default overlap is 24 hours", async () => {
    const { apiKey, keyId } = await freshPartner("Default overlap")
    const rotated = await rotate(keyId, {}, apiKey)
    expect(rotated.status).toBe(201)
    const overlap =
      Date.parse(rotated.body.previousKey.revokedAt) - Date.parse(rotated.body.createdAt)
    expect(overlap).toBe(86_400_000)
  })

  it("an expired key is refused", async () => {
    const { apiKey } = await freshPartner("Expirer")
    const expiresAt = new Date(Date.now() + 1500).toISOString()
    const short = await create({ name: "short", expiresAt }, apiKey)
    expect(short.status, short.text).toBe(201)
    await expectAccepted(short.body.secret)
    await sleep(Date.parse(expiresAt) - Date.now() + 100)
    await expectRefused(short.body.secret)
    expectError(await rotate(short.body.id, {}, apiKey), 409, "api_key_inactive")
  })

  it("keeps no part of the operator's bootstrap key in clear", async () => {
    await expectAccepted(PARTNER_KEY)
    const stored = await storedText(server)
    expect(stored).not.toContain(PARTNER_KEY.slice(0, 16))
    expect(stored).not.toContain(PARTNER_KEY.slice(-8))
  })

  it("records each change in the audit trail, with the key that made it", async () => {
    const { partnerId, apiKey, keyId } = await freshPartner("Audited")
    const created = await create({ name: "audited" }, apiKey)
    const rotated = await rotate(created.body.id, { overlapSeconds: 60 }, apiKey)
    await revoke(created.body.id, apiKey)
    await revoke(created.body.id, apiKey) // already revoked: recorded once
    const entries = await server.runEngine(
      Effect.flatMap(AuditStore, (audit) =>
        audit.list({ partnerId: partnerId as PartnerId, limit: 100 })
      )
    )
    const seen = entries
      .map((e) => [e.action, e.subject, e.actor.kind, (e.actor as { keyId?: string }).keyId])
      .reverse()
    expect(seen).toEqual([
      ["api_key.created", keyId, "embedder", undefined],
      ["api_key.created", created.body.id, "api_key", keyId],
      ["api_key.rotated", created.body.id, "api_key", keyId],
      ["api_key.created", rotated.body.id, "api_key", keyId],
      ["api_key.revoked", created.body.id, "api_key", keyId]
    ])
    const rotation = entries.find((e) => e.action === "api_key.rotated")!
    expect(rotation.before).toEqual({
      id: created.body.id,
      name: "audited",
      expiresAt: null,
      revokedAt: null,
      rotatedTo: null,
      scopes: created.body.scopes
    })
    expect(rotation.after).toEqual({
      id: created.body.id,
      name: "audited",
      expiresAt: null,
      revokedAt: rotated.body.previousKey.revokedAt,
      rotatedTo: rotated.body.id,
      scopes: created.body.scopes
    })
    const text = JSON.stringify(entries)
    expect(text).not.toContain(created.body.secret)
    expect(text).not.toContain(rotated.body.secret)
  })
})
