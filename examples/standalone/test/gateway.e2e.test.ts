/**
 * A wallet pays through the gateway, over HTTP, on the sandbox chain (a real
 * EVM in the server): options, fetch, an EIP-712 signature, confirm, and the
 * payment succeeds with the tokens moved. On SQLite and on PostgreSQL.
 */
import { GatewayStore } from "@pay/core"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Client,
  client,
  type E2eServer,
  type Json,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  BASE_DESTINATION,
  BASE_USDC,
  type Buyer,
  confirm,
  fund,
  merchantSettledIn,
  newBuyer,
  options,
  paymentFor,
  receivedBalance,
  settledMerchant,
  signAction,
  usdcBalance,
  WALLET_ICON,
  WALLET_NAME,
  walletClient
} from "./gateway-support.js"

describe.each(STORES)("the wallet gateway on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    merchantId = await settledMerchant(partner)
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
  })

  it("GET /sandbox lists the JSON-RPC methods /sandbox/rpc passes; the others are refused", async () => {
    const described = await partner.get("/sandbox", { key: null })
    expect(described.status, described.text).toBe(200)
    expect(described.body.rpcMethods).toContain("eth_sendRawTransaction")
    expect(described.body.rpcMethods).toContain("eth_call")
    expect(described.body.rpcMethods).not.toContain("eth_sendTransaction")
    const rpc = (method: string, params: ReadonlyArray<unknown> = []) =>
      partner.request("POST", "/sandbox/rpc", {
        key: null,
        body: { jsonrpc: "2.0", id: 1, method, params }
      })
    expect((await rpc("eth_chainId")).body.result).toBe("0x7a69")
    for (const [method, params] of [
      ["evm_mine", []],
      ["hardhat_setBalance", [server.sandbox.collector.address, "0x1"]],
      ["eth_sendTransaction", [{}]],
      ["eth_accounts", []],
      ["debug_traceTransaction", ["0x00"]]
    ] as const) {
      const refused = await rpc(method, params)
      expect(refused.status).toBe(200)
      expect(refused.body.error?.code, method).toBe(-32601)
    }
  })

  it("takes a payment from options to succeeded, the tokens moved to the collector", async () => {
    const buyer: Buyer = newBuyer()
    await fund(server, buyer, 100_000_000n)
    const collector = server.sandbox.collector.address
    const receivedBefore = await receivedBalance(server)
    const { paymentId, gatewayUrl } = await paymentFor(partner, merchantId, "1050")

    // The buyer link, encoded twice, as SDKs send a link they do not recognise.
    const twice = encodeURIComponent(encodeURIComponent(gatewayUrl))
    const info = await wallet.get(`/v1/gateway/payment/${twice}`)
    expect(info.status, info.text).toBe(200)
    expect(info.body).toMatchObject({
      status: "requires_action",
      amount: { unit: "iso4217/USD", value: "1050" },
      merchant: { name: "Gateway Shop", iconUrl: null },
      buyer: null,
      // The sandbox chain: a wallet can tell its user this is a test payment.
      livemode: false
    })

    // One option for the sandbox account; the account on a chain the engine lacks is skipped.
    const offered = await options(wallet, paymentId, [
      buyer.account,
      "eip155:1:0x00000000000000000000000000000000000000b1"
    ])
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body.info).toMatchObject({ status: "requires_action", livemode: false })
    expect(offered.body.collectData).toBeNull()
    expect(offered.body.options).toHaveLength(1)
    const [option] = offered.body.options
    expect(option).toMatchObject({
      account: buyer.account,
      amount: {
        unit: `caip19/${server.sandbox.token.asset}`,
        value: "10500000",
        display: { assetSymbol: "USDC", decimals: 6 }
      },
      etaS: 1,
      collectData: null
    })
    expect(option.expiresAt).toBeGreaterThan(Date.now() / 1000)
    const typed = JSON.parse(option.actions[0].data.params[1])
    expect(option.actions[0].data.chain_id).toBe("eip155:31337")
    expect(option.actions[0].data.params[0]).toBe(buyer.address)
    expect(typed.domain).toEqual({
      name: "USD Coin",
      version: "2",
      chainId: "0x7a69",
      verifyingContract: server.sandbox.token.address
    })
    expect(typed.types.EIP712Domain).toHaveLength(4)
    expect(typed.message).toMatchObject({ from: buyer.address, to: collector, value: "0xa037a0" })

    // The wallet's Client-Id is kept with the options it was offered.
    const withClient = await wallet.request("POST", `/v1/gateway/payment/${paymentId}/options`, {
      body: { accounts: [buyer.account] },
      headers: { "client-id": "e2e-client-42" }
    })
    expect(withClient.status, withClient.text).toBe(200)
    const recorded = await server.runEngine(
      Effect.flatMap(GatewayStore, (store) => store.findOption(withClient.body.options[0].id))
    )
    expect(Option.getOrThrow(recorded).clientId).toBe("e2e-client-42")
    expect(
      Option.getOrThrow(
        await server.runEngine(Effect.flatMap(GatewayStore, (store) => store.findOption(option.id)))
      ).clientId
    ).toBeNull()

    // fetch answers the same action.
    const fetched = await wallet.request("POST", `/v1/gateway/payment/${paymentId}/fetch`, {
      body: { optionId: option.id, data: "" }
    })
    expect(fetched.status, fetched.text).toBe(200)
    expect(fetched.body.actions).toEqual(option.actions)

    const signature = await signAction(buyer.key, option.actions[0])
    const confirmed = await confirm(wallet, paymentId, {
      optionId: option.id,
      results: [{ type: "walletRpc", data: [signature] }]
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body).toMatchObject({ status: "succeeded", isFinal: true })
    expect(confirmed.body.info).toMatchObject({
      txId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      optionAmount: { value: "10500000" }
    })

    expect(await usdcBalance(server, buyer.address)).toBe(89_500_000n)
    // Collected, and (now or soon) settled on to the merchant: the engine's side got it once.
    expect(await receivedBalance(server)).toBe(receivedBefore + 10_500_000n)
    const receipt = await server.sandbox.publicClient.getTransactionReceipt({
      hash: confirmed.body.info.txId
    })
    expect(receipt.status).toBe("success")

    // The partner sees the buyer, the wallet, the token amount and the transaction.
    const details = await partner.get(`/v1/payments/${paymentId}`)
    expect(details.status, details.text).toBe(200)
    expect(details.body).toMatchObject({
      status: "succeeded",
      buyer: {
        accountCaip10: buyer.account,
        accountProviderName: WALLET_NAME,
        accountProviderIcon: WALLET_ICON
      }
    })
    expect(JSON.stringify(details.body)).toContain(confirmed.body.info.txId)

    // The wallet's status and a second confirm.
    const status = await wallet.get(`/v1/gateway/payment/${paymentId}/status`)
    expect(status.body).toMatchObject({ status: "succeeded", isFinal: true })
    const again = await confirm(wallet, paymentId, {
      optionId: option.id,
      results: [{ type: "walletRpc", data: [signature] }]
    })
    expect(again.status, again.text).toBe(409)
    expect(again.body.code).toBe("invalid_state")
  }, 60_000)

  describe("no option: why, in words (noOptionsReason, only when options is empty)", () => {
    /** A merchant settled in `settlements` (none: no settlement at all); its id. */
    const elsewhereShop = async (
      settlements: ReadonlyArray<{ readonly asset: string; readonly destination: string }>
    ): Promise<string> =>
      (
        await merchantSettledIn(partner, settlements, {
          merchantName: "Elsewhere Shop",
          merchantEmail: "else@shop.example"
        })
      ).merchantId

    /** The options answer for a sandbox account (and `more`), 200 with no option. */
    const nothingOffered = async (merchant: string, more: ReadonlyArray<string> = []) => {
      const { paymentId } = await paymentFor(partner, merchant, "450")
      const offered = await options(wallet, paymentId, [newBuyer().account, ...more])
      expect(offered.status, offered.text).toBe(200)
      // The reference's fields as before: a wallet that knows nothing more still works.
      expect(offered.body.options).toEqual([])
      expect(offered.body.info).toMatchObject({ status: "requires_action" })
      expect(offered.body.collectData).toBeNull()
      return offered.body as Json
    }

    it("a merchant settled only on Base, a network the server does not run: settlement_not_payable", async () => {
      const merchant = await elsewhereShop([{ asset: BASE_USDC, destination: BASE_DESTINATION }])
      // Even for an account on Base: the server cannot take Base at all.
      const body = await nothingOffered(merchant, [
        "eip155:8453:0x00000000000000000000000000000000000000b1"
      ])
      expect(body.noOptionsReason).toEqual({
        code: "settlement_not_payable",
        message:
          "This merchant is paid only in USDC on Base, which this payment service cannot take, so there is no way to pay it here."
      })
    })

    it("/openapi.json declares it: an optional NoOptionsReason {code, message} with every code", async () => {
      const document = (await partner.get("/openapi.json", { key: null })).body
      const answer = document.components.schemas.GetPaymentOptionsResponse
      expect(answer.required).not.toContain("noOptionsReason")
      // A reference with its own description: wrapped in allOf.
      expect(answer.properties.noOptionsReason.allOf).toEqual([
        { $ref: "#/components/schemas/NoOptionsReason" }
      ])
      const reason = document.components.schemas.NoOptionsReason
      expect(reason.required.sort()).toEqual(["code", "message"])
      expect(reason.properties.code.enum).toEqual([
        "no_settlement",
        "settlement_not_payable",
        "no_price",
        "asset_not_payable",
        "accounts_not_payable",
        "network_unavailable"
      ])
    })

    it("a merchant with no settlement: no_settlement", async () => {
      const body = await nothingOffered(await elsewhereShop([]))
      expect(body.noOptionsReason).toEqual({
        code: "no_settlement",
        message:
          "This merchant has not set up how it is paid in crypto, so there is no way to pay it yet."
      })
    })

    it("accounts on no network the payment can be paid on: accounts_not_payable, naming what pays", async () => {
      const { paymentId } = await paymentFor(partner, merchantId, "450")
      const offered = await options(wallet, paymentId, [
        "eip155:8453:0x00000000000000000000000000000000000000b1"
      ])
      expect(offered.status, offered.text).toBe(200)
      expect(offered.body.options).toEqual([])
      expect(offered.body.noOptionsReason).toEqual({
        code: "accounts_not_payable",
        message:
          "None of the wallet's accounts is on a network this payment can be paid on: it can be paid in USDC on Pay sandbox."
      })
      // With an option, no reason.
      const paid = await options(wallet, paymentId, [newBuyer().account])
      expect(paid.body.options).toHaveLength(1)
      expect(paid.body).not.toHaveProperty("noOptionsReason")
    })
  })
})
