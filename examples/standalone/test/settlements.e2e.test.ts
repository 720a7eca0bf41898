/**
 * End to end over loopback against the real standalone server: the crypto
 * settlement routes (SPEC.md 4.2 and 4.5, WIRE.md section 3). What should
 * succeed goes through the typed client (@pay/client), and so do refusals by
 * the engine (checked on the client's error and on the raw answer). Malformed
 * requests, missing headers, replays compared byte for byte, and what shows
 * the engine normalising ids stay on raw HTTP: the client sends the
 * definition's encoding of what it decoded, so an EVM address it is given in
 * lowercase already leaves it checksummed.
 */
import { capturingConsole } from "@pay/core/contracts"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createCryptoSettlements as createEndpoint,
  updateCryptoSettlement as updateEndpoint
} from "../../../packages/core/src/merchants/SettlementApi.js"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  expectError,
  expectRefusal,
  type Json,
  newKey,
  type PayClient,
  payClient,
  SETTLEMENT_ID,
  STORES,
  startServer,
  uniqueToken,
  unknownId,
  whole
} from "./e2e-support.js"

const decodeCreated = Schema.decodeUnknownSync(createEndpoint.successSchema)
const decodeUpdated = Schema.decodeUnknownSync(updateEndpoint.successSchema)

/** A crypto settlement as the typed client answers it. */
type Settlement = Awaited<ReturnType<PayClient["settlements"]["create"]>>["settlements"][number]
type Two = readonly [Settlement, Settlement]
type One = readonly [Settlement]

// USDC on Base, sent lowercase; the engine answers the EIP-55 checksum form.
const USDC_BASE = "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
const USDC_BASE_CHECKSUM = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const ETH_BASE = "eip155:8453/slip44:60"
const USDC_ETHEREUM = "eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
const WALLET_BASE = "eip155:8453:0x1234567890abcdef1234567890abcdef12345678"
const WALLET_BASE_CHECKSUM = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"
const WALLET2_BASE = "eip155:8453:0xabcdefabcdefabcdefabcdefabcdefabcdefabcd"
const WALLET2_BASE_CHECKSUM = "eip155:8453:0xABcdEFABcdEFabcdEfAbCdefabcdeFABcDEFabCD"
const WALLET_ETHEREUM = "eip155:1:0x1234567890abcdef1234567890abcdef12345678"
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
const USDC_SOLANA = `${SOLANA}/token:EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v`
const WALLET_SOLANA = `${SOLANA}:7S3P4HxJpyyigGzodYwHtCxZyUQe9JiBMHyRWXArAaKv`

// The sandbox chain's USDC: the one asset the server's networks (the sandbox chain only) pay.
const USDC_SANDBOX = "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116"
const WALLET_SANDBOX = "eip155:31337:0x1234567890AbcdEF1234567890aBcdef12345678"
const WARNED = "settlement saved in an asset no configured network pays"

/** A distinct ERC-20 asset on Base per number. */
const baseToken = (n: number) => `eip155:8453/erc20:0x${n.toString(16).padStart(40, "0")}`

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  let otherKey: string
  /** The typed client with the bootstrap partner's key, and with the other partner's. */
  let pay: PayClient
  let other: PayClient
  const api = client(() => server.baseUrl)
  const logs = capturingConsole()
  /** The warning lines about unpayable settlements the server logged for a merchant. */
  const warned = (merchantId: string): Array<Json> =>
    logs.lines
      .map((line) => JSON.parse(line))
      .filter((l) => l.message === WARNED && l.merchantId === merchantId)

  beforeAll(async () => {
    server = await startServer(store, { logFormat: "json" }, { logConsole: logs.console })
    otherKey = (await createPartner(server, "Other")).apiKey
    pay = payClient(server)
    other = payClient(server, otherKey)
  })

  afterAll(async () => {
    await server?.stop()
  })

  const newMerchant = async (): Promise<string> =>
    (await createMerchant(pay, `Settle ${uniqueToken()}`)).id

  /** POST .../settlements/crypto over raw HTTP; `idempotencyKey: null` sends none. */
  const register = (
    merchantId: string,
    settlements: unknown,
    options: { readonly idempotencyKey?: string | null; readonly key?: string } = {}
  ) =>
    api.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
      body: { settlements },
      ...(options.idempotencyKey === null
        ? {}
        : { idempotencyKey: options.idempotencyKey ?? newKey() }),
      ...(options.key === undefined ? {} : { key: options.key })
    })

  /** The merchant's crypto settlements, read through the client (the whole answer). */
  const liveSettlements = async (merchantId: string) =>
    whole(pay, await pay.settlements.list(merchantId)).crypto

  /** Registers through the client (201 or it rejects); the settlements created. */
  const registered = async (
    merchantId: string,
    settlements: ReadonlyArray<{ readonly asset: string; readonly destination: string }>,
    idempotencyKey?: string
  ) =>
    (
      await pay.settlements.create(
        merchantId,
        settlements,
        idempotencyKey === undefined ? {} : { idempotencyKey }
      )
    ).settlements

  describe("POST /v1/merchants/{id}/settlements/crypto", () => {
    it("201 with {settlements: [{id, configId, asset, destination}]}, EVM addresses checksummed", async () => {
      const merchantId = await newMerchant()
      // Raw: the client would send the addresses checksummed already.
      const response = await register(merchantId, [{ asset: USDC_BASE, destination: WALLET_BASE }])
      expect(response.status, response.text).toBe(201)
      const { settlements } = decodeCreated(response.body)
      // Base is not among the server's networks (the sandbox chain only): a warning beside them.
      expect(Object.keys(response.body)).toEqual(["settlements", "warnings"])
      expect(settlements).toHaveLength(1)
      const [settlement] = settlements
      expect(Object.keys(response.body.settlements[0]).sort()).toEqual(
        ["asset", "configId", "destination", "id"].sort()
      )
      expect(settlement?.id).toMatch(SETTLEMENT_ID)
      expect(settlement).toEqual({
        id: settlement?.id,
        configId: settlement?.id,
        asset: USDC_BASE_CHECKSUM,
        destination: WALLET_BASE_CHECKSUM
      })
      expect(await liveSettlements(merchantId)).toEqual(settlements)
    })

    it("several entries in one request, in order; non-EVM ids are kept as given", async () => {
      const merchantId = await newMerchant()
      // Raw, for the same reason: the engine's own checksumming is under test.
      const entries = [
        { asset: USDC_BASE, destination: WALLET_BASE },
        { asset: ETH_BASE, destination: WALLET2_BASE },
        { asset: USDC_ETHEREUM, destination: WALLET_ETHEREUM },
        { asset: USDC_SOLANA, destination: WALLET_SOLANA }
      ]
      const response = await register(merchantId, entries)
      expect(response.status, response.text).toBe(201)
      const { settlements } = decodeCreated(response.body)
      expect(settlements.map((s) => [s.asset, s.destination])).toEqual([
        [USDC_BASE_CHECKSUM, WALLET_BASE_CHECKSUM],
        [ETH_BASE, WALLET2_BASE_CHECKSUM],
        [
          "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
          "eip155:1:0x1234567890AbcdEF1234567890aBcdef12345678"
        ],
        [USDC_SOLANA, WALLET_SOLANA]
      ])
      expect(new Set(settlements.map((s) => s.id)).size).toBe(4)
      expect((await liveSettlements(merchantId)).map((s) => s.id).sort()).toEqual(
        settlements.map((s) => s.id).sort()
      )
    })

    it("without Idempotency-Key: 400 missing_idempotency_key, nothing stored", async () => {
      const merchantId = await newMerchant()
      const response = await register(
        merchantId,
        [{ asset: USDC_BASE, destination: WALLET_BASE }],
        {
          idempotencyKey: null
        }
      )
      expectError(response, 400, "missing_idempotency_key", ["Idempotency-Key"])
      expect(await liveSettlements(merchantId)).toEqual([])
    })

    it("an Idempotency-Key over 255 characters: 400", async () => {
      const merchantId = await newMerchant()
      const response = await register(
        merchantId,
        [{ asset: USDC_BASE, destination: WALLET_BASE }],
        {
          idempotencyKey: "k".repeat(256)
        }
      )
      expectError(response, 400, "params_validation", ["Idempotency-Key"])
      expect(await liveSettlements(merchantId)).toEqual([])
    })

    it("an idempotent replay returns the same ids and stores nothing more", async () => {
      const merchantId = await newMerchant()
      const key = newKey()
      const entries = [
        { asset: USDC_BASE, destination: WALLET_BASE },
        { asset: ETH_BASE, destination: WALLET_BASE }
      ]
      const first = await register(merchantId, entries, { idempotencyKey: key })
      const second = await register(merchantId, entries, { idempotencyKey: key })
      expect(first.status, first.text).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect(await liveSettlements(merchantId)).toHaveLength(2)
    })

    it("the same key with another body: 409 idempotency_conflict", async () => {
      const merchantId = await newMerchant()
      const key = newKey()
      await registered(merchantId, [{ asset: USDC_BASE, destination: WALLET_BASE }], key)
      await expectRefusal(
        pay,
        pay.settlements.create(merchantId, [{ asset: ETH_BASE, destination: WALLET_BASE }], {
          idempotencyKey: key
        }),
        409,
        "idempotency_conflict"
      )
      expect((await liveSettlements(merchantId)).map((s) => s.asset)).toEqual([USDC_BASE_CHECKSUM])
    })

    it("the same key and body for another merchant is not a replay of the first merchant's answer", async () => {
      const first = await newMerchant()
      const second = await newMerchant()
      const key = newKey()
      const entries = [{ asset: USDC_BASE, destination: WALLET_BASE }]
      const forFirst = await register(first, entries, { idempotencyKey: key })
      expect(forFirst.status, forFirst.text).toBe(201)
      const forSecond = await register(second, entries, { idempotencyKey: key })
      // Either a request of its own (201 with the second merchant's settlement) or refused as a
      // different request under a used key (409); never the first merchant's settlements.
      if (forSecond.status === 201) {
        expect(forSecond.text, "the first merchant's answer was replayed").not.toBe(forFirst.text)
        const stored = await liveSettlements(second)
        expect(stored.map((s) => s.id)).toEqual(forSecond.body.settlements.map((s: Json) => s.id))
      } else {
        expectError(forSecond, 409, "idempotency_conflict")
      }
    })

    it("0 entries or 51 entries: 400 naming settlements; 50 entries: 201", async () => {
      const merchantId = await newMerchant()
      expectError(await register(merchantId, []), 400, "params_validation", ["settlements"])
      const many = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ asset: baseToken(i + 1), destination: WALLET_BASE }))
      expectError(await register(merchantId, many(51)), 400, "params_validation", ["settlements"])
      expect(await liveSettlements(merchantId)).toEqual([])
      expect(await registered(merchantId, many(50))).toHaveLength(50)
      expect(await liveSettlements(merchantId)).toHaveLength(50)
    })

    it("settlements missing or not an array: 400 naming settlements", async () => {
      const merchantId = await newMerchant()
      const noList = await api.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
        idempotencyKey: newKey(),
        body: {}
      })
      expectError(noList, 400, "params_validation", ["settlements"])
      expectError(
        await register(merchantId, { asset: USDC_BASE, destination: WALLET_BASE }),
        400,
        "params_validation",
        ["settlements"]
      )
    })

    it("invalid CAIP-19 and CAIP-10 ids: 400 naming settlements.0.asset and settlements.1.destination", async () => {
      const merchantId = await newMerchant()
      const response = await register(merchantId, [
        { asset: "usdc", destination: WALLET_BASE },
        { asset: ETH_BASE, destination: "0x1234567890abcdef1234567890abcdef12345678" }
      ])
      expectError(response, 400, "params_validation", [
        "settlements.0.asset",
        "settlements.1.destination"
      ])
      expect(await liveSettlements(merchantId)).toEqual([])
    })

    it.each([
      [
        "a bad checksum",
        "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02914",
        WALLET_BASE,
        "asset"
      ],
      ["a short address", "eip155:8453/erc20:0x1234", WALLET_BASE, "asset"],
      ["a chain id with a leading zero", "eip155:08453/slip44:60", WALLET_BASE, "asset"],
      [
        "a destination with a bad checksum",
        USDC_BASE,
        "eip155:8453:0x1234567890ABCDEF1234567890abcdef12345678",
        "destination"
      ],
      ["a destination that is a CAIP-2 chain id", USDC_BASE, "eip155:8453", "destination"],
      ["a missing destination", USDC_BASE, undefined, "destination"],
      ["an asset that is a number", 8453, WALLET_BASE, "asset"]
    ])("%s: 400 naming the field", async (_, asset, destination, field) => {
      const merchantId = await newMerchant()
      const response = await register(merchantId, [{ asset, destination }])
      expectError(response, 400, "params_validation", [`settlements.0.${field}`])
    })

    it("an unknown field in an entry: 400 naming it", async () => {
      const merchantId = await newMerchant()
      const response = await register(merchantId, [
        { asset: USDC_BASE, destination: WALLET_BASE, network: "base" }
      ])
      expectError(response, 400, "params_validation", ["settlements.0.network"])
    })

    it("a destination on another chain: 400 naming it, and nothing of the request is stored", async () => {
      const merchantId = await newMerchant()
      const response = await register(merchantId, [
        { asset: ETH_BASE, destination: WALLET_BASE },
        { asset: USDC_BASE, destination: WALLET_ETHEREUM }
      ])
      expectError(response, 400, "params_validation", ["settlements.1.destination"])
      expect(await liveSettlements(merchantId)).toEqual([])
    })

    it("a request refused for a wrong chain can be retried with the same key", async () => {
      const merchantId = await newMerchant()
      const key = newKey()
      const wrong = await register(
        merchantId,
        [{ asset: USDC_BASE, destination: WALLET_ETHEREUM }],
        {
          idempotencyKey: key
        }
      )
      expectError(wrong, 400, "params_validation", ["settlements.0.destination"])
      const fixed = await registered(
        merchantId,
        [{ asset: USDC_BASE, destination: WALLET_BASE }],
        key
      )
      expect(fixed.map((s) => s.destination)).toEqual([WALLET_BASE_CHECKSUM])
    })

    it("an asset the merchant already has: 409 settlement_asset_conflict, all or none, replayed alike", async () => {
      const merchantId = await newMerchant()
      await registered(merchantId, [{ asset: USDC_BASE, destination: WALLET_BASE }])

      const key = newKey()
      const entries = [
        { asset: ETH_BASE, destination: WALLET_BASE },
        // The same asset in its checksum spelling.
        { asset: USDC_BASE_CHECKSUM, destination: WALLET2_BASE }
      ]
      const conflict = await register(merchantId, entries, { idempotencyKey: key })
      expectError(conflict, 409, "settlement_asset_conflict")
      const stored = await liveSettlements(merchantId)
      expect(stored.map((s) => [s.asset, s.destination])).toEqual([
        [USDC_BASE_CHECKSUM, WALLET_BASE_CHECKSUM]
      ])

      const replay = await register(merchantId, entries, { idempotencyKey: key })
      expect(replay.status).toBe(409)
      expect(replay.text).toBe(conflict.text)
      expect(await liveSettlements(merchantId)).toEqual(stored)
    })

    it("the same asset twice in one request: 409 settlement_asset_conflict, nothing stored", async () => {
      const merchantId = await newMerchant()
      const response = await register(merchantId, [
        { asset: ETH_BASE, destination: WALLET_BASE },
        { asset: USDC_BASE, destination: WALLET_BASE },
        { asset: USDC_BASE_CHECKSUM, destination: WALLET2_BASE }
      ])
      expectError(response, 409, "settlement_asset_conflict")
      expect(await liveSettlements(merchantId)).toEqual([])
    })

    it("an unknown or malformed merchant id: 404 not_found", async () => {
      await expectRefusal(
        pay,
        pay.settlements.create(unknownId("mrch"), [{ asset: USDC_BASE, destination: WALLET_BASE }]),
        404,
        "not_found"
      )
      // The client answers a malformed path id itself, so it goes over raw HTTP.
      expectError(
        await register("nope", [{ asset: USDC_BASE, destination: WALLET_BASE }]),
        404,
        "not_found"
      )
    })
  })

  describe("settlements the server's networks cannot pay (it runs the sandbox chain only)", () => {
    it("a sandbox settlement answers SPEC.md's {settlements} alone, and logs nothing", async () => {
      const merchantId = await newMerchant()
      const response = await register(merchantId, [
        { asset: USDC_SANDBOX, destination: WALLET_SANDBOX }
      ])
      expect(response.status, response.text).toBe(201)
      expect(Object.keys(response.body)).toEqual(["settlements"])
      expect(warned(merchantId)).toEqual([])
    })

    it("a Base settlement is saved, with a warning in words in the answer and a log line; a replay answers the same and logs nothing more", async () => {
      const merchantId = await newMerchant()
      const key = newKey()
      const entries = [
        { asset: USDC_BASE, destination: WALLET_BASE },
        { asset: USDC_SANDBOX, destination: WALLET_SANDBOX },
        { asset: ETH_BASE, destination: WALLET2_BASE }
      ]
      const response = await register(merchantId, entries, { idempotencyKey: key })
      expect(response.status, response.text).toBe(201)
      const created = decodeCreated(response.body)
      // All saved: the network may be added later.
      expect(created.settlements.map((s) => s.asset)).toEqual([
        USDC_BASE_CHECKSUM,
        USDC_SANDBOX,
        ETH_BASE
      ])
      expect((await liveSettlements(merchantId)).map((s) => s.asset).sort()).toEqual(
        [USDC_BASE_CHECKSUM, USDC_SANDBOX, ETH_BASE].sort()
      )
      expect(response.body.warnings).toEqual([
        {
          code: "asset_not_payable",
          message:
            `Wallets are not offered USDC on Base (${USDC_BASE_CHECKSUM}): Base (eip155:8453) is not one of the engine's networks: ` +
            "it runs Pay sandbox (eip155:31337). The settlement is saved and is used once Base is configured. " +
            "Until then its payments can be paid in USDC on Pay sandbox only.",
          asset: USDC_BASE_CHECKSUM
        },
        {
          code: "asset_not_payable",
          message:
            `Wallets are not offered ${ETH_BASE}: Base (eip155:8453) is not one of the engine's networks: ` +
            "it runs Pay sandbox (eip155:31337). The settlement is saved and is used once Base is configured. " +
            "Until then its payments can be paid in USDC on Pay sandbox only.",
          asset: ETH_BASE
        }
      ])
      expect(
        warned(merchantId).map((l) => [l.level, l.merchantId, l.asset, l.code, l.reason])
      ).toEqual(
        response.body.warnings.map((w: Json) => ["warning", merchantId, w.asset, w.code, w.message])
      )

      const replay = await register(merchantId, entries, { idempotencyKey: key })
      expect(replay.status).toBe(201)
      expect(replay.text).toBe(response.text)
      expect(warned(merchantId)).toHaveLength(2)
    })

    it("/openapi.json declares the optional warnings of the create and update answers", async () => {
      const document = (await api.get("/openapi.json", { key: null })).body
      const schemaOf = (path: string, method: string, status: string) => {
        const schema =
          document.paths[path][method].responses[status].content["application/json"].schema
        return schema.$ref === undefined
          ? schema
          : document.components.schemas[schema.$ref.split("/").pop()]
      }
      for (const [path, method, status] of [
        ["/v1/merchants/{merchantId}/settlements/crypto", "post", "201"],
        ["/v1/merchants/{merchantId}/settlements/crypto/{id}", "put", "200"]
      ] as const) {
        const answer = schemaOf(path, method, status)
        expect(answer.required ?? []).not.toContain("warnings")
        expect(answer.properties.warnings.items.$ref).toBe("#/components/schemas/SettlementWarning")
      }
      const warning = document.components.schemas.SettlementWarning
      expect(warning.required.sort()).toEqual(["asset", "code", "message"])
      expect(warning.properties.code.enum).toEqual(["asset_not_payable"])
    })

    it("a merchant whose only settlement is on Base is told its payments offer no way to pay, through the typed client too", async () => {
      const merchantId = await newMerchant()
      const answer = whole(
        pay,
        await pay.settlements.create(merchantId, [
          { asset: USDC_BASE_CHECKSUM, destination: WALLET_BASE_CHECKSUM }
        ])
      )
      expect(answer.warnings?.map((w) => [w.code, w.asset])).toEqual([
        ["asset_not_payable", USDC_BASE_CHECKSUM]
      ])
      expect(answer.warnings?.[0]?.message).toMatch(
        /Until then no settlement of this merchant can be paid, so its payments offer wallets no way to pay\.$/
      )
      expect(warned(merchantId)).toHaveLength(1)
    })
  })

  describe("GET /v1/merchants/{id}/settlements", () => {
    it("answers {crypto, fiat: []}", async () => {
      const merchantId = await newMerchant()
      expect(await pay.settlements.list(merchantId)).toEqual({ crypto: [], fiat: [] })
      const empty = pay.lastAnswer()
      expect(empty.status).toBe(200)
      expect(empty.body).toEqual({ crypto: [], fiat: [] })
      const created = await registered(merchantId, [{ asset: USDC_BASE, destination: WALLET_BASE }])
      const listed = whole(pay, await pay.settlements.list(merchantId))
      expect(listed).toEqual({ crypto: created, fiat: [] })
      expect(Object.keys(pay.lastAnswer().body).sort()).toEqual(["crypto", "fiat"])
    })

    it("an unknown merchant: 404", async () => {
      await expectRefusal(pay, pay.settlements.list(unknownId("mrch")), 404, "not_found")
    })
  })

  describe("PUT /v1/merchants/{id}/settlements/crypto/{id}", () => {
    const put = (merchantId: string, id: string, body: unknown) =>
      api.request("PUT", `/v1/merchants/${merchantId}/settlements/crypto/${id}`, { body })

    it("changes the destination: 200 {settlement}, checksummed", async () => {
      const merchantId = await newMerchant()
      const [created] = await registered(merchantId, [
        { asset: USDC_BASE, destination: WALLET_BASE }
      ])
      const id = created!.id
      // Raw: the client would send the address checksummed already.
      const response = await put(merchantId, id, { destination: WALLET2_BASE })
      expect(response.status, response.text).toBe(200)
      // Base is not among the server's networks: warned about again (its own test is below).
      expect(Object.keys(response.body)).toEqual(["settlement", "warnings"])
      expect(decodeUpdated(response.body).settlement).toEqual({
        id,
        configId: id,
        asset: USDC_BASE_CHECKSUM,
        destination: WALLET2_BASE_CHECKSUM
      })
      expect(await liveSettlements(merchantId)).toEqual([response.body.settlement])

      // And back, through the client.
      const back = whole(pay, await pay.settlements.update(merchantId, id, WALLET_BASE))
      expect(back).toEqual({
        settlement: {
          id,
          configId: id,
          asset: USDC_BASE_CHECKSUM,
          destination: WALLET_BASE_CHECKSUM
        },
        warnings: [
          expect.objectContaining({ code: "asset_not_payable", asset: USDC_BASE_CHECKSUM })
        ]
      })
      expect(await liveSettlements(merchantId)).toEqual([back.settlement])
    })

    it("a destination on another chain: 400 naming destination, unchanged", async () => {
      const merchantId = await newMerchant()
      const [{ id }] = (await registered(merchantId, [
        { asset: USDC_BASE, destination: WALLET_BASE }
      ])) as One
      expectError(
        await put(merchantId, id, { destination: WALLET_ETHEREUM }),
        400,
        "params_validation",
        ["destination"]
      )
      expect((await liveSettlements(merchantId))[0]?.destination).toBe(WALLET_BASE_CHECKSUM)
    })

    it("an invalid, missing or extra field: 400 naming it", async () => {
      const merchantId = await newMerchant()
      const [{ id }] = (await registered(merchantId, [
        { asset: USDC_BASE, destination: WALLET_BASE }
      ])) as One
      expectError(await put(merchantId, id, { destination: "nope" }), 400, "params_validation", [
        "destination"
      ])
      expectError(await put(merchantId, id, {}), 400, "params_validation", ["destination"])
      expectError(
        await put(merchantId, id, { destination: WALLET2_BASE, asset: ETH_BASE }),
        400,
        "params_validation",
        ["asset"]
      )
      expect((await liveSettlements(merchantId))[0]?.destination).toBe(WALLET_BASE_CHECKSUM)
    })

    it("an unknown or malformed settlement id: 404 not_found", async () => {
      const merchantId = await newMerchant()
      await expectRefusal(
        pay,
        pay.settlements.update(merchantId, unknownId("crypto"), WALLET_BASE),
        404,
        "not_found"
      )
      // The client answers a malformed path id itself, so it goes over raw HTTP.
      expectError(await put(merchantId, "nope", { destination: WALLET_BASE }), 404, "not_found")
    })

    it("another merchant's settlement (same partner): 404", async () => {
      const owner = await newMerchant()
      const stranger = await newMerchant()
      const [{ id }] = (await registered(owner, [
        { asset: USDC_BASE, destination: WALLET_BASE }
      ])) as One
      await expectRefusal(pay, pay.settlements.update(stranger, id, WALLET2_BASE), 404, "not_found")
      await expectRefusal(pay, pay.settlements.delete(stranger, id), 404, "not_found")
      expect((await liveSettlements(owner))[0]?.destination).toBe(WALLET_BASE_CHECKSUM)
    })
  })

  describe("DELETE /v1/merchants/{id}/settlements/crypto/{id}", () => {
    it("{id, deleted: true}, again the same; then the asset can be registered again", async () => {
      const merchantId = await newMerchant()
      const [usdc, eth] = (await registered(merchantId, [
        { asset: USDC_BASE, destination: WALLET_BASE },
        { asset: ETH_BASE, destination: WALLET_BASE }
      ])) as Two
      expect(await pay.settlements.delete(merchantId, usdc.id)).toEqual({
        id: usdc.id,
        deleted: true
      })
      const first = pay.lastAnswer()
      expect(first.status, first.text).toBe(200)
      expect(Object.keys(first.body).sort()).toEqual(["deleted", "id"])
      expect(await pay.settlements.delete(merchantId, usdc.id)).toEqual({
        id: usdc.id,
        deleted: true
      })
      const second = pay.lastAnswer()
      expect(second.status, second.text).toBe(200)
      expect(second.body).toEqual(first.body)

      expect(await liveSettlements(merchantId)).toEqual([eth])
      const profile = await pay.merchants.get(merchantId)
      expect(profile.merchant.settlements).toEqual({ crypto: [eth], fiat: [] })

      await expectRefusal(
        pay,
        pay.settlements.update(merchantId, usdc.id, WALLET2_BASE),
        404,
        "not_found"
      )

      const again = await registered(merchantId, [{ asset: USDC_BASE, destination: WALLET2_BASE }])
      expect(again[0]!.id).not.toBe(usdc.id)
      expect(again[0]!.destination).toBe(WALLET2_BASE_CHECKSUM)
      expect((await liveSettlements(merchantId)).map((s) => s.asset).sort()).toEqual(
        [ETH_BASE, USDC_BASE_CHECKSUM].sort()
      )
    })

    it("an unknown settlement: 404", async () => {
      const merchantId = await newMerchant()
      await expectRefusal(
        pay,
        pay.settlements.delete(merchantId, unknownId("crypto")),
        404,
        "not_found"
      )
    })
  })

  describe("the merchant profile", () => {
    it("lists the live crypto settlements, with fiat: []", async () => {
      const merchantId = await newMerchant()
      const [usdc, eth] = (await registered(merchantId, [
        { asset: USDC_BASE, destination: WALLET_BASE },
        { asset: ETH_BASE, destination: WALLET2_BASE }
      ])) as Two
      const before = await pay.merchants.get(merchantId)
      expect(
        [...before.merchant.settlements.crypto].sort((a, b) => a.id.localeCompare(b.id))
      ).toEqual([usdc, eth].sort((a, b) => a.id.localeCompare(b.id)))
      expect(before.merchant.settlements.fiat).toEqual([])
      await pay.settlements.delete(merchantId, eth.id)
      const after = await pay.merchants.get(merchantId)
      expect(after.merchant.settlements.crypto).toEqual([usdc])
    })
  })

  describe("another partner's merchant", () => {
    it("every settlement route with another partner's key: 403 forbidden, nothing changes", async () => {
      const merchantId = await newMerchant()
      const created = await registered(merchantId, [{ asset: USDC_BASE, destination: WALLET_BASE }])
      const { id } = created[0]!
      await expectRefusal(other, other.settlements.list(merchantId), 403, "forbidden")
      await expectRefusal(
        other,
        other.settlements.create(merchantId, [{ asset: ETH_BASE, destination: WALLET_BASE }]),
        403,
        "forbidden"
      )
      await expectRefusal(
        other,
        other.settlements.update(merchantId, id, WALLET2_BASE),
        403,
        "forbidden"
      )
      await expectRefusal(
        other,
        other.settlements.update(merchantId, unknownId("crypto"), WALLET2_BASE),
        403,
        "forbidden"
      )
      await expectRefusal(other, other.settlements.delete(merchantId, id), 403, "forbidden")
      expect(await liveSettlements(merchantId)).toEqual(created)
    })
  })

  describe("a deleted merchant", () => {
    it("its settlement routes answer 404", async () => {
      const merchantId = await newMerchant()
      const created = await registered(merchantId, [{ asset: USDC_BASE, destination: WALLET_BASE }])
      const { id } = created[0]!
      expect(await pay.merchants.delete(merchantId)).toEqual({ id: merchantId, deleted: true })
      await expectRefusal(pay, pay.settlements.list(merchantId), 404, "not_found")
      await expectRefusal(
        pay,
        pay.settlements.create(merchantId, [{ asset: ETH_BASE, destination: WALLET_BASE }]),
        404,
        "not_found"
      )
      await expectRefusal(
        pay,
        pay.settlements.update(merchantId, id, WALLET2_BASE),
        404,
        "not_found"
      )
      await expectRefusal(pay, pay.settlements.delete(merchantId, id), 404, "not_found")
    })
  })
})
