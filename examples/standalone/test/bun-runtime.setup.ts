// `npm run test:bun` checks Bun only if Bun runs it: a Node worker would pass the same suites
// and prove nothing about Bun.
if (!("Bun" in globalThis)) {
  throw new Error(
    "vitest.bun.config.ts runs under Bun: `bun --bun vitest --config vitest.bun.config.ts`"
  )
}
