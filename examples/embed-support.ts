/**
 * For the embedding examples' tests: a free loopback port (the examples need
 * theirs before they start, for their public URL), and a whole payment taken
 * through a mounted engine on the sandbox chain, the way a platform and a
 * wallet would: merchant, settlement destination, payment, the sandbox
 * wallet paying the buyer link, the status long-polled to `succeeded`.
 */
import { createServer } from "node:net"
import { payWithWallet } from "@pay/sandbox"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field by the tests
export type Json = any

export const call = async (
  url: string,
  apiKey: string,
  init: { body?: unknown; headers?: Record<string, string> } = {}
): Promise<{ status: number; body: Json }> => {
  const response = await fetch(url, {
    method: init.body === undefined ? "GET" : "POST",
    headers: {
      "api-key": apiKey,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...init.headers
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

export interface TakenPayment {
  readonly paymentId: string
  readonly gatewayUrl: string
  readonly merchantId: string
  /** The status a long-poll answered after the wallet paid. */
  readonly finalStatus: string
  readonly walletLog: ReadonlyArray<string>
}

/** A payment of 4.50 USD, from creation to `succeeded`, through the engine at `engineUrl`. */
export const takePayment = async (options: {
  readonly engineUrl: string
  readonly partnerKey: string
  readonly walletKey: string
  /** The sandbox token's CAIP-19 asset. */
  readonly asset: string
}): Promise<TakenPayment> => {
  const { engineUrl, partnerKey } = options
  const merchant = await call(`${engineUrl}/v1/merchants`, partnerKey, {
    headers: { "idempotency-key": `m-${Date.now()}` },
    body: { merchantName: "Coffee", merchantEmail: "owner@coffee.example" }
  })
  if (merchant.status !== 201)
    throw new Error(`merchant: ${merchant.status} ${JSON.stringify(merchant.body)}`)
  const merchantId: string = merchant.body.merchant.id
  const settlement = await call(
    `${engineUrl}/v1/merchants/${merchantId}/settlements/crypto`,
    partnerKey,
    {
      headers: { "idempotency-key": `s-${merchantId}` },
      body: {
        settlements: [
          {
            asset: options.asset,
            destination: `${options.asset.split("/")[0]}:0x000000000000000000000000000000000000dEaD`
          }
        ]
      }
    }
  )
  if (settlement.status >= 300) {
    throw new Error(`settlement: ${settlement.status} ${JSON.stringify(settlement.body)}`)
  }
  const payment = await call(`${engineUrl}/v1/payments`, partnerKey, {
    headers: { "merchant-id": merchantId },
    body: { referenceId: "ORDER-1", amount: { unit: "iso4217/USD", value: "450" } }
  })
  if (payment.status !== 201)
    throw new Error(`payment: ${payment.status} ${JSON.stringify(payment.body)}`)
  const walletLog: Array<string> = []
  await payWithWallet({
    engineUrl,
    payment: payment.body.gatewayUrl,
    apiKey: options.walletKey,
    faucet: 100_000_000n,
    log: (line) => walletLog.push(line)
  })
  const status = await call(
    `${engineUrl}/v1/payments/${payment.body.paymentId}/status?maxPollMs=10000`,
    partnerKey,
    { headers: { "merchant-id": merchantId } }
  )
  return {
    paymentId: payment.body.paymentId,
    gatewayUrl: payment.body.gatewayUrl,
    merchantId,
    finalStatus: status.body.status,
    walletLog
  }
}
