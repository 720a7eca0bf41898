/**
 * `npm run bench:handler`: the engine's own time for one status request, its handler
 * called in-process (no HTTP, no load generator, one request at a time on SQLite), so a
 * change to the router or the route shows in microseconds without the noise of a shared
 * machine's network stack. Prints five rounds of 100,000 requests. Each writes its request
 * line (JSON) to stdout: send it to a file (`> out.txt`) and read the rounds with
 * `grep µs out.txt`, or set BENCH_LOG_LEVEL=warning to measure without it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type LogLevelName, makePaymentEngine, Partners } from "@pay/core"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Effect, Exit, Scope } from "effect"

const dir = mkdtempSync(join(tmpdir(), "pay-bench-handler-"))
const scope = await Effect.runPromise(Scope.make())
const { handle: handler, context } = await Effect.runPromise(
  Scope.extend(
    makePaymentEngine({
      storage: SqliteStorage.layer({ filename: join(dir, "m.sqlite") }),
      publicUrl: "http://127.0.0.1",
      // The request line is written at info (the default); BENCH_LOG_LEVEL=warning leaves it out.
      logging: { level: (process.env.BENCH_LOG_LEVEL as LogLevelName | undefined) ?? "info" }
    }),
    scope
  )
)
const { apiKey } = await Effect.runPromise(
  Effect.provide(
    Effect.flatMap(Partners, (p) => p.create({ name: "m" })),
    context
  )
)
const call = async (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string
) => {
  const r = await handler({
    method,
    url,
    header: (n) => headers[n],
    readBody: async () => new TextEncoder().encode(body ?? "")
  })
  return JSON.parse(String(r.body))
}
const m = await call(
  "POST",
  "/v1/merchants",
  { "api-key": apiKey, "idempotency-key": "k", "content-type": "application/json" },
  '{"merchantName":"M","merchantEmail":"m@m.example"}'
)
const h = { "api-key": apiKey, "merchant-id": m.merchant.id }
const p = await call(
  "POST",
  "/v1/payments",
  { ...h, "content-type": "application/json" },
  JSON.stringify({
    referenceId: "o",
    amount: { unit: "iso4217/USD", value: "100" },
    expiresAt: Math.floor(Date.now() / 1000) + 3600
  })
)
const url = `/v1/payments/${p.paymentId}/status`
const req = {
  method: "GET",
  url,
  header: (n: string) => (h as Record<string, string>)[n],
  readBody: async () => new Uint8Array()
}
for (let round = 0; round < 5; round++) {
  const n = 100_000
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) await handler(req)
  const us = Number(process.hrtime.bigint() - t0) / 1000 / n
  console.log(`GET /v1/payments/{id}/status: ${us.toFixed(2)} µs per request`)
}
await Effect.runPromise(Scope.close(scope, Exit.void))
rmSync(dir, { recursive: true, force: true })
