/**
 * End to end over loopback against the real standalone server, on both
 * stores: the settlement changes a partner makes through the API are in the
 * audit trail, one entry each with the old and new destination and the key
 * that made it, written with the change; a replay, a repeated removal and a
 * refused change record nothing.
 */
import { type AuditEntry, AuditStore, type PartnerId } from "@pay/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createPartner,
  type E2eServer,
  expectError,
  newKey,
  STORES,
  startServer
} from "./e2e-support.js"

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const ETH_BASE = "eip155:8453/slip44:60"
const WALLET = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"
const WALLET2 = "eip155:8453:0xABcdEFABcdEFabcdEfAbCdefabcdeFABcDEFabCD"
const WALLET_ETHEREUM = "eip155:1:0x1234567890AbcdEF1234567890aBcdef12345678"

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  const api = client(() => server.baseUrl)

  beforeAll(async () => {
    server = await startServer(store)
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** The partner's audit entries, newest first, read from the server's own store. */
  const auditOf = (partnerId: string) =>
    server.runEngine(
      Effect.flatMap(AuditStore, (audit) =>
        audit.list({ partnerId: partnerId as PartnerId, limit: 100 })
      )
    )
  /** The settlement entries only: a new partner's trail also records its first key. */
  const settlementsOf = async (partnerId: string) =>
    (await auditOf(partnerId)).filter((e) => e.action.startsWith("settlement."))
  const summary = (entries: ReadonlyArray<AuditEntry>) =>
    entries.map((e) => [e.action, e.subject, e.merchantId, e.before, e.after])

  it("create, change and remove over HTTP: exactly 3 entries with old and new values; replays, repeats and refusals record none", async () => {
    // A partner of its own, so its trail holds this test's entries only.
    const { partnerId, apiKey: key } = await createPartner(server, "Audited")
    const created = await api.request("POST", "/v1/merchants", {
      key,
      idempotencyKey: newKey(),
      body: { merchantName: "Audited Shop", merchantEmail: "a@shop.example" }
    })
    expect(created.status, created.text).toBe(201)
    const merchantId: string = created.body.merchant.id
    const path = `/v1/merchants/${merchantId}/settlements/crypto`

    const registerKey = newKey()
    const register = () =>
      api.request("POST", path, {
        key,
        idempotencyKey: registerKey,
        body: { settlements: [{ asset: USDC_BASE, destination: WALLET }] }
      })
    const first = await register()
    expect(first.status, first.text).toBe(201)
    const id: string = first.body.settlements[0].id
    expect(await settlementsOf(partnerId)).toHaveLength(1)
    // The same request again (its Idempotency-Key): the first answer, and no new entry.
    const replay = await register()
    expect(replay.text).toBe(first.text)
    expect(await settlementsOf(partnerId)).toHaveLength(1)

    const updated = await api.request("PUT", `${path}/${id}`, {
      key,
      body: { destination: WALLET2 }
    })
    expect(updated.status, updated.text).toBe(200)
    const removed = await api.request("DELETE", `${path}/${id}`, { key })
    expect(removed.status, removed.text).toBe(200)

    // Gone already, refused, or clashing: nothing changes, nothing is recorded.
    expect((await api.request("DELETE", `${path}/${id}`, { key })).status).toBe(200)
    expect(
      (await api.request("PUT", `${path}/${id}`, { key, body: { destination: WALLET } })).status
    ).toBe(404)
    const other = await api.request("POST", path, {
      key,
      idempotencyKey: newKey(),
      body: { settlements: [{ asset: ETH_BASE, destination: WALLET }] }
    })
    expect(other.status, other.text).toBe(201)
    const otherId: string = other.body.settlements[0].id
    const before = await auditOf(partnerId)
    expectError(
      await api.request("POST", path, {
        key,
        idempotencyKey: newKey(),
        body: {
          settlements: [
            { asset: USDC_BASE, destination: WALLET },
            { asset: ETH_BASE, destination: WALLET2 }
          ]
        }
      }),
      409,
      "settlement_asset_conflict"
    )
    expectError(
      await api.request("PUT", `${path}/${otherId}`, {
        key,
        body: { destination: WALLET_ETHEREUM }
      }),
      400,
      "params_validation",
      ["destination"]
    )
    expect(await auditOf(partnerId)).toEqual(before)

    const entries = await settlementsOf(partnerId)
    const ofFirst = entries.filter((e) => e.subject === id)
    expect(ofFirst).toHaveLength(3)
    expect(summary(ofFirst)).toEqual([
      ["settlement.deleted", id, merchantId, { asset: USDC_BASE, destination: WALLET2 }, null],
      [
        "settlement.updated",
        id,
        merchantId,
        { asset: USDC_BASE, destination: WALLET },
        { asset: USDC_BASE, destination: WALLET2 }
      ],
      ["settlement.created", id, merchantId, null, { asset: USDC_BASE, destination: WALLET }]
    ])
    expect(summary(entries)).toEqual([
      ["settlement.created", otherId, merchantId, null, { asset: ETH_BASE, destination: WALLET }],
      ...summary(ofFirst)
    ])
    // Besides them, only the partner's first key, created by the embedder (the test's engine).
    const all = await auditOf(partnerId)
    expect(all.map((e) => e.action).filter((a) => !a.startsWith("settlement."))).toEqual([
      "api_key.created"
    ])
    const keyId = (await api.get("/v1/api-keys", { key })).body.data[0].id
    for (const e of entries) {
      expect(e.partnerId).toBe(partnerId)
      expect(e.id).toMatch(/^aud_[0-9A-Za-z]{20}$/)
      // The key that made it, by its public id.
      expect(e.actor).toEqual({ kind: "api_key", keyId })
    }
    // Written when the change was made, the newest first.
    const times = entries.map((e) => e.at.getTime())
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    expect(Date.now() - times[times.length - 1]!).toBeLessThan(60_000)
  })

  it("another partner's changes are not in a partner's trail, nor a forbidden attempt", async () => {
    const owner = await createPartner(server, "Owner")
    const stranger = await createPartner(server, "Stranger")
    const created = await api.request("POST", "/v1/merchants", {
      key: owner.apiKey,
      idempotencyKey: newKey(),
      body: { merchantName: "Owned", merchantEmail: "o@shop.example" }
    })
    const path = `/v1/merchants/${created.body.merchant.id}/settlements/crypto`
    const registered = await api.request("POST", path, {
      key: owner.apiKey,
      idempotencyKey: newKey(),
      body: { settlements: [{ asset: USDC_BASE, destination: WALLET }] }
    })
    expect(registered.status, registered.text).toBe(201)
    const id: string = registered.body.settlements[0].id
    expectError(
      await api.request("DELETE", `${path}/${id}`, { key: stranger.apiKey }),
      403,
      "forbidden"
    )
    expect(summary(await settlementsOf(owner.partnerId)).map(([action]) => action)).toEqual([
      "settlement.created"
    ])
    // The stranger's trail holds its own first key only.
    expect((await auditOf(stranger.partnerId)).map((e) => e.action)).toEqual(["api_key.created"])
  })
})
