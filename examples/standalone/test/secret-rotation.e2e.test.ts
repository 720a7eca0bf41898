/**
 * Rotating the engine's secret as an operator does it (docs/operations.md),
 * with the server as its own process and the CLI beside it, on a SQLite file
 * and on PostgreSQL: a first start with the secret the database keeps; then
 * PAY_SECRET=A (the kept one still opens), `pay secret reseal`; then
 * PAY_SECRET=B with PAY_SECRET_PREVIOUS=A, the re-seal while the server runs;
 * then B alone. Webhook endpoints keep their signing secrets throughout: a
 * real receiver on loopback verifies every delivery with the secrets the
 * partner was shown. A re-seal under a wrong secret reports and changes nothing.
 */
import { type ChildProcess, execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Json, newKey, PARTNER_KEY, STORES } from "./e2e-support.js"
import {
  bundle,
  type Instance,
  nodeBinary,
  requireBundles,
  serverCommand,
  startInstance,
  stopAll
} from "./instances-support.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

const root = join(import.meta.dirname, "..", "..", "..")
const spawned: Array<ChildProcess> = []
const receivers: Array<WebhookReceiver> = []

const secret = (fill: string) => btoa(fill.repeat(32))
const [A, B, C] = [secret("a"), secret("b"), secret("c")]

beforeAll(() => requireBundles("main", "cli"), 60_000)

afterAll(async () => {
  await stopAll(spawned)
  await Promise.all(receivers.map((r) => r.close()))
}, 20_000)

/** Runs the CLI with `env`: its exit code and output. */
const cli = (env: NodeJS.ProcessEnv, ...args: Array<string>) =>
  promisify(execFile)(nodeBinary, [bundle("cli"), ...args], {
    env: { ...process.env, ...env },
    cwd: root
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e
  )

const stop = async (instance: Instance) => {
  await stopAll([instance.child])
}

describe.each(STORES)("%s: rotating the engine's secret", (store) => {
  const scope = Effect.runSync(Scope.make())
  let dir: string
  let base: NodeJS.ProcessEnv

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pay-secret-"))
    const database =
      store === "postgres"
        ? await Effect.runPromise(Scope.extend(freshSchema(), scope))
        : join(dir, "pay.sqlite")
    base = {
      PAY_DATABASE: database,
      PAY_BOOTSTRAP_API_KEY: PARTNER_KEY,
      PAY_FETCH_ALLOW_PRIVATE: "1",
      PAY_WEBHOOK_RETRY_SCHEDULE: "1,1,1"
    }
  }, 30_000)

  afterAll(async () => {
    await stopAll(spawned)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
  }, 20_000)

  /** The server with `secrets` (PAY_SECRET, PAY_SECRET_PREVIOUS) on the test's database. */
  const start = (name: string, secrets: NodeJS.ProcessEnv) =>
    startInstance(`${store} ${name}`, { ...base, ...secrets }, spawned)

  const register = async (instance: Instance, receiver: WebhookReceiver) => {
    const created = await instance.api.request("POST", "/v1/webhook-endpoints", {
      idempotencyKey: newKey(),
      body: { url: receiver.url }
    })
    expect(created.status, created.text).toBe(201)
    receiver.secrets.push(created.body.secret)
    return created.body as Json
  }

  /**
   * A change on `instance` (a merchant created): the delivery each receiver got for it,
   * answered 2xx, and which of the secrets it was shown verify it.
   */
  const deliveredTo = async (instance: Instance, ...to: ReadonlyArray<WebhookReceiver>) => {
    const created = await instance.api.request("POST", "/v1/merchants", {
      idempotencyKey: newKey(),
      body: { merchantName: "Rotation", merchantEmail: "hooks@shop.example" }
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.merchant.id
    return Promise.all(
      to.map(async (receiver) => {
        const ours = (r: WebhookReceiver["received"][number]) =>
          r.event?.data?.object?.id === id && r.answered === 204
        await receiver.until((received) => received.some(ours), 15_000)
        return receiver.received.find(ours)!.verifiedBy
      })
    )
  }

  it("webhook endpoints keep their signing secrets from the kept secret to A, then to B, each move re-sealed", async () => {
    const first = await startWebhookReceiver()
    const second = await startWebhookReceiver()
    receivers.push(first, second)

    // The first start keeps a generated secret in the database.
    const kept = await start("kept", {})
    await register(kept, first)
    await stop(kept)

    // PAY_SECRET=A: the kept secret still opens the first endpoint's; the second is sealed
    // under A, and rotated with an hour's overlap, so both its secrets sign.
    const underA = await start("A", { PAY_SECRET: A })
    const endpoint = await register(underA, second)
    const rotated = await underA.api.request(
      "POST",
      `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
      { idempotencyKey: newKey(), body: { expireCurrentInSeconds: 3600 } }
    )
    expect(rotated.status, rotated.text).toBe(200)
    second.secrets.push(rotated.body.secret)
    expect(await deliveredTo(underA, first, second)).toEqual([first.secrets, second.secrets])
    const toA = await cli({ ...base, PAY_SECRET: A }, "secret", "reseal", "--json")
    expect(toA.code, toA.stderr).toBe(0)
    expect(JSON.parse(toA.stdout)).toMatchObject({ resealed: 1, current: 2, unopenable: 0 })
    await stop(underA)

    // PAY_SECRET=B, A as previous: the server says so, and the re-seal runs beside it.
    const rotating = await start("B with A", { PAY_SECRET: B, PAY_SECRET_PREVIOUS: A })
    expect(rotating.output()).toContain("1 previous secret(s) (PAY_SECRET_PREVIOUS)")
    expect(await deliveredTo(rotating, first, second)).toEqual([first.secrets, second.secrets])
    const env = { ...base, PAY_SECRET: B, PAY_SECRET_PREVIOUS: A }
    const toB = await cli(env, "secret", "reseal", "--json")
    expect(toB.code, toB.stderr).toBe(0)
    expect(JSON.parse(toB.stdout)).toMatchObject({
      resealed: 3,
      current: 0,
      unopenable: 0,
      fields: {
        "webhookEndpoints.secret": { resealed: 2, current: 0, unopenable: 0 },
        "webhookEndpoints.previousSecret": { resealed: 1, current: 0, unopenable: 0 }
      }
    })
    const again = await cli(env, "secret", "reseal")
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain("Re-sealed 0 stored value(s) under PAY_SECRET; 3 already were.")
    expect(again.stdout).toContain("Drop PAY_SECRET_PREVIOUS 48 hours after the rotation")
    expect(await deliveredTo(rotating, first, second)).toEqual([first.secrets, second.secrets])
    await stop(rotating)

    // A wrong secret: every value reported, exit 1, nothing changed.
    const wrong = await cli({ ...base, PAY_SECRET: C }, "secret", "reseal", "--json")
    expect(wrong.code).toBe(1)
    expect(JSON.parse(wrong.stdout)).toMatchObject({ resealed: 0, current: 0, unopenable: 3 })
    expect(wrong.stderr).toContain("3 stored value(s) open under no configured secret")

    // B alone: every endpoint still signs with the secrets its partner was shown.
    const underB = await start("B", { PAY_SECRET: B })
    expect(underB.output()).not.toContain("PAY_SECRET_PREVIOUS")
    expect(await deliveredTo(underB, first, second)).toEqual([first.secrets, second.secrets])
    await stop(underB)
  }, 120_000)

  it.runIf(store === "sqlite")(
    "refuses a PAY_SECRET_PREVIOUS that is not a list of secrets, naming which one",
    async () => {
      const [runtime, args] = serverCommand()
      for (const [previous, message] of [
        [`${A},short`, "PAY_SECRET_PREVIOUS's secret 2 of 2 must be standard base64"],
        [`${A},,${B}`, "PAY_SECRET_PREVIOUS's secret 2 of 3 is empty"],
        [btoa("too short"), "PAY_SECRET_PREVIOUS's secret 1 of 1 must be at least 32 random bytes"]
      ] as const) {
        const refused = await promisify(execFile)(runtime, args, {
          env: {
            ...process.env,
            ...base,
            HOST: "127.0.0.1",
            PORT: "0",
            PAY_SECRET_PREVIOUS: previous
          },
          cwd: root
        }).then(
          () => undefined,
          (e: { code: number; stdout: string; stderr: string }) => e
        )
        expect(refused?.code, previous).toBe(1)
        expect(`${refused?.stdout}${refused?.stderr}`).toContain(message)
        const cliRefused = await cli({ ...base, PAY_SECRET_PREVIOUS: previous }, "secret", "reseal")
        expect(cliRefused.code).toBe(1)
        expect(cliRefused.stderr).toContain(message)
      }
    },
    60_000
  )
})
