/**
 * The README's walk-through, as a test: the example wallet pays a payment on
 * the sandbox chain of a real server, from its buyer link.
 */

import { payWithWallet } from "@pay/sandbox"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type E2eServer, startServer } from "../standalone/test/e2e-support.js"
import {
  paymentFor,
  settledMerchant,
  usdcBalance,
  walletClient
} from "../standalone/test/gateway-support.js"

describe("the example wallet", () => {
  let server: E2eServer
  beforeAll(async () => {
    server = await startServer("sqlite")
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it("pays from the buyer link with a new key the faucet funds", async () => {
    const partner = client(() => server.baseUrl)
    const { apiKey } = await walletClient(server)
    const merchantId = await settledMerchant(partner)
    const { gatewayUrl, paymentId } = await paymentFor(partner, merchantId, "2500")
    const lines: Array<string> = []
    const outcome = await payWithWallet({
      engineUrl: server.baseUrl,
      payment: gatewayUrl,
      apiKey,
      faucet: 100_000_000n,
      log: (line) => lines.push(line)
    })
    expect(outcome.status, lines.join("\n")).toBe("succeeded")
    expect(outcome.txId).toMatch(/^0x[0-9a-f]{64}$/)
    const buyer = outcome.buyer.split(":")[2] as `0x${string}`
    expect(await usdcBalance(server, buyer)).toBe(75_000_000n)
    const status = await partner.get(`/v1/payments/${paymentId}`)
    expect(status.body.status).toBe("succeeded")
  }, 60_000)
})
