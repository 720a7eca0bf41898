/**
 * Shared pieces of the end-to-end tests: the real standalone server over
 * loopback on either store (a temporary SQLite file, or a fresh schema of the
 * test run's PostgreSQL database), the typed client (@pay/client) with a
 * tap on its raw answers, a small fetch client for what is about the wire
 * itself, the engine's services on the same database for what the HTTP API
 * cannot do (a second partner, an operator's status change), and the
 * error-body checks.
 */
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createPayClient, PayApiError, type PayPromiseClient } from "@pay/client"
import { Partners } from "@pay/core"
import type { SandboxChainService } from "@pay/sandbox-chain"
import { freshSchema, withAdmin } from "@pay/storage-postgres/testing"
import type { Layer } from "effect"
import { Effect, Exit, Option, Scope } from "effect"
import { expect } from "vitest"
import { type engineLayer, type StandaloneOverrides, startStandalone } from "../src/app.js"
import type { StandaloneConfig } from "../src/config.js"
import type { StandaloneHost } from "../src/host.js"

/**
 * The host of the runtime the tests run under: the suites run under Node
 * (`vitest run`) and again under the real Bun binary (`npm run test:bun`),
 * where the server is Bun.serve on bun:sqlite or PostgreSQL. A host module is
 * loaded only on its own runtime.
 */
export const runtimeHost: StandaloneHost =
  "Bun" in globalThis
    ? (await import("../src/host-bun.js")).bunHost
    : (await import("../src/host-node.js")).nodeHost

export const PARTNER_KEY = "e2e_partner_key_0123456789"
export const MAX_BODY_BYTES = 16384
export const DEFAULT_VERSION = "2026-02-18"
export const PREVIEW_VERSION = "2026-02-19.preview"

/** The services an engine provides: Partners, Merchants, Settlements, Payments and the stores. */
export type EngineServices = Layer.Layer.Success<ReturnType<typeof engineLayer>>

export interface E2eServer {
  readonly baseUrl: string
  readonly config: StandaloneConfig
  /** Runs an effect on the running server's own engine services (same database, same events). */
  readonly runEngine: <A, E>(effect: Effect.Effect<A, E, EngineServices>) => Promise<A>
  /**
   * The server's sandbox chain (no PAY_CONFIG is given): its faucet, clients
   * and token. A server started with `payConfigPath` has none.
   */
  readonly sandbox: SandboxChainService
  readonly stop: () => Promise<void>
}

/** The stores every end-to-end suite runs on. */
export const STORES = ["sqlite", "postgres"] as const
export type Store = (typeof STORES)[number]

/**
 * A database of its own on `store` for as long as the scope lives: a file in a
 * new temporary folder, or a new schema (dropped afterwards) of the run's
 * PostgreSQL database (see @pay/storage-postgres/testing).
 */
export const freshDatabase = (store: Store) =>
  store === "postgres"
    ? freshSchema()
    : Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "pay-e2e-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        ),
        (dir) => join(dir, "e2e.sqlite")
      )

/**
 * Starts the real server (`store` + the runtime's HTTP server on 127.0.0.1, a free port) on a
 * database of its own; `stop` closes the server, then removes the database. Given a
 * `database` (of `freshDatabase`, in a scope of the test's), it starts on that one instead
 * and leaves it.
 */
export const startServer = async (
  store: Store,
  overrides: Partial<StandaloneConfig> = {},
  parts: StandaloneOverrides = {},
  host: StandaloneHost = runtimeHost
): Promise<E2eServer> => {
  const scope = await Effect.runPromise(Scope.make())
  const stop = () => Effect.runPromise(Scope.close(scope, Exit.void))
  try {
    // Made first, so it is let go of last: after the server and its connections closed.
    const database =
      overrides.database ?? (await Effect.runPromise(Scope.extend(freshDatabase(store), scope)))
    const config: StandaloneConfig = {
      host: "127.0.0.1",
      port: 0,
      database,
      bootstrapApiKey: Option.some(PARTNER_KEY),
      publicUrl: "http://127.0.0.1",
      basePath: "",
      maxBodyBytes: MAX_BODY_BYTES,
      paymentLifetimeMs: 300_000,
      maxLongPollMs: 30_000,
      payConfigPath: Option.none(),
      quoteLockMs: Option.none(),
      fetchAllowPrivate: false,
      secret: Option.none(),
      // Quiet by default: a suite reads the request lines only where it asks for them (logs.e2e).
      logLevel: "warning",
      ...overrides
    }
    const { server, bootstrapped, context, sandbox } = await Effect.runPromise(
      Scope.extend(startStandalone(host, config, parts), scope)
    )
    // On a database of its own the partner is new; on a given one it may be there already.
    if (Option.isNone(bootstrapped) && overrides.database === undefined) {
      throw new Error("the bootstrap partner was not created")
    }
    return {
      baseUrl: server.url,
      config,
      // The server's own services: changes made here wake its long-polls like any other.
      runEngine: (effect) => Effect.runPromise(Effect.provide(effect, context)),
      sandbox: sandbox!,
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field by the tests
export type Json = any

export interface ApiResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body; undefined when it is not JSON. */
  readonly body: Json
}

export interface RequestOptions {
  /** The partner key sent as `Api-Key`; `null` sends none. Default: the bootstrap key. */
  readonly key?: string | null
  /** Serialised as JSON with `Content-Type: application/json`. */
  readonly body?: unknown
  /** Sent as is (no Content-Type unless given in `headers`). */
  readonly rawBody?: string
  readonly idempotencyKey?: string
  readonly headers?: Readonly<Record<string, string>>
}

export interface Client {
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<ApiResponse>
  readonly get: (path: string, options?: RequestOptions) => Promise<ApiResponse>
}

export const client = (baseUrl: () => string): Client => {
  const request = async (
    method: string,
    path: string,
    options: RequestOptions = {}
  ): Promise<ApiResponse> => {
    const headers: Record<string, string> = {}
    const key = options.key === undefined ? PARTNER_KEY : options.key
    if (key !== null) headers["api-key"] = key
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
    let body: string | undefined
    if (options.rawBody !== undefined) body = options.rawBody
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] = "application/json"
    }
    Object.assign(headers, options.headers)
    const response = await fetch(baseUrl() + path, {
      method,
      headers,
      ...(body === undefined ? {} : { body })
    })
    const text = await response.text()
    let parsed: Json
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, text, body: parsed }
  }
  return { request, get: (path, options) => request("GET", path, options) }
}

/** A fresh idempotency key. */
export const newKey = (): string => `e2e-${randomUUID()}`

/** A token to tag names with, so searches see only one test's merchants. */
export const uniqueToken = (): string => randomUUID().replaceAll("-", "").slice(0, 12)

export const MERCHANT_ID = /^mrch_[0-9A-Za-z]{20}$/
export const SETTLEMENT_ID = /^crypto_[0-9A-Za-z]{20}$/
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** A well-formed id that names nothing. */
export const unknownId = (prefix: "mrch" | "crypto"): string => `${prefix}_0000000000ZZZZZZZZZZ`

/**
 * The one error shape (WIRE.md section 3): exactly `code`, `message` and,
 * optionally, `issues` of `{field, message}`, sent as JSON. When `fields` is
 * given, `issues` names each of them.
 */
export const expectError = (
  response: ApiResponse,
  status: number,
  code: string,
  fields?: ReadonlyArray<string>
): void => {
  expect(
    { status: response.status, code: response.body?.code },
    `${response.status} ${response.text}`
  ).toEqual({ status, code })
  expect(response.headers.get("content-type") ?? "").toMatch(/^application\/json\b/)
  const body = response.body as Record<string, unknown>
  expect(typeof body).toBe("object")
  const keys = Object.keys(body).sort()
  expect(keys.filter((k) => k !== "issues")).toEqual(["code", "message"])
  expect(typeof body.message).toBe("string")
  expect((body.message as string).length).toBeGreaterThan(0)
  if ("issues" in body) {
    expect(Array.isArray(body.issues)).toBe(true)
    for (const issue of body.issues as Array<Record<string, unknown>>) {
      // `code` only where a client may act on the kind of wrong (a refused logo).
      expect(
        Object.keys(issue)
          .filter((k) => k !== "code")
          .sort()
      ).toEqual(["field", "message"])
      expect(typeof issue.field).toBe("string")
      expect(typeof issue.message).toBe("string")
      if ("code" in issue) expect(issue.code).toMatch(/^[a-z_]+$/)
    }
  }
  if (fields !== undefined) {
    expect(issueFields(response)).toEqual(expect.arrayContaining([...fields]))
  }
}

/** The fields named in an error's `issues`. */
export const issueFields = (response: ApiResponse): Array<string> =>
  ((response.body?.issues ?? []) as Array<{ field: string }>).map((i) => i.field)

/** The raw answer to a request the typed client sent. */
export interface WireAnswer extends ApiResponse {
  readonly method: string
  readonly url: string
}

/**
 * The typed client (@pay/client's Promise facade) with one partner's key, and
 * a tap on the wire: `lastAnswer()` is the raw answer (status, headers, text,
 * parsed body) to the latest request it sent, for checks of a success's exact
 * shape and headers, which its decoded result cannot show (decoding drops
 * fields the definition does not name). Retries are off, so each call is one
 * request and a failing server is never papered over.
 */
export type PayClient = PayPromiseClient & {
  readonly lastAnswer: () => WireAnswer
}

export const payClient = (server: E2eServer, apiKey: string = PARTNER_KEY): PayClient => {
  let last: WireAnswer | undefined
  const tap: typeof globalThis.fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init)
    const text = await response.clone().text()
    let body: Json
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    last = {
      method: init?.method ?? "GET",
      url: input instanceof Request ? input.url : String(input),
      status: response.status,
      headers: response.headers,
      text,
      body
    }
    return response
  }
  const pay = createPayClient({ baseUrl: server.baseUrl, apiKey, fetch: tap, retries: 0 })
  return Object.assign(pay, {
    lastAnswer: (): WireAnswer => {
      if (last === undefined) throw new Error("the client has sent no request yet")
      return last
    }
  })
}

/**
 * `result`, the typed result of `pay`'s latest call, once checked to be that
 * call's whole raw answer (decoding dropped nothing from it), so that checks
 * made on it hold for the wire as they are.
 */
export const whole = <A>(pay: PayClient, result: A): A => {
  expect(pay.lastAnswer().body).toEqual(result)
  return result
}

/** What the typed client answers for a merchant. */
export type Merchant = Awaited<ReturnType<PayPromiseClient["merchants"]["create"]>>["merchant"]

/** Creates a merchant through the typed client (201 or it rejects); returns the `merchant`. */
export const createMerchant = async (
  pay: PayPromiseClient,
  name: string,
  options: { readonly email?: string } = {}
): Promise<Merchant> =>
  (
    await pay.merchants.create({
      merchantName: name,
      merchantEmail: options.email ?? "billing@shop.example"
    })
  ).merchant

/** The rejection of `promise`, which must reject. */
export const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

/**
 * A refusal the typed client reports: a `PayApiError` the server answered
 * with `status` and `code`, whose raw answer is the one error shape
 * (`expectError`, naming `fields` when given).
 */
export const expectRefusal = async (
  pay: PayClient,
  call: Promise<unknown>,
  status: number,
  code: string,
  fields?: ReadonlyArray<string>
): Promise<PayApiError> => {
  const error = await rejection(call)
  expect(error).toBeInstanceOf(PayApiError)
  expect(error).toMatchObject({ status, code, source: "server" })
  expectError(pay.lastAnswer(), status, code, fields)
  return error as PayApiError
}

/** A second partner account on the server's database, with its key. */
export const createPartner = (
  server: E2eServer,
  name: string,
  apiVersion?: "2026-02-18" | "2026-02-19.preview"
): Promise<{ readonly partnerId: string; readonly apiKey: string }> =>
  server.runEngine(
    Effect.gen(function* () {
      const partners = yield* Partners
      const created = yield* partners.create({ name, apiVersion })
      return { partnerId: created.partner.id, apiKey: created.apiKey }
    })
  )

/**
 * Everything the server's database holds, as text to search for what must
 * not be there (a secret in clear): a SQLite file's bytes (and its WAL's),
 * free pages included, or every row of `tables` in the PostgreSQL schema.
 */
export const storedText = async (
  server: E2eServer,
  tables: ReadonlyArray<string> = ["keys", "idempotency_keys", "audit_log", "partners"]
): Promise<string> => {
  const database = server.config.database
  if (!database.startsWith("postgres")) {
    const read = (path: string) => (existsSync(path) ? readFileSync(path).toString("latin1") : "")
    return read(database) + read(`${database}-wal`)
  }
  const rows = await Effect.runPromise(
    withAdmin(database, (sql) =>
      Effect.forEach(tables, (table) => sql.unsafe(`SELECT * FROM ${table}`))
    )
  )
  return JSON.stringify(rows)
}

/**
 * Runs `check` until it passes (returns without throwing), every `intervalMs`,
 * and answers what it returned; once `timeoutMs` has passed, fails with the
 * last failure itself (an `expect`'s message and diff), never a silent return.
 * Deadlines are generous: a loaded 2-core machine may be slow, never wrong.
 */
export const eventually = async <A>(
  check: () => Promise<A>,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() >= deadline) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100))
  }
}

/**
 * How long an exactly-once check keeps listening after the last expected arrival. A
 * duplicate the engine would send later than this is not seen; one it sends from a retry or a
 * second instance comes well within it (their waits are tens to hundreds of milliseconds).
 */
export const QUIET_PERIOD_MS = 1_000

/**
 * The exactly-once check: waits until `read()` equals `expected` (the last arrival), then
 * reads it again through a quiet period of `quietMs` (QUIET_PERIOD_MS), failing at the first
 * read that differs. A count checked right after the last arrival would pass with a duplicate
 * sent a moment later; this one does not. Answers what it read last.
 */
export const exactlyAfterQuiet = async <A>(
  read: () => Promise<A> | A,
  expected: A,
  options: { readonly timeoutMs?: number; readonly quietMs?: number; readonly what?: string } = {}
): Promise<A> => {
  const check = async () => {
    const value = await read()
    expect(value, options.what).toEqual(expected)
    return value
  }
  await eventually(check, { timeoutMs: options.timeoutMs ?? 20_000, intervalMs: 50 })
  const quietUntil = Date.now() + (options.quietMs ?? QUIET_PERIOD_MS)
  let last = await check()
  while (Date.now() < quietUntil) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    last = await check()
  }
  return last
}
