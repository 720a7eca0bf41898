/**
 * End to end over loopback against the real standalone server (node:http, or
 * Bun.serve under `npm run test:bun`): what a client cannot get past. A body
 * over the limit still arriving gets its 413, not a reset; the held long-polls
 * are capped (503 `too_many_long_polls` with Retry-After), and a client that
 * goes away frees its place at once. SQLite only: none of it is the store's.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  type E2eServer,
  expectError,
  type Merchant,
  newKey,
  PARTNER_KEY,
  payClient,
  startServer
} from "./e2e-support.js"
import { gatewayStatus, walletClient } from "./gateway-support.js"
import { getStatus, newPayment, sleep } from "./payments-support.js"

interface RawAnswer {
  readonly status: number
  readonly head: string
  readonly body: string
  /** The socket's error (EPIPE, ECONNRESET), if the connection broke. */
  readonly error: string | undefined
  readonly sent: number
}

const THREE_MB = 3 * 1024 * 1024

/**
 * POSTs a 3 MB JSON body over a raw socket, a chunk at a time (as a slow
 * client, still sending when the answer comes), and keeps sending after the
 * answer, as curl and browsers do (a half-open socket): a server that closes
 * while bytes are in flight makes this client see a reset. Gives up after 60 s.
 */
const postLarge = (baseUrl: string, framing: "content-length" | "chunked") =>
  new Promise<RawAnswer>((resolve) => {
    const url = new URL(baseUrl)
    const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true })
    const chunks: Array<Buffer> = []
    let error: string | undefined
    let sent = 0
    const giveUp = setTimeout(() => socket.destroy(new Error("no close within 60 s")), 60_000)
    socket.on("data", (data: Buffer) => chunks.push(data))
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message
    })
    socket.on("close", () => {
      clearTimeout(giveUp)
      const text = Buffer.concat(chunks).toString("latin1")
      const split = text.indexOf("\r\n\r\n")
      const head = split === -1 ? text : text.slice(0, split)
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body: split === -1 ? "" : text.slice(split + 4),
        error,
        sent
      })
    })
    const headers = [
      "POST /v1/merchants HTTP/1.1",
      `host: ${url.host}`,
      `api-key: ${PARTNER_KEY}`,
      `idempotency-key: ${newKey()}`,
      "content-type: application/json",
      framing === "chunked" ? "transfer-encoding: chunked" : `content-length: ${THREE_MB}`
    ]
    socket.write(`${headers.join("\r\n")}\r\n\r\n`)
    const piece = Buffer.alloc(64 * 1024, "x")
    piece.write('{"merchantName":"Big","padding":"')
    const pump = () => {
      if (socket.destroyed) return
      if (sent >= THREE_MB) {
        if (framing === "chunked") socket.write("0\r\n\r\n")
        socket.end()
        return
      }
      sent += piece.length
      const framed =
        framing === "chunked"
          ? Buffer.concat([
              Buffer.from(`${piece.length.toString(16)}\r\n`),
              piece,
              Buffer.from("\r\n")
            ])
          : piece
      socket.write(framed, () => setTimeout(pump, 1))
    }
    pump()
  })

describe("limits", () => {
  let server: E2eServer
  let merchant: Merchant
  const api = client(() => server.baseUrl)
  const pay = () => payClient(server)

  beforeAll(async () => {
    server = await startServer("sqlite", { maxHeldLongPolls: 3 })
    merchant = await createMerchant(pay(), "Limits Shop")
  })

  afterAll(async () => {
    await server?.stop()
  })

  describe("a body over the limit, still arriving", () => {
    for (const framing of ["content-length", "chunked"] as const) {
      it(`gets its 413, not a reset: 3 MB with ${framing}, five times`, async () => {
        for (let i = 0; i < 5; i++) {
          const answer = await postLarge(server.baseUrl, framing)
          expect(answer.error, `try ${i + 1}: ${answer.head}`).toBeUndefined()
          expect(answer.status, answer.head).toBe(413)
          expect(JSON.parse(answer.body).code).toBe("payload_too_large")
          // The whole body went out: the server read and dropped it before it closed.
          expect(answer.sent).toBeGreaterThanOrEqual(THREE_MB)
        }
        // The server is still well.
        expect((await api.get("/health", { key: null })).status).toBe(200)
      }, 120_000)
    }
  })

  describe("held long-polls, capped at 3 (maxHeldLongPolls)", () => {
    /** A long-poll of up to 30 s on `id`, with `signal` to go away. */
    const hold = (id: string, signal?: AbortSignal) =>
      fetch(`${server.baseUrl}/v1/payments/${id}/status?maxPollMs=30000`, {
        headers: { "api-key": PARTNER_KEY, "merchant-id": merchant.id },
        ...(signal === undefined ? {} : { signal })
      })

    /** One more long-poll (of 1 ms, so an admitted one answers at once): its status and answer. */
    const probe = async (id: string) => {
      const response = await getStatus(api, id, merchant.id, "?maxPollMs=1")
      return response
    }

    /** Probes until one is refused (the 3 are held), up to 20 s. */
    const untilRefused = async (id: string) => {
      for (let i = 0; i < 100; i++) {
        const response = await probe(id)
        if (response.status === 503) return response
        expect(response.status).toBe(200)
        await sleep(200)
      }
      throw new Error("no long-poll was refused within 20 s")
    }

    /** Probes until one is held again (a place was freed), up to 20 s. */
    const untilAdmitted = async (id: string) => {
      for (let i = 0; i < 100; i++) {
        const response = await probe(id)
        if (response.status === 200) return response
        expectError(response, 503, "too_many_long_polls")
        await sleep(200)
      }
      throw new Error("no long-poll was admitted within 20 s")
    }

    it("the 4th gets 503 too_many_long_polls with Retry-After; the 3 held still answer", async () => {
      const ids = await Promise.all(
        [1, 2, 3, 4].map(async () => (await newPayment(pay(), merchant.id)).paymentId)
      )
      const held = ids.slice(0, 3).map((id) => hold(id))
      const refused = await untilRefused(ids[3]!)
      expectError(refused, 503, "too_many_long_polls")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(refused.body).toEqual({ code: "too_many_long_polls", message: expect.any(String) })
      // A status without maxPollMs is no long-poll: answered as ever.
      expect((await getStatus(api, ids[3]!, merchant.id)).status).toBe(200)
      expect(refused.body.message).toContain("maxHeldLongPolls")
      // A wallet's long-poll is a public one: it counts apart (maxHeldPublicLongPolls).
      const wallet = (await walletClient(server)).api
      expect((await gatewayStatus(wallet, ids[3]!, 1)).status).toBe(200)

      // The 3 held are answered when their payments change (cancelled here).
      for (const id of ids.slice(0, 3)) {
        await pay().payments.cancel(id, { merchantId: merchant.id })
      }
      const answers = await Promise.all(held)
      for (const answer of answers) {
        expect(answer.status).toBe(200)
        expect((await answer.json()).status).toBe("cancelled")
      }
      // Their places are free again.
      expect((await untilAdmitted(ids[3]!)).status).toBe(200)
    }, 60_000)

    it("a client that goes away frees its place at once, not at its 30 s", async () => {
      const ids = await Promise.all(
        [1, 2, 3, 4].map(async () => (await newPayment(pay(), merchant.id)).paymentId)
      )
      const leaving = new AbortController()
      const held = ids.slice(0, 3).map((id) => hold(id, leaving.signal).catch(() => "aborted"))
      await untilRefused(ids[3]!)
      const started = Date.now()
      leaving.abort()
      expect(await Promise.all(held)).toEqual(["aborted", "aborted", "aborted"])
      await untilAdmitted(ids[3]!)
      // Well before the 30 s the polls asked for.
      expect(Date.now() - started).toBeLessThan(20_000)
    }, 60_000)
  })

  describe("public long-polls, capped apart at 3 (maxHeldPublicLongPolls)", () => {
    let open: E2eServer
    let shop: Merchant
    const openPay = () => payClient(open)

    beforeAll(async () => {
      open = await startServer("sqlite", { maxHeldLongPolls: 3, maxHeldPublicLongPolls: 3 })
      shop = await createMerchant(openPay(), "Open Shop")
    })

    afterAll(async () => {
      await open?.stop()
    })

    /** The checkout page's status poll on `id`: anyone with the link may send it. */
    const pagePoll = (id: string, maxPollMs: number, signal?: AbortSignal) =>
      fetch(`${open.baseUrl}/${id}/status?maxPollMs=${maxPollMs}`, {
        headers: { accept: "application/json" },
        ...(signal === undefined ? {} : { signal })
      })

    it("one link polled past the public cap gets 503 naming it; partners' polls are still held", async () => {
      const { paymentId } = await newPayment(openPay(), shop.id)
      const leaving = new AbortController()
      const held = [1, 2, 3].map(() =>
        pagePoll(paymentId, 30_000, leaving.signal).catch(() => "aborted")
      )
      try {
        // Probes (1 ms: an admitted one answers at once) until the 3 are held.
        let refused: Response | undefined
        for (let i = 0; i < 100 && refused === undefined; i++) {
          const probe = await pagePoll(paymentId, 1)
          if (probe.status === 503) refused = probe
          else {
            expect(probe.status).toBe(200)
            await sleep(200)
          }
        }
        expect(refused?.status).toBe(503)
        expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        const body = (await refused!.json()) as { code: string; message: string }
        expect(body.code).toBe("too_many_long_polls")
        expect(body.message).toContain("maxHeldPublicLongPolls")

        // Partners' long-polls are held (not refused): each answers the change it waited for.
        const theirs = await Promise.all(
          [1, 2, 3].map(async () => (await newPayment(openPay(), shop.id)).paymentId)
        )
        const partnerPolls = theirs.map((id) =>
          fetch(`${open.baseUrl}/v1/payments/${id}/status?maxPollMs=30000`, {
            headers: { "api-key": PARTNER_KEY, "merchant-id": shop.id }
          })
        )
        // The 3 are held once a 4th partner poll is refused by their own cap.
        const otherApi = client(() => open.baseUrl)
        for (let i = 0; i < 100; i++) {
          const probe = await getStatus(otherApi, paymentId, shop.id, "?maxPollMs=1")
          if (probe.status === 503) {
            expect(probe.body.message).toContain("maxHeldLongPolls")
            break
          }
          expect(probe.status).toBe(200)
          await sleep(200)
        }
        for (const id of theirs) await openPay().payments.cancel(id, { merchantId: shop.id })
        for (const answer of await Promise.all(partnerPolls)) {
          expect(answer.status).toBe(200)
          expect(((await answer.json()) as { status: string }).status).toBe("cancelled")
        }
      } finally {
        leaving.abort()
        await Promise.all(held)
      }
    }, 60_000)
  })
})
