/**
 * Every default lives in one place, the engine's schemas: the tables of
 * docs/configuration.md (the environment, PAY_CONFIG's fields, the engine's
 * options) are read here against them, each documented default converted to
 * the engine's unit as the server converts it. A default changed in the
 * docs alone, or in a schema alone, fails (each comparison is shown failing
 * on a doctored table and on doctored defaults).
 */
import { readFileSync } from "node:fs"
import {
  bucketSettings,
  ChainWorkSettings,
  EngineSettings,
  GatewaySettings,
  RateLimitSettings,
  RetentionSettings,
  WebhookDeliverySettings,
  wholeNumberRangeOf
} from "@pay/core"
import { ConfigProvider, Effect, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ENGINE_VARIABLES, type StandaloneConfig, standaloneConfig } from "./config.js"
import { maxItemsOf } from "./engineSettings.js"
import { ENGINE_FIELDS } from "./payConfig.js"

const DOC = new URL("../../../docs/configuration.md", import.meta.url)
const doc = readFileSync(DOC, "utf8")

/** The engine's settings with every default applied (the one required option given). */
const engineDefaults: unknown = Schema.decodeUnknownSync(EngineSettings)({
  publicUrl: "http://127.0.0.1:8080"
})

/** The value at a dotted path (`gateway.quoteLockMs`). */
const at = (value: unknown, path: string): unknown =>
  path
    .split(".")
    .reduce<unknown>(
      (v, key) =>
        typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined,
      value
    )

/**
 * The rows of the first table after the heading `heading` (its exact text),
 * each as its cells; the first cell without its backticks.
 */
export const tableAfter = (
  markdown: string,
  heading: string
): ReadonlyArray<ReadonlyArray<string>> => {
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => line.replace(/^#+\s*/, "") === heading && /^#/.test(line))
  if (start < 0) throw new Error(`no heading "${heading}" in the document`)
  const rows: Array<ReadonlyArray<string>> = []
  let inTable = false
  for (const line of lines.slice(start + 1)) {
    if (/^#/.test(line)) break
    if (!line.startsWith("|")) {
      if (inTable) break
      continue
    }
    inTable = true
    const cells = line
      .slice(1, line.endsWith("|") ? -1 : undefined)
      .split(" | ")
      .map((cell) => cell.trim())
    if (cells.every((cell) => /^-*$/.test(cell))) continue
    rows.push(cells)
  }
  // The header row names the columns.
  return rows.slice(1).map(([first = "", ...rest]) => [first.replace(/^`(.*)`$/, "$1"), ...rest])
}

/** A documented number: `262144`, 262,144, `5` (the first backticked value, else the text), commas dropped. */
const documentedNumber = (cell: string): number | undefined => {
  const text = (/`([^`]*)`/.exec(cell)?.[1] ?? cell.split(" (")[0] ?? "").replace(/,/g, "").trim()
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : undefined
}

/** The settings the standalone server reads from `env` alone. */
const readEnv = (env: Record<string, string>): StandaloneConfig =>
  Effect.runSync(
    Effect.withConfigProvider(
      standaloneConfig,
      ConfigProvider.fromMap(new Map(Object.entries(env)))
    )
  )

/**
 * Each variable that is an engine setting: the option it fills, and where
 * the server's settings keep it once read (in the engine's unit).
 */
const ENV_OPTIONS: Readonly<
  Record<string, { readonly option: string; readonly read: (c: StandaloneConfig) => unknown }>
> = {
  PAY_MAX_BODY_BYTES: { option: "maxBodyBytes", read: (c) => c.maxBodyBytes },
  PAY_PAYMENT_LIFETIME_SECONDS: { option: "paymentLifetimeMs", read: (c) => c.paymentLifetimeMs },
  PAY_MAX_LONG_POLL_MS: { option: "maxLongPollMs", read: (c) => c.maxLongPollMs },
  PAY_MAX_HELD_LONG_POLLS: { option: "maxHeldLongPolls", read: (c) => c.maxHeldLongPolls },
  PAY_MAX_HELD_PUBLIC_LONG_POLLS: {
    option: "maxHeldPublicLongPolls",
    read: (c) => c.maxHeldPublicLongPolls
  },
  PAY_MAX_HELD_LONG_POLLS_PER_PAYMENT: {
    option: "maxHeldLongPollsPerPayment",
    read: (c) => c.maxHeldLongPollsPerPayment
  },
  PAY_EXPIRY_SWEEP_SECONDS: { option: "expirySweepMs", read: (c) => c.expirySweepMs },
  PAY_QUOTE_LOCK_SECONDS: {
    option: "gateway.quoteLockMs",
    read: (c) => Option.getOrUndefined(c.quoteLockMs)
  },
  PAY_BUYER_DATA_RETENTION_DAYS: {
    option: "gateway.buyerDataRetentionMs",
    read: (c) => c.buyerDataRetentionMs
  },
  PAY_EVENT_RETENTION_DAYS: {
    option: "retention.eventsMs",
    read: (c) => c.retention?.eventsMs
  },
  PAY_WEBHOOK_DELIVERY_RETENTION_DAYS: {
    option: "retention.webhookDeliveriesMs",
    read: (c) => c.retention?.webhookDeliveriesMs
  },
  PAY_IDEMPOTENCY_RETENTION_DAYS: {
    option: "retention.idempotencyKeysMs",
    read: (c) => c.retention?.idempotencyKeysMs
  },
  PAY_OPTION_RETENTION_DAYS: {
    option: "retention.expiredOptionsMs",
    read: (c) => c.retention?.expiredOptionsMs
  },
  PAY_AUDIT_RETENTION_DAYS: {
    option: "retention.auditTrailMs",
    read: (c) => c.retention?.auditTrailMs
  },
  PAY_PURGE_INTERVAL_SECONDS: {
    option: "retention.purgeEveryMs",
    read: (c) => c.retention?.purgeEveryMs
  },
  PAY_WEBHOOK_RETRY_SCHEDULE: {
    option: "webhookDelivery.retryScheduleMs",
    read: (c) => Option.getOrUndefined(c.webhookRetryScheduleMs ?? Option.none())
  },
  PAY_WEBHOOK_LEASE_SECONDS: {
    option: "webhookDelivery.leaseMs",
    read: (c) => Option.getOrUndefined(c.webhookLeaseMs ?? Option.none())
  },
  PAY_WEBHOOK_MAX_ENDPOINTS_PER_PARTNER: {
    option: "webhookDelivery.maxEndpointsPerPartner",
    read: (c) => c.webhookMaxEndpointsPerPartner
  },
  PAY_WEBHOOK_IN_FLIGHT_PER_PARTNER: {
    option: "webhookDelivery.perPartner",
    read: (c) => c.webhookInFlightPerPartner
  },
  PAY_RATE_LIMIT_PER_SECOND: {
    option: "rateLimits.perApiKey",
    read: (c) => c.rateLimits?.perApiKey
  },
  PAY_RATE_LIMIT_BURST: { option: "rateLimits.perApiKey", read: (c) => c.rateLimits?.perApiKey },
  PAY_GATEWAY_RATE_LIMIT_PER_SECOND: {
    option: "rateLimits.perWalletApp",
    read: (c) => c.rateLimits?.perWalletApp
  },
  PAY_GATEWAY_RATE_LIMIT_BURST: {
    option: "rateLimits.perWalletApp",
    read: (c) => c.rateLimits?.perWalletApp
  },
  PAY_PAYMENT_RATE_LIMIT_PER_SECOND: {
    option: "rateLimits.perPayment",
    read: (c) => c.rateLimits?.perPayment
  },
  PAY_PAYMENT_RATE_LIMIT_BURST: {
    option: "rateLimits.perPayment",
    read: (c) => c.rateLimits?.perPayment
  }
}

/** The option each PAY_CONFIG field that is an engine setting fills. */
const FIELD_OPTIONS: Readonly<Record<keyof typeof ENGINE_FIELDS, string>> = {
  "jobs.pollMs": "chainWork.pollMs",
  "jobs.leaseSeconds": "chainWork.leaseMs",
  "jobs.concurrency": "chainWork.concurrency",
  "jobs.backoffCapSeconds": "chainWork.backoffCapMs",
  "jobs.stuckAfterSeconds": "chainWork.stuckAfterMs",
  "jobs.stuckAfterFailures": "chainWork.stuckAfterFailures",
  quoteLockSeconds: "gateway.quoteLockMs"
}

const ENV_HEADING = "The standalone server's environment"
const FILE_HEADING = "`PAY_CONFIG`: the networks file"
const ENGINE_HEADING = "Engine options"

/**
 * Where the environment table disagrees with the engine's defaults: each
 * engine variable's documented default, read as the server reads the
 * variable, must be the engine's default of its option.
 */
export const environmentMismatches = (
  markdown: string,
  defaults: unknown
): ReadonlyArray<string> => {
  const rows = new Map(
    tableAfter(markdown, ENV_HEADING).map(([name = "", value = ""]) => [name, value])
  )
  const found: Array<string> = []
  for (const [name, { option, read }] of Object.entries(ENV_OPTIONS)) {
    const documented = rows.get(name)
    if (documented === undefined) {
      found.push(`${name} has no row in the environment table`)
      continue
    }
    const engine = at(defaults, option)
    if (name.endsWith("_BURST")) {
      // "the rate": a burst left out is one second's worth, in the engine's bucket.
      const rate = 7
      const burst = bucketSettings({ perSecond: rate })?.burst
      if (documented !== "the rate" || burst !== rate) {
        found.push(
          `${name}: documented ${documented}, the engine's burst of a rate ${rate} is ${burst}`
        )
      }
      continue
    }
    const value = /`([^`]*)`/.exec(documented)?.[1]
    if (value === undefined) {
      found.push(`${name}: documented ${documented}, not a value of the variable`)
      continue
    }
    let read_: unknown
    try {
      read_ = read(readEnv({ [name]: value }))
    } catch (error) {
      found.push(`${name}: documented ${value}, which the server refuses (${String(error)})`)
      continue
    }
    if (JSON.stringify(read_) !== JSON.stringify(engine)) {
      found.push(
        `${name}: documented ${value} (${JSON.stringify(read_)} as ${option}), the engine's default is ${JSON.stringify(engine)}`
      )
    }
  }
  return found
}

/** Where PAY_CONFIG's field table disagrees with the engine's defaults (converted by the field's unit). */
export const fileMismatches = (markdown: string, defaults: unknown): ReadonlyArray<string> => {
  const rows = new Map(
    tableAfter(markdown, FILE_HEADING).map(([name = "", value = ""]) => [name, value])
  )
  const found: Array<string> = []
  for (const [field, option] of Object.entries(FIELD_OPTIONS)) {
    const documented = rows.get(field)
    const value = documented === undefined ? undefined : documentedNumber(documented)
    const engine = at(defaults, option)
    const { perUnit } = ENGINE_FIELDS[field as keyof typeof ENGINE_FIELDS]
    if (value === undefined || value * perUnit !== engine) {
      found.push(
        `${field}: documented ${documented ?? "nowhere"}, the engine's ${option} is ${JSON.stringify(engine)}${perUnit === 1 ? "" : ` (${Number(engine) / perUnit} in the field's unit)`}`
      )
    }
  }
  return found
}

/** The fields whose ranges the engine options' table states, by the option's group. */
const GROUP_FIELDS: Readonly<Record<string, Schema.Struct.Fields>> = {
  gateway: GatewaySettings.fields,
  chainWork: ChainWorkSettings.fields,
  webhookDelivery: WebhookDeliverySettings.fields,
  retention: RetentionSettings.fields
}

/** Every default of the engine's settings that is a number, a list, a flag or an empty group, by its path. */
const defaultLeaves = (value: unknown, path = ""): ReadonlyArray<string> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [path]
  const entries = Object.entries(value)
  if (entries.length === 0) return [path]
  return entries.flatMap(([key, v]) => defaultLeaves(v, path === "" ? key : `${path}.${key}`))
}

/**
 * Where the engine options' table disagrees with `EngineSettings`: each row's
 * default (and stated range) against the schema's, and each default of the
 * schema without a row.
 */
export const engineOptionMismatches = (
  markdown: string,
  defaults: unknown
): ReadonlyArray<string> => {
  const rows = tableAfter(markdown, ENGINE_HEADING)
  const found: Array<string> = []
  const documentedOptions = new Set(rows.map(([option = ""]) => option))
  for (const leaf of defaultLeaves(defaults)) {
    // publicUrl is required (the test's own); basePath follows it.
    if (leaf === "publicUrl" || leaf === "basePath") continue
    if (!documentedOptions.has(leaf)) found.push(`${leaf}: a default of the engine without a row`)
  }
  for (const [option = "", cell = "", rangeCell = ""] of rows) {
    const engine = at(defaults, option)
    const text = /^`([^`]*)`/.exec(cell)?.[1]
    const documented: unknown =
      text !== undefined && /^[[{]|^(true|false)$/.test(text)
        ? JSON.parse(text)
        : documentedNumber(cell)
    if (JSON.stringify(documented) !== JSON.stringify(engine)) {
      found.push(`${option}: documented ${cell}, the engine's default is ${JSON.stringify(engine)}`)
    }
    const stated = /([\d,]+) to ([\d,]+)/.exec(rangeCell)
    if (stated === null) continue
    const [group, key = option] = option.includes(".") ? option.split(".") : [undefined, option]
    // A limit's range: its rate's (a burst's is the same, checked by the engine's schema too).
    const limits = option === "rateLimits" || group === "rateLimits"
    const fields = limits
      ? RateLimitSettings.from.fields
      : group === undefined
        ? EngineSettings.fields
        : GROUP_FIELDS[group]
    const rangeKey = limits ? "perSecond" : key
    if (fields === undefined) {
      found.push(`${option}: a range stated for an option of no known group`)
      continue
    }
    const { from, to } = wholeNumberRangeOf(fields, rangeKey)
    const [, statedFrom = "", statedTo = ""] = stated
    if (
      Number(statedFrom.replace(/,/g, "")) !== from ||
      Number(statedTo.replace(/,/g, "")) !== to
    ) {
      found.push(`${option}: documented range ${rangeCell}, the engine's is ${from} to ${to}`)
    }
    const most = /up to (\d+)/.exec(rangeCell)?.[1]
    if (most !== undefined && Number(most) !== maxItemsOf({ fields, key: rangeKey, perUnit: 1 })) {
      found.push(
        `${option}: documented ${rangeCell}, the engine takes at most ${maxItemsOf({ fields, key: rangeKey, perUnit: 1 })}`
      )
    }
  }
  return found
}

describe("docs/configuration.md's defaults against the engine's schemas", () => {
  it("maps every variable and PAY_CONFIG field that is an engine setting", () => {
    for (const name of Object.keys(ENGINE_VARIABLES)) expect(ENV_OPTIONS, name).toHaveProperty(name)
    for (const field of Object.keys(ENGINE_FIELDS))
      expect(FIELD_OPTIONS, field).toHaveProperty(field)
  })

  it("the environment table: each engine variable's default, read as the server reads it, is the engine's", () => {
    expect(environmentMismatches(doc, engineDefaults)).toEqual([])
  })

  it("the PAY_CONFIG field table: each engine field's default, in the engine's unit, is the engine's", () => {
    expect(fileMismatches(doc, engineDefaults)).toEqual([])
  })

  it("the engine options' table: every default of EngineSettings, and each range stated, is the schema's", () => {
    expect(engineOptionMismatches(doc, engineDefaults)).toEqual([])
  })
})

describe("the comparison fails when one side changes alone", () => {
  /** The document with one table row's cell replaced. */
  const doctored = (row: string, from: string, to: string): string => {
    // The last row of that name: the engine options' table comes after the mapping table.
    const line = doc
      .split("\n")
      .filter((l) => l.startsWith(`| \`${row}\` |`))
      .pop()
    if (line === undefined) throw new Error(`no row ${row}`)
    const changed = line.replace(from, to)
    expect(changed, "the doctoring changed the row").not.toBe(line)
    return doc.replace(line, changed)
  }

  /** The engine's defaults with one changed. */
  const withDefault = (path: string, value: unknown): unknown => {
    const copy = structuredClone(engineDefaults) as Record<string, unknown>
    const keys = path.split(".")
    let target = copy
    for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>
    target[keys[keys.length - 1] as string] = value
    return copy
  }

  it("a variable's documented default changed alone", () => {
    const changed = doctored("PAY_PAYMENT_LIFETIME_SECONDS", "`300`", "`301`")
    expect(environmentMismatches(changed, engineDefaults)).toEqual([
      "PAY_PAYMENT_LIFETIME_SECONDS: documented 301 (301000 as paymentLifetimeMs), the engine's default is 300000"
    ])
    const schedule = doctored("PAY_WEBHOOK_RETRY_SCHEDULE", ",86400,86400`", ",86400`")
    expect(environmentMismatches(schedule, engineDefaults)).toHaveLength(1)
    const burst = doctored("PAY_RATE_LIMIT_BURST", "| the rate |", "| `0` |")
    expect(environmentMismatches(burst, engineDefaults)).toHaveLength(1)
  })

  it("an engine default changed alone, against the environment table", () => {
    expect(environmentMismatches(doc, withDefault("paymentLifetimeMs", 600_000))).toEqual([
      "PAY_PAYMENT_LIFETIME_SECONDS: documented 300 (300000 as paymentLifetimeMs), the engine's default is 600000"
    ])
    expect(
      environmentMismatches(doc, withDefault("gateway.buyerDataRetentionMs", 30 * 86_400_000))
    ).toHaveLength(1)
    expect(
      environmentMismatches(doc, withDefault("rateLimits", { perApiKey: { perSecond: 10 } }))
    ).toHaveLength(1)
  })

  it("a field's documented default, or the engine's, changed alone", () => {
    expect(
      fileMismatches(doctored("jobs.leaseSeconds", "| 15 |", "| 16 |"), engineDefaults)
    ).toEqual([
      "jobs.leaseSeconds: documented 16, the engine's chainWork.leaseMs is 15000 (15 in the field's unit)"
    ])
    expect(fileMismatches(doc, withDefault("chainWork.leaseMs", 20_000))).toEqual([
      "jobs.leaseSeconds: documented 15, the engine's chainWork.leaseMs is 20000 (20 in the field's unit)"
    ])
  })

  it("an engine option's documented default or range, or the engine's default, changed alone", () => {
    expect(
      engineOptionMismatches(doctored("maxBodyBytes", "| 262,144 |", "| 262,145 |"), engineDefaults)
    ).toEqual(["maxBodyBytes: documented 262,145, the engine's default is 262144"])
    expect(
      engineOptionMismatches(
        doctored("chainWork.leaseMs", "100 to 600,000", "100 to 60,000"),
        engineDefaults
      )
    ).toEqual(["chainWork.leaseMs: documented range 100 to 60,000, the engine's is 100 to 600000"])
    expect(engineOptionMismatches(doc, withDefault("webhookDelivery.timeoutMs", 10_000))).toEqual([
      "webhookDelivery.timeoutMs: documented 15,000, the engine's default is 10000"
    ])
    // A new default of the engine, documented nowhere.
    expect(engineOptionMismatches(doc, withDefault("chainWork.batch", 4))).toEqual([
      "chainWork.batch: a default of the engine without a row"
    ])
  })
})
