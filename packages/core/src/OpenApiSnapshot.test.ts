/**
 * The engine's OpenAPI document (`/openapi.json` less its `servers`), pinned: every route,
 * schema, example and error of the partner API and the wallet gateway, with keys sorted so the
 * order code builds it in does not count. A change to the contract shows as a diff of
 * `__snapshots__/openapi.json` in review; a restructuring that should change nothing (issue 36's
 * layers) is checked by it. After an intended change: `npx vitest run -u <this file>`.
 */
import { describe, expect, it } from "vitest"
import { openApiDocument } from "./Api.js"

/** `value` with every object's keys in order, arrays as they are. */
const sortedKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortedKeys)
    : value !== null && typeof value === "object"
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])])
        )
      : value

describe("the OpenAPI document", () => {
  it("is the pinned one, keys sorted", async () => {
    await expect(`${JSON.stringify(sortedKeys(openApiDocument()), null, 2)}\n`).toMatchFileSnapshot(
      "./__snapshots__/openapi.json"
    )
  })
})
