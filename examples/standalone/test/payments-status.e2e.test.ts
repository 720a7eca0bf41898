/**
 * End to end over loopback against the real standalone server: a payment's
 * status (SPEC.md 3 and 4.3), its long-poll, and the merchant's cancel
 * (WIRE.md section 3 "Payments"), with the chain's transitions driven through
 * the server's own services so that they wake its long-polls. Statuses,
 * long-polls and cancels go through the typed client (@pay/client), and so do
 * the engine's refusals; missing or malformed headers and query values, and
 * replays compared byte for byte, stay on raw HTTP.
 */
import { PaymentEvents } from "@pay/core"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createMerchant,
  createPartner,
  type E2eServer,
  eventually,
  expectError,
  expectRefusal,
  type Merchant,
  newKey,
  PARTNER_KEY,
  type PayClient,
  payClient,
  RFC3339,
  STORES,
  startServer,
  unknownId,
  whole
} from "./e2e-support.js"
import { pausePoints } from "./pause-points.js"
import {
  decline,
  fail,
  getStatus,
  newPayment,
  sleep,
  startProcessing,
  startProcessingChange,
  succeed,
  timed,
  tryTransition,
  UNKNOWN_PAYMENT,
  USDC_BASE
} from "./payments-support.js"

/**
 * How soon a long-poll must answer once its payment changed (or at once):
 * half the shortest of the polls' own 5 to 10 s, so only a wake-up meets it,
 * and generous for a loaded 2-core machine (50 answers over HTTP took 1.55 s
 * on one that ran benchmarks beside the suite).
 */
const PROMPT_MS = 2_500

describe.each(STORES)("%s", (store) => {
  let server: E2eServer
  /** The typed client with the bootstrap partner's key, and with another partner's. */
  let pay: PayClient
  let other: PayClient
  let merchant: Merchant
  let sibling: Merchant
  const api = client(() => server.baseUrl)

  /** Holds a status write when a test asks, to force the order of a race. */
  const points = pausePoints()

  beforeAll(async () => {
    server = await startServer(store, {}, { wrapStorage: points.wrap })
    pay = payClient(server)
    other = payClient(server, (await createPartner(server, "Other")).apiKey)
    merchant = await createMerchant(pay, "Status Shop")
    sibling = await createMerchant(pay, "Sibling Shop")
  })

  afterAll(async () => {
    await server?.stop()
  })

  /** A fresh payment of the shared merchant; returns its id. */
  const open = async (body: { readonly expiresAt?: string | number } = {}): Promise<string> =>
    (await newPayment(pay, merchant.id, body)).paymentId

  /** The status over raw HTTP, for query values the client would refuse before sending. */
  const statusOf = (id: string, query = "") => getStatus(api, id, merchant.id, query)

  /** The status through `by` (a long-poll with `maxPollMs`). */
  const poll = (id: string, maxPollMs?: number, by: PayClient = pay) =>
    by.payments.status(id, {
      merchantId: merchant.id,
      ...(maxPollMs === undefined ? {} : { maxPollMs })
    })

  /** The status, read through the client: its whole answer. */
  const readStatus = async (id: string) => whole(pay, await poll(id))

  const cancel = (id: string, by: PayClient = pay, merchantId: string = merchant.id) =>
    by.payments.cancel(id, { merchantId })

  /** Resolves after `n` turns of the event loop. */
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
  }

  const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()

  /** How many long-polls the server holds now (its PaymentEvents' waiters). */
  const heldPolls = () => server.runEngine(Effect.flatMap(PaymentEvents, (events) => events.held))

  /**
   * Waits until the server holds `n` long-polls: the evidence that a poll is waiting for a
   * change, not a fixed time (a poll answered at once as a plain status read never counts, so a
   * change made after this wait can only be answered by a wake-up). Generous on a loaded
   * machine, and below the polls' own 5 s.
   */
  const untilHeld = (n: number) =>
    eventually(async () => expect(await heldPolls(), "long-polls held").toBe(n), {
      timeoutMs: 4_000,
      intervalMs: 20
    })

  describe("GET /v1/payments/{id}/status", () => {
    it("while open: exactly status, isFinal false, pollInMs and info null", async () => {
      const body = await readStatus(await open())
      expect(Object.keys(body).sort()).toEqual(["info", "isFinal", "pollInMs", "status"])
      expect(body).toMatchObject({ status: "requires_action", isFinal: false, info: null })
      expect(Number.isInteger(body.pollInMs) && (body.pollInMs ?? 0) > 0).toBe(true)
    })

    it("processing: not final, with pollInMs and info null", async () => {
      const id = await open()
      await startProcessing(server, id)
      const body = await readStatus(id)
      expect(Object.keys(body).sort()).toEqual(["info", "isFinal", "pollInMs", "status"])
      expect(body).toMatchObject({ status: "processing", isFinal: false, info: null })
    })

    it("succeeded: final, info {optionAmount, txId}, no pollInMs and no failureCode", async () => {
      const id = await open()
      await startProcessing(server, id, { value: "10500000" })
      const txId = `0x${"5a".repeat(32)}`
      await succeed(server, id, txId)
      const body = await readStatus(id)
      expect(body).toEqual({
        status: "succeeded",
        isFinal: true,
        info: {
          optionAmount: {
            unit: `caip19/${USDC_BASE}`,
            value: "10500000",
            display: {
              assetSymbol: "USDC",
              assetName: "USD Coin",
              decimals: 6,
              networkName: "Base"
            }
          },
          txId
        }
      })
    })

    it("failed on chain: failureCode transaction_reverted, info null, no pollInMs", async () => {
      const id = await open()
      await startProcessing(server, id)
      await fail(server, id, "transaction_reverted")
      expect(await readStatus(id)).toEqual({
        status: "failed",
        isFinal: true,
        failureCode: "transaction_reverted",
        info: null
      })
    })

    it("the state machine's Decline (no route produces it; SPEC.md lists the code): failureCode declined_user", async () => {
      const id = await open()
      await decline(server, id)
      expect(await readStatus(id)).toEqual({
        status: "failed",
        isFinal: true,
        failureCode: "declined_user",
        info: null
      })
    })

    it("cancelled: final, no failureCode, info null", async () => {
      const id = await open()
      expect((await cancel(id)).status).toBe("cancelled")
      expect(await readStatus(id)).toEqual({ status: "cancelled", isFinal: true, info: null })
    })

    it("a payment created 2 s ahead reads expired as soon as its time passes, before any sweep", async () => {
      const expiresAt = inMs(2000)
      const id = await open({ expiresAt })
      expect((await readStatus(id)).status).toBe("requires_action")
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 30)
      expect(await readStatus(id)).toEqual({ status: "expired", isFinal: true, info: null })
      const shown = await pay.payments.get(id)
      expect(shown).toMatchObject({ status: "expired", isFinal: true, isTerminal: true })
      expect(shown).not.toHaveProperty("failureCode")
    })

    it("without Merchant-Id: 400 missing_merchant_id; a malformed one: 400 naming it", async () => {
      const id = await open()
      expectError(await getStatus(api, id, null), 400, "missing_merchant_id", ["Merchant-Id"])
      const malformed = await getStatus(api, id, "shop-1")
      expect(malformed.status).toBe(400)
      expectError(malformed, 400, "invalid_params", ["Merchant-Id"])
    })

    it("the Merchant-Id of another merchant of the same partner, or of none: 404 payment_not_found", async () => {
      const id = await open()
      const statusFor = (merchantId: string) => pay.payments.status(id, { merchantId })
      await expectRefusal(pay, statusFor(sibling.id), 404, "payment_not_found")
      await expectRefusal(pay, statusFor(unknownId("mrch")), 404, "payment_not_found")
    })

    it("another partner's payment: 403; an unknown or malformed payment id: 404", async () => {
      const id = await open()
      const theirs = await createMerchant(other, "Theirs")
      await expectRefusal(
        other,
        other.payments.status(id, { merchantId: theirs.id }),
        403,
        "forbidden"
      )
      await expectRefusal(pay, poll(UNKNOWN_PAYMENT), 404, "payment_not_found")
      // Raw: the client answers a malformed path id itself.
      expectError(await statusOf("pay_x"), 404, "payment_not_found")
    })
  })

  describe("long-poll with maxPollMs", () => {
    it("held, and answered at once with the new status after a cancel over HTTP", async () => {
      const id = await open()
      // A client of its own, so that its last answer is the poll's.
      const watcher = payClient(server)
      const before = await heldPolls()
      const start = performance.now()
      const held = timed(start, poll(id, 5000, watcher))
      await untilHeld(before + 1)
      const heldAt = performance.now() - start
      expect((await cancel(id)).status).toBe("cancelled")
      const cancelledAt = performance.now() - start
      const { response, at } = await held
      expect(watcher.lastAnswer().status).toBe(200)
      expect(whole(watcher, response)).toEqual({ status: "cancelled", isFinal: true, info: null })
      expect(at).toBeGreaterThanOrEqual(heldAt)
      expect(at - cancelledAt).toBeLessThan(PROMPT_MS)
      // Answered by the change, well before the poll's own 5 s.
      expect(at).toBeLessThan(4_000)
    })

    it("a client that goes away lets go of its long-poll at once, not at maxPollMs", async () => {
      const id = await open()
      const held = heldPolls
      const until = async (check: () => Promise<boolean>, what: string) => {
        // Generous on a loaded machine, and below the poll's own 20 s.
        const deadline = Date.now() + 15_000
        while (!(await check())) {
          if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
          await sleep(20)
        }
      }
      const before = await held()
      const leaving = new AbortController()
      const polling = fetch(`${server.baseUrl}/v1/payments/${id}/status?maxPollMs=20000`, {
        headers: { "api-key": PARTNER_KEY, "merchant-id": merchant.id },
        signal: leaving.signal
      }).catch((error: unknown) => error)
      await until(async () => (await held()) === before + 1, "the long-poll is held")
      const goneAt = Date.now()
      leaving.abort()
      await polling
      await until(async () => (await held()) === before, "its waiter is let go")
      expect(Date.now() - goneAt).toBeLessThan(5_000)
    })

    it("held, and answered at once after StartProcessing and then Succeed through the engine", async () => {
      const id = await open()
      const before = await heldPolls()
      let start = performance.now()
      let held = timed(start, poll(id, 5000))
      await untilHeld(before + 1)
      let heldAt = performance.now() - start
      await startProcessing(server, id)
      let changedAt = performance.now() - start
      let answer = await held
      expect(answer.response).toMatchObject({
        status: "processing",
        isFinal: false,
        info: null
      })
      expect(answer.at).toBeGreaterThanOrEqual(heldAt)
      expect(answer.at - changedAt).toBeLessThan(PROMPT_MS)

      await untilHeld(before)
      start = performance.now()
      held = timed(start, poll(id, 5000))
      await untilHeld(before + 1)
      heldAt = performance.now() - start
      const txId = `0x${"77".repeat(32)}`
      await succeed(server, id, txId)
      changedAt = performance.now() - start
      answer = await held
      expect(answer.response).toMatchObject({ status: "succeeded", isFinal: true })
      expect(answer.response.info?.txId).toBe(txId)
      expect(answer.at).toBeGreaterThanOrEqual(heldAt)
      expect(answer.at - changedAt).toBeLessThan(PROMPT_MS)
    })

    it("with no change, the unchanged status after about maxPollMs", async () => {
      const id = await open()
      const start = performance.now()
      const { response, at } = await timed(start, poll(id, 800))
      expect(response).toMatchObject({ status: "requires_action", isFinal: false, info: null })
      expect(response.pollInMs).toBeGreaterThan(0)
      expect(at).toBeGreaterThanOrEqual(700)
      expect(at).toBeLessThan(3000)
    })

    it("a processing payment is held too", async () => {
      const id = await open()
      await startProcessing(server, id)
      const { response, at } = await timed(performance.now(), poll(id, 800))
      expect(response.status).toBe("processing")
      expect(at).toBeGreaterThanOrEqual(700)
    })

    it("on a final payment, and with maxPollMs=0, answers at once", async () => {
      const id = await open()
      expect((await cancel(id)).status).toBe("cancelled")
      const final = await timed(performance.now(), poll(id, 5000))
      expect(final.response.status).toBe("cancelled")
      expect(final.at).toBeLessThan(PROMPT_MS)
      const fresh = await open()
      const zero = await timed(performance.now(), poll(fresh, 0))
      expect(zero.response.status).toBe("requires_action")
      expect(zero.at).toBeLessThan(PROMPT_MS)
    })

    it("on a payment about to expire, answers expired at its expiry", async () => {
      const expiresAt = inMs(1500)
      const id = await open({ expiresAt })
      const start = performance.now()
      const startedAt = Date.now()
      const { response, at } = await timed(start, poll(id, 10_000))
      expect(whole(pay, response)).toEqual({ status: "expired", isFinal: true, info: null })
      const due = Date.parse(expiresAt) - startedAt
      expect(at).toBeGreaterThanOrEqual(due - 100)
      expect(at).toBeLessThan(due + PROMPT_MS)
    })

    it("maxPollMs -1, 1.5, abc or empty: 400 naming maxPollMs", async () => {
      const id = await open()
      // Raw: the client refuses these itself.
      for (const value of ["-1", "1.5", "abc", ""]) {
        expectError(await statusOf(id, `?maxPollMs=${value}`), 400, "invalid_params", ["maxPollMs"])
      }
    })

    it("50 concurrent long-polls on one payment all wake on one cancel", async () => {
      const id = await open()
      const before = await heldPolls()
      const start = performance.now()
      const polls = Array.from({ length: 50 }, () => timed(start, poll(id, 5000)))
      // All 50 held, not some of them answered as plain reads after the cancel.
      await untilHeld(before + 50)
      const heldAt = performance.now() - start
      expect((await cancel(id)).status).toBe("cancelled")
      const cancelledAt = performance.now() - start
      const answers = await Promise.all(polls)
      for (const { response, at } of answers) {
        expect(response.status).toBe("cancelled")
        expect(at).toBeGreaterThanOrEqual(heldAt)
        expect(at - cancelledAt).toBeLessThan(PROMPT_MS)
      }
    })
  })

  describe("POST /v1/payments/{id}/cancel", () => {
    it("200 with paymentId, status cancelled, cancelledReason and cancelledAt", async () => {
      const id = await open()
      const before = Date.now()
      const cancelled = whole(pay, await cancel(id))
      const response = pay.lastAnswer()
      expect(response.status, response.text).toBe(200)
      expect(Object.keys(response.body).sort()).toEqual(
        ["cancelledAt", "cancelledReason", "livemode", "paymentId", "status"].sort()
      )
      expect(cancelled).toMatchObject({
        paymentId: id,
        status: "cancelled",
        cancelledReason: "cancelled_by_merchant",
        livemode: false
      })
      expect(cancelled.cancelledAt).toMatch(RFC3339)
      expect(Date.parse(cancelled.cancelledAt)).toBeGreaterThanOrEqual(before - 1000)
      expect(Date.parse(cancelled.cancelledAt)).toBeLessThanOrEqual(Date.now() + 1000)
      const shown = await pay.payments.get(id)
      expect(shown).toMatchObject({
        status: "cancelled",
        isFinal: true,
        cancelledReason: "cancelled_by_merchant"
      })
    })

    it("a second cancel: 400 invalid_state; a replay with the same Idempotency-Key: the first answer", async () => {
      const id = await open()
      const key = newKey()
      // Raw: the replay's bytes are compared, and the client's cancel sends no key.
      const request = () =>
        api.request("POST", `/v1/payments/${id}/cancel`, {
          headers: { "merchant-id": merchant.id },
          idempotencyKey: key
        })
      const first = await request()
      expect(first.status).toBe(200)
      const replay = await request()
      expect(replay.status).toBe(200)
      expect(replay.text).toBe(first.text)
      await expectRefusal(pay, cancel(id), 400, "invalid_state")
    })

    it("cancelling a processing, succeeded, failed or expired payment: 400 invalid_state", async () => {
      const processing = await open()
      await startProcessing(server, processing)
      const succeeded = await open()
      await startProcessing(server, succeeded)
      await succeed(server, succeeded)
      const failed = await open()
      await decline(server, failed)
      const expiresAt = inMs(800)
      const expired = await open({ expiresAt })
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 30)
      const cases = [
        [processing, "processing"],
        [succeeded, "succeeded"],
        [failed, "failed"],
        [expired, "expired"]
      ] as const
      for (const [id, status] of cases) {
        await expectRefusal(pay, cancel(id), 400, "invalid_state")
        expect((await readStatus(id)).status).toBe(status)
      }
    })

    it("without Merchant-Id: 400; another merchant's: 404; another partner's: 403; unknown: 404", async () => {
      const id = await open()
      const noHeader = await api.request("POST", `/v1/payments/${id}/cancel`)
      expectError(noHeader, 400, "missing_merchant_id", ["Merchant-Id"])
      await expectRefusal(pay, cancel(id, pay, sibling.id), 404, "payment_not_found")
      const theirs = await createMerchant(other, "Theirs too")
      await expectRefusal(other, cancel(id, other, theirs.id), 403, "forbidden")
      await expectRefusal(pay, cancel(UNKNOWN_PAYMENT), 404, "payment_not_found")
      expect((await readStatus(id)).status).toBe("requires_action")
    })

    it("a cancel racing StartProcessing: exactly one wins, and the final state agrees (20 rounds)", async () => {
      const winners = { cancel: 0, processing: 0 }
      for (let round = 0; round < 20; round++) {
        const id = await open()
        // The transition runs in-process and the cancel crosses loopback: holding the
        // transition back by 0 to 3 turns of the event loop lets either one arrive first.
        const [cancelled, processed] = await Promise.all([
          cancel(id).then(
            (answer) => Either.right(answer),
            (error: unknown) => Either.left(error)
          ),
          turns(round % 4).then(() => tryTransition(server, id, startProcessingChange()))
        ])
        const answer = pay.lastAnswer()
        const cancelWon = Either.isRight(cancelled)
        const processingWon = Either.isRight(processed)
        expect(cancelWon !== processingWon, `round ${round}: ${answer.text}`).toBe(true)
        const final = await readStatus(id)
        if (cancelWon) {
          winners.cancel++
          expect(final.status).toBe("cancelled")
          expect(Either.isLeft(processed) && processed.left._tag).toBe("InvalidState")
        } else {
          winners.processing++
          expect(Either.isLeft(cancelled) && cancelled.left).toMatchObject({
            status: 400,
            code: "invalid_state"
          })
          expectError(answer, 400, "invalid_state")
          expect(final.status).toBe("processing")
        }
      }
      expect(winners.cancel + winners.processing).toBe(20)
    })

    it.each([
      { first: "cancel", held: "processing" },
      { first: "StartProcessing", held: "cancelled" }
    ] as const)(
      "a cancel racing StartProcessing, $first first (forced by a pause point): it wins, the other is refused (5 rounds)",
      async ({ first, held }) => {
        for (let round = 0; round < 5; round++) {
          const id = await open()
          // The loser has read the payment (`requires_action`) and decided; its write waits.
          const write = points.holdTransition((c) => c.id === id && c.change.status === held)
          if (first === "cancel") {
            const processing = tryTransition(server, id, startProcessingChange())
            await write.reached
            expect((await cancel(id)).status).toBe("cancelled")
            write.release()
            const processed = await processing
            expect(Either.isLeft(processed) && processed.left._tag, `round ${round}`).toBe(
              "InvalidState"
            )
            expect((await readStatus(id)).status).toBe("cancelled")
          } else {
            const cancelling = cancel(id).then(
              (answer) => Either.right(answer),
              (error: unknown) => Either.left(error)
            )
            await write.reached
            const processed = await tryTransition(server, id, startProcessingChange())
            expect(Either.isRight(processed), `round ${round}`).toBe(true)
            write.release()
            const cancelled = await cancelling
            expect(Either.isLeft(cancelled) && cancelled.left).toMatchObject({
              status: 400,
              code: "invalid_state"
            })
            expectError(pay.lastAnswer(), 400, "invalid_state")
            expect((await readStatus(id)).status).toBe("processing")
          }
          // The held write found the payment changed: it wrote nothing.
          expect(await write.answered).toMatchObject({ _tag: "None" })
        }
      }
    )
  })
})
