/**
 * The README's commands as a user runs them, on a SQLite file: the server `npm start` builds
 * and runs, as its own process (first-start key, listening line, clean stop on SIGTERM), and
 * the CLI on the same database while the server runs. Under `npm run test:bun` the server is
 * the one `npm run start:bun` runs, on Bun, and the CLI beside it is still `npm run pay`'s, on
 * Node. Its settings, paths and PostgreSQL: process-settings.e2e.test.ts.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { plainImage, startLogoServer } from "@pay/logos/testing"
import { describe, expect, it } from "vitest"
import { bootstrapKeyOf } from "./instances-support.js"
import {
  type AuditJson,
  appsScenario,
  baseEnv,
  cli,
  cliOn,
  dir,
  MIGRATIONS,
  processHooks,
  refusal,
  sqliteEnv,
  startServer,
  stop
} from "./process-support.js"

processHooks()

describe("npm start and the CLI", () => {
  it("`pay migrate` applies the migrations to a new file once, then finds nothing to do", async () => {
    const env = { ...baseEnv, PAY_DATABASE: join(dir, "migrated", "pay.sqlite") }
    const first = JSON.parse((await cliOn(env)("migrate", "--json")).stdout)
    expect(first).toEqual({ applied: MIGRATIONS, created: env.PAY_DATABASE })
    const again = await cliOn(env)("migrate")
    expect(again.stdout).toContain("up to date")
    const refused = await cliOn(env)("migrate", "--database", "mysql://nope").catch(
      (e: { code: number; stderr: string }) => e
    )
    expect(refused).toMatchObject({ code: 1 })
    expect((refused as { stderr: string }).stderr).toContain("postgres://")
  }, 30_000)

  it("`pay apps` creates wallet apps, shows the App-Id and Api-Key once, lists them, refuses bad input", async () => {
    const run = cliOn({ ...baseEnv, PAY_DATABASE: join(dir, "apps", "pay.sqlite") })
    // Only `migrate` creates a SQLite file: the other commands refuse a path with none.
    await run("migrate")
    await appsScenario(run)
  }, 60_000)

  it("prints a key on first start, serves it, works beside the CLI, and stops cleanly", async () => {
    const first = await startServer()
    const key = bootstrapKeyOf(first.output())
    expect(key, first.output()).toBeDefined()
    expect(first.output()).toContain("/docs")

    const health = await fetch(`${first.url}/health`)
    expect(health.status).toBe(200)
    const list = await fetch(`${first.url}/v1/merchants`, { headers: { "Api-Key": key! } })
    expect(list.status).toBe(200)

    // The CLI on the same file while the server runs.
    const created = JSON.parse(
      (
        await cli(
          "partners",
          "create",
          "--name",
          "Script Co",
          "--version",
          "2026-02-19.preview",
          "--json"
        )
      ).stdout
    ) as { id: string; apiKey: string; apiVersion: string }
    expect(created.apiVersion).toBe("2026-02-19.preview")
    const asNew = await fetch(`${first.url}/v1/merchants`, {
      headers: { "Api-Key": created.apiKey }
    })
    expect(asNew.status).toBe(200)
    expect(asNew.headers.get("pay-version")).toBe("2026-02-19.preview")

    const merchant = (await (
      await fetch(`${first.url}/v1/merchants`, {
        method: "POST",
        headers: {
          "Api-Key": key!,
          "Idempotency-Key": "cli-1",
          "Content-Type": "application/json"
        },
        body: JSON.stringify({ merchantName: "Status Shop", merchantEmail: "s@shop.example" })
      })
    ).json()) as { merchant: { id: string } }
    const set = JSON.parse(
      (await cli("merchants", "set-status", merchant.merchant.id, "suspended", "--json")).stdout
    ) as { status: string }
    expect(set.status).toBe("suspended")
    const seen = (await (
      await fetch(`${first.url}/v1/merchants?status=suspended`, { headers: { "Api-Key": key! } })
    ).json()) as { merchants: Array<{ id: string }> }
    expect(seen.merchants.map((m) => m.id)).toEqual([merchant.merchant.id])

    const listed = JSON.parse((await cli("partners", "list", "--json")).stdout) as Array<{
      name: string
    }>
    expect(listed.map((p) => p.name)).toEqual(["Default partner", "Script Co"])
    await expect(
      cli("merchants", "set-status", "mrch_00000000000000000000", "active")
    ).rejects.toThrow(/No merchant/)

    expect(await stop(first.child)).toBe(0)
    expect(first.output()).toContain("Pay engine stopped.")

    // A restart keeps the data and prints no new key.
    const second = await startServer()
    expect(second.output()).not.toMatch(/pk_\S+/)
    const again = await fetch(`${second.url}/v1/merchants/${merchant.merchant.id}`, {
      headers: { "Api-Key": key! }
    })
    expect(again.status).toBe(200)
    expect(await stop(second.child)).toBe(0)
  }, 120_000)
  it("`pay keys` and `pay apps keys` create, list, rotate and revoke keys the running server honours", async () => {
    const env = { ...sqliteEnv, PAY_DATABASE: join(dir, "keys", "pay.sqlite") }
    mkdirSync(join(dir, "keys"), { recursive: true })
    const run = cliOn(env)
    const server = await startServer(env)
    try {
      const key = bootstrapKeyOf(server.output())
      const status = async (path: string, apiKey: string) =>
        (await fetch(`${server.url}${path}`, { headers: { "Api-Key": apiKey } })).status
      /** Asks again every 100 ms until the key is refused with 401; a key never refused fails the test. */
      const refusedSoon = async (path: string, apiKey: string) => {
        const deadline = Date.now() + 20_000
        let last = await status(path, apiKey)
        while (last !== 401 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          last = await status(path, apiKey)
        }
        expect(last, path).toBe(401)
      }
      const [partner] = JSON.parse((await run("partners", "list", "--json")).stdout)
      const listed = JSON.parse(
        (await run("keys", "list", "--partner", partner.id, "--json")).stdout
      )
      expect(listed.map((k: { name: string }) => k.name)).toEqual(["bootstrap"])
      expect(JSON.stringify(listed)).not.toContain(key)

      const created = JSON.parse(
        (await run("keys", "create", "--partner", partner.id, "--name", "ops", "--json")).stdout
      )
      expect(created.secret).toMatch(/^pk_/)
      expect(await status("/v1/api-keys", created.secret)).toBe(200)
      expect(created.scopes).toEqual([
        "read",
        "payments",
        "merchants",
        "webhooks",
        "refunds",
        "keys"
      ])
      // The operator gives a key the scopes asked; it is held to them.
      const scoped = JSON.parse(
        (
          await run(
            "keys",
            "create",
            "--partner",
            partner.id,
            "--scopes",
            "payments,read",
            "--json"
          )
        ).stdout
      )
      expect(scoped.scopes).toEqual(["read", "payments"])
      expect(await status("/v1/api-keys", scoped.secret)).toBe(200)
      const scopedLine = (await run("keys", "list", "--partner", partner.id)).stdout
        .split("\n")
        .find((line) => line.startsWith(scoped.id))
      expect(scopedLine).toContain("scopes read,payments")
      // The last key too: the CLI is the way out when it leaked.
      const rotated = JSON.parse(
        (
          await run(
            "keys",
            "rotate",
            created.id,
            "--partner",
            partner.id,
            "--overlap-seconds",
            "0",
            "--json"
          )
        ).stdout
      )
      await run("keys", "revoke", listed[0].id, "--partner", partner.id)
      const revokeLast = (await run("keys", "revoke", rotated.id, "--partner", partner.id)).stdout
      expect(revokeLast).toContain(`Revoked ${rotated.id}`)
      // Another process revoked them: refused once the server's cache of keys (5 s) lapses.
      for (const secret of [key!, created.secret, rotated.secret]) {
        await refusedSoon("/v1/api-keys", secret)
      }
      const text = (await run("keys", "list", "--partner", partner.id)).stdout
      expect(text.match(/ revoked /g)).toHaveLength(3)

      // A wallet app's key: its first comes with the app; rotated and revoked by the CLI only.
      const app = JSON.parse((await run("apps", "create", "--name", "Keyed", "--json")).stdout)
      const gateway = `/v1/gateway/payment/pay_0000000000ZZZZZZZZZZ`
      expect(await status(gateway, app.apiKey)).toBe(404)
      const [appKey] = JSON.parse(
        (await run("apps", "keys", "list", "--app", app.id, "--json")).stdout
      )
      const next = JSON.parse(
        (
          await run(
            "apps",
            "keys",
            "rotate",
            appKey.id,
            "--app",
            app.id,
            "--overlap-seconds",
            "0",
            "--json"
          )
        ).stdout
      )
      await run("apps", "keys", "revoke", next.id, "--app", app.id)
      await refusedSoon(gateway, app.apiKey)
      await refusedSoon(gateway, next.secret)

      for (const [args, message] of [
        [["keys", "list", "--partner", "nope"], "is not a partner id"],
        [["keys", "list", "--partner", "ptnr_0000000000ZZZZZZZZZZ"], "no partner"],
        [["keys", "revoke", "nope", "--partner", partner.id], "is not a key id"],
        [["keys", "revoke", "key_0000000000ZZZZZZZZZZ", "--partner", partner.id], "no key"],
        [["keys", "rotate", rotated.id, "--partner", partner.id], "is revoked or expired"],
        [["keys", "create", "--partner", partner.id, "--expires-at", "soon"], "--expires-at"],
        [
          ["keys", "create", "--partner", partner.id, "--scopes", "read,admin"],
          "--scopes must be among"
        ],
        [["apps", "keys", "list", "--app", "app_0000000000ZZZZZZZZZZ"], "no wallet app"]
      ] as const) {
        const refused = await refusal(run(...args))
        expect(refused.code, args.join(" ")).toBe(1)
        expect(refused.stderr).toContain(message)
      }
    } finally {
      expect(await stop(server.child)).toBe(0)
    }
  }, 120_000)

  it("`pay apps disable` and `enable` switch a wallet app the running server refuses (403 app_disabled) by key and App-Id within 5 s, then serves again; `apps list` shows status and last use", async () => {
    const env = { ...sqliteEnv, PAY_DATABASE: join(dir, "app-status", "pay.sqlite") }
    mkdirSync(join(dir, "app-status"), { recursive: true })
    const run = cliOn(env)
    const server = await startServer(env)
    try {
      const app = JSON.parse((await run("apps", "create", "--name", "Switched", "--json")).stdout)
      const gateway = `${server.url}/v1/gateway/payment/pay_0000000000ZZZZZZZZZZ`
      const byKey = () => fetch(gateway, { headers: { "Api-Key": app.apiKey } })
      const byAppId = () => fetch(gateway, { headers: { "App-Id": app.id } })
      // Served (no such payment: 404), and so remembered by the server.
      expect((await byKey()).status).toBe(404)
      expect((await byAppId()).status).toBe(404)
      /** Asks every 100 ms until the answer has `status`; fails after 5 s. */
      const answersSoon = async (ask: () => Promise<Response>, status: number, code?: string) => {
        const deadline = Date.now() + 5_000
        let last = await ask()
        while (last.status !== status && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          last = await ask()
        }
        expect(last.status).toBe(status)
        if (code !== undefined) expect((await last.json()).code).toBe(code)
      }

      const disabled = JSON.parse((await run("apps", "disable", app.id, "--json")).stdout)
      expect(disabled).toEqual({ id: app.id, name: "Switched", status: "disabled" })
      await answersSoon(byKey, 403, "app_disabled")
      await answersSoon(byAppId, 403, "app_disabled")
      const [listed] = JSON.parse((await run("apps", "list", "--json")).stdout)
      expect(listed).toMatchObject({ id: app.id, status: "disabled" })
      expect(Date.parse(listed.lastUsedAt)).not.toBeNaN()
      const line = (await run("apps", "list")).stdout
      expect(line).toContain(`${app.id}  disabled  `)
      expect(line).toContain(`last used ${listed.lastUsedAt}`)

      const enabled = (await run("apps", "enable", app.id)).stdout
      expect(enabled).toContain(`Wallet app ${app.id} (Switched) is now active`)
      await answersSoon(byKey, 404)
      await answersSoon(byAppId, 404)

      for (const unknown of ["app_0000000000ZZZZZZZZZZ", "nope"]) {
        const refused = await refusal(run("apps", "disable", unknown, "--json"))
        expect(refused.code).toBe(1)
        expect(JSON.parse(refused.stderr).error).toMatchObject({
          code: "not_found",
          message: `No wallet app ${unknown}`
        })
      }
    } finally {
      expect(await stop(server.child)).toBe(0)
    }
  }, 120_000)

  it("`pay audit` lists the settlement changes made over the API, newest first, as text and JSON, by partner, a page at a time; refuses a bad partner", async () => {
    const env = { ...sqliteEnv, PAY_DATABASE: join(dir, "audit", "pay.sqlite") }
    const run = cliOn(env)
    const server = await startServer(env)
    const key = bootstrapKeyOf(server.output())
    expect(key, server.output()).toBeDefined()
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          "Api-Key": key!,
          "Idempotency-Key": `audit-${path}-${method}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      expect(response.status, `${method} ${path}`).toBeLessThan(300)
      return (await response.json()) as unknown
    }
    const usdc = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    const wallet = "eip155:8453:0x1234567890AbcdEF1234567890aBcdef12345678"
    const wallet2 = "eip155:8453:0xABcdEFABcdEFabcdEfAbCdefabcdeFABcDEFabCD"
    const { merchant } = (await call("POST", "/v1/merchants", {
      merchantName: "Audited Shop",
      merchantEmail: "a@shop.example"
    })) as { merchant: { id: string } }
    const settlements = `/v1/merchants/${merchant.id}/settlements/crypto`
    const { settlements: created } = (await call("POST", settlements, {
      settlements: [{ asset: usdc, destination: wallet }]
    })) as { settlements: Array<{ id: string }> }
    const id = created[0]!.id
    await call("PUT", `${settlements}/${id}`, { destination: wallet2 })
    await call("DELETE", `${settlements}/${id}`)
    const [partner] = JSON.parse((await run("partners", "list", "--json")).stdout) as Array<{
      id: string
    }>
    const other = JSON.parse(
      (await run("partners", "create", "--name", "Quiet", "--json")).stdout
    ) as {
      id: string
    }

    const all = JSON.parse((await run("audit", "--json")).stdout) as Array<AuditJson>
    // The settlement changes, between the keys made with the two partners: at the first start
    // (by the engine, from PAY_BOOTSTRAP_API_KEY or generated) and by the CLI.
    expect(all.map((e) => [e.action, e.partnerId, e.actor.kind])).toEqual([
      ["api_key.created", other.id, "cli"],
      ["settlement.deleted", partner!.id, "api_key"],
      ["settlement.updated", partner!.id, "api_key"],
      ["settlement.created", partner!.id, "api_key"],
      ["api_key.created", partner!.id, "engine"]
    ])
    const entries = all.filter((e) => e.action.startsWith("settlement."))
    expect(
      entries.map((e) => [e.action, e.subject, e.partnerId, e.merchantId, e.before, e.after])
    ).toEqual([
      [
        "settlement.deleted",
        id,
        partner!.id,
        merchant.id,
        { asset: usdc, destination: wallet2 },
        null
      ],
      [
        "settlement.updated",
        id,
        partner!.id,
        merchant.id,
        { asset: usdc, destination: wallet },
        { asset: usdc, destination: wallet2 }
      ],
      [
        "settlement.created",
        id,
        partner!.id,
        merchant.id,
        null,
        { asset: usdc, destination: wallet }
      ]
    ])
    for (const e of entries) {
      expect(e.id).toMatch(/^aud_/)
      expect(e.at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      expect(e.actor.kind).toBe("api_key")
      expect(e.actor.keyId).toMatch(/^key_/)
    }
    expect(JSON.parse((await run("audit", "--partner", partner!.id, "--json")).stdout)).toEqual(
      all.filter((e) => e.partnerId === partner!.id)
    )

    const text = (await run("audit", "--partner", partner!.id)).stdout
    expect(text).toContain(`settlement.updated  ${id}`)
    expect(text).toContain(
      `partner ${partner!.id}, merchant ${merchant.id}, by key ${entries[0]!.actor.keyId}`
    )
    expect(text).toContain(`destination: ${wallet} -> ${wallet2}`)
    expect(text.indexOf("settlement.deleted")).toBeLessThan(text.indexOf("settlement.created"))

    // A page of two, then the rest.
    const page = (await run("audit", "--limit", "2")).stdout
    expect(page).toContain(`(more: --before ${all[1]!.id})`)
    expect(page).not.toContain("settlement.updated")
    const rest = JSON.parse((await run("audit", "--before", all[1]!.id, "--json")).stdout)
    expect(rest).toEqual(all.slice(2))

    const quiet = (await run("audit", "--partner", other.id)).stdout
    expect(quiet).toContain("api_key.created")
    expect(quiet).toContain(`partner ${other.id}, by cli`)
    expect((await run("audit", "--before", all[4]!.id)).stdout.trim()).toBe(
      `No audit entries before ${all[4]!.id}.`
    )
    for (const [args, message] of [
      [["--partner", "nope"], "--partner must be a partner id"],
      [["--partner", "ptnr_0000000000ZZZZZZZZZZ"], "No partner ptnr_0000000000ZZZZZZZZZZ"],
      [["--limit", "0"], "--limit must be 1 to 1000"],
      [["--before", "evt_0000000000ZZZZZZZZZZ"], "--before must be an audit entry id"]
    ] as const) {
      const refused = await refusal(run("audit", ...args))
      expect(refused.code).toBe(1)
      expect(refused.stderr.trim().split("\n"), refused.stderr).toHaveLength(1)
      expect(refused.stderr).toContain(message)
    }
    expect(await stop(server.child)).toBe(0)
  }, 120_000)

  it("PAY_FETCH_ALLOW_PRIVATE: off by default (a loopback logo refused, no warning); 1 with the test CA in NODE_EXTRA_CA_CERTS fetches it, with a warning (another value: process-settings.e2e)", async () => {
    const logos = await startLogoServer()
    try {
      logos.set("/logo.png", await plainImage(600, "png"), "image/png")
      const create = (url: string) =>
        fetch(`${url}/v1/merchants`, {
          method: "POST",
          headers: {
            "Api-Key": "pk_process_logo_key_0123456789abcdef",
            "Idempotency-Key": `logo-${Math.random()}`,
            "Content-Type": "application/json"
          },
          body: JSON.stringify({
            merchantName: "Logo Co",
            merchantEmail: "logo@co.example",
            iconUrl: `${logos.origin}/logo.png`
          })
        }).then(async (r) => ({ status: r.status, body: await r.json() }))
      const env = {
        ...baseEnv,
        PAY_DATABASE: join(dir, "logos.sqlite"),
        PAY_BOOTSTRAP_API_KEY: "pk_process_logo_key_0123456789abcdef"
      }

      const closed = await startServer(env)
      try {
        expect(closed.output()).not.toContain("PAY_FETCH_ALLOW_PRIVATE")
        const refused = await create(closed.url)
        expect(refused.status).toBe(400)
        expect(refused.body.issues[0].code).toBe("icon_address_not_allowed")
        expect(logos.requests("/logo.png")).toBe(0)
      } finally {
        expect(await stop(closed.child)).toBe(0)
      }

      const open = await startServer({
        ...env,
        PAY_FETCH_ALLOW_PRIVATE: "1",
        NODE_EXTRA_CA_CERTS: logos.caFile
      })
      try {
        // On stderr, which may arrive after the banner's end on stdout.
        for (let i = 0; i < 100 && !open.output().includes("WARNING"); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        expect(open.output()).toMatch(/WARNING: PAY_FETCH_ALLOW_PRIVATE=1/)
        const created = await create(open.url)
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        const iconUrl: string = created.body.merchant.iconUrl
        expect(iconUrl).toMatch(/\/logos\/[0-9a-f]{64}\.webp$/)
        const image = await fetch(`${open.url}/logos/${iconUrl.split("/logos/")[1]}`)
        expect([image.status, image.headers.get("content-type")]).toEqual([200, "image/webp"])
        expect(logos.requests("/logo.png")).toBe(1)
      } finally {
        expect(await stop(open.child)).toBe(0)
      }
    } finally {
      await logos.close()
    }
  }, 90_000)

  it("PAY_SQLITE_READ_WORKER: lists payments and their statistics alike with the read worker (the default) and without it (0) (another value: process-settings.e2e)", async () => {
    const listed = async (readWorker: string | undefined) => {
      const env = {
        ...baseEnv,
        PAY_DATABASE: join(dir, `read-worker-${readWorker ?? "default"}.sqlite`),
        PAY_BOOTSTRAP_API_KEY: "read_worker_key_0123456789",
        ...(readWorker === undefined ? {} : { PAY_SQLITE_READ_WORKER: readWorker })
      }
      const server = await startServer(env)
      try {
        const headers = { "Api-Key": env.PAY_BOOTSTRAP_API_KEY, "Content-Type": "application/json" }
        const merchant = (await (
          await fetch(`${server.url}/v1/merchants`, {
            method: "POST",
            headers: { ...headers, "Idempotency-Key": "rw-1" },
            body: JSON.stringify({ merchantName: "Shop", merchantEmail: "s@shop.test" })
          })
        ).json()) as { merchant: { id: string } }
        const ids: Array<string> = []
        for (const referenceId of ["RW-1", "RW-2", "OTHER-3"]) {
          const response = await fetch(`${server.url}/v1/payments`, {
            method: "POST",
            headers: { ...headers, "Merchant-Id": merchant.merchant.id },
            body: JSON.stringify({ referenceId, amount: { unit: "iso4217/USD", value: "100" } })
          })
          ids.push(((await response.json()) as { paymentId: string }).paymentId)
        }
        const list = async (query: string) => {
          const response = await fetch(`${server.url}/v1/payments?${query}`, { headers })
          expect(response.status).toBe(200)
          const body = (await response.json()) as {
            data: Array<{ paymentId: string }>
            nextCursor: string | null
            stats: unknown
          }
          return {
            ids: body.data.map((p) => p.paymentId),
            more: body.nextCursor !== null,
            stats: body.stats
          }
        }
        const all = await list("limit=2")
        const rest = await list("limit=2&referenceId=rw-")
        return { all, rest, created: ids }
      } finally {
        expect(await stop(server.child)).toBe(0)
      }
    }
    for (const readWorker of [undefined, "0"]) {
      const { all, rest, created } = await listed(readWorker)
      // Newest first, a page of two and a cursor; the search finds the two RW- references.
      expect(all.ids, `PAY_SQLITE_READ_WORKER=${readWorker}`).toEqual([created[2], created[1]])
      expect(all.more).toBe(true)
      expect(rest.ids).toEqual([created[1], created[0]])
      expect(rest.more).toBe(false)
      expect(all.stats).toEqual(rest.stats)
    }
  }, 90_000)
})
