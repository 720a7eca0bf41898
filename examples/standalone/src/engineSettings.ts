/**
 * The settings the engine owns (its options: body limit, payment lifetime,
 * long-polls, quote lock, retention, webhook delivery, chain jobs, rate
 * limits), as the standalone server reads them: their defaults and ranges
 * live in the engine's schemas (`@pay/core`'s `PaymentsSettings`, …), never
 * here. A variable or a PAY_CONFIG field left out stays undefined and the
 * engine's default applies; one given is checked by the engine's own schema,
 * after the conversion to the engine's unit, and a refusal is said in the
 * variable's unit (seconds where the variable is in seconds).
 */
import { settingAnnotation, wholeNumberRangeOf } from "@pay/core"
import { SchemaAST as AST, Either, Schema } from "effect"

/** One engine setting: its feature's fields, its key, and how many of its units make one of ours. */
export interface EngineSetting {
  readonly fields: Schema.Struct.Fields
  readonly key: string
  /** 1000 for seconds read into milliseconds, 86,400,000 for days. */
  readonly perUnit: number
}

/** Whether the engine's schema takes `value` (in its unit) for the setting. */
export const engineTakes = ({ fields, key }: EngineSetting, value: unknown): boolean => {
  const field = fields[key]
  if (field === undefined) throw new Error(`${key} is not an engine setting`)
  // The engine's field as it is (its filters, its messages); settings need no services.
  const one = Schema.Struct({ [key]: field }) as unknown as Schema.Schema<unknown>
  return Either.isRight(Schema.decodeUnknownEither(one)({ [key]: value }))
}

/**
 * The engine's range of a whole-number setting in our unit: the whole units
 * inside it (the quote lock's 100 ms to 3,600,000 ms is 1 to 3,600 seconds).
 */
export const rangeInUnits = (
  setting: EngineSetting
): { readonly from: number; readonly to: number } => {
  const { from, to } = wholeNumberRangeOf(setting.fields, setting.key)
  return { from: Math.ceil(from / setting.perUnit), to: Math.floor(to / setting.perUnit) }
}

/** The most items an array setting takes (its `Schema.maxItems`), e.g. the webhook retry schedule's 50 waits. */
export const maxItemsOf = (setting: EngineSetting): number => {
  const found = settingAnnotation(setting.fields, setting.key, (ast) => {
    const json = AST.getJSONSchemaAnnotation(ast)
    const maxItems =
      json._tag === "Some" ? (json.value as { maxItems?: unknown }).maxItems : undefined
    return typeof maxItems === "number" ? maxItems : undefined
  })
  if (found === undefined) throw new Error(`${setting.key} has no most items`)
  return found
}

/**
 * A PAY_CONFIG field that is an engine setting: a whole number in the file's
 * unit (`unit`, e.g. "seconds"), checked by the engine's schema once
 * converted, its message the engine's range in the file's unit.
 */
export const engineWholeNumberField = (setting: EngineSetting, unit: string) => {
  const { from, to } = rangeInUnits(setting)
  const message = () => `must be a whole number of ${unit} from ${from} to ${to}`
  return Schema.Number.annotations({ message }).pipe(
    // Whole in the file's unit: 1.5 seconds is 1,500 ms, which the engine would take.
    Schema.filter((n) => Number.isInteger(n) && engineTakes(setting, n * setting.perUnit), {
      message
    })
  )
}
