/**
 * A whole number given as text (a query parameter): one message for every
 * way it can be wrong, naming the rule ("must be a whole number from 1 to
 * 200"), instead of one per check in Effect's own notation.
 */
import { type SchemaAST as AST, Schema } from "effect"

export const wholeNumberFromString = (min: number, max: number, rule?: string) => {
  const message = () => rule ?? `must be a whole number from ${min} to ${max}`
  return Schema.NumberFromString.annotations({ message }).pipe(
    Schema.int({ message }),
    Schema.between(min, max, { message })
  )
}

/** The range of a setting's whole number, kept on its schema (read with `wholeNumberRangeOf`). */
export interface WholeNumberRange {
  readonly from: number
  readonly to: number
  readonly unit: string
}

export const WholeNumberRangeId: unique symbol = Symbol.for("@pay/core/WholeNumberRange")

/**
 * A setting's whole number (a number, not text) in a range, with one message
 * naming the rule and the unit ("must be a whole number of milliseconds from
 * 100 to 600000"). The range is on the schema too, for a program that reads
 * the setting in another unit and says the range in its own (the standalone
 * server's seconds).
 */
export const wholeNumber = (from: number, to: number, unit: string) => {
  const message = () => `must be a whole number of ${unit} from ${from} to ${to}`
  const range: WholeNumberRange = { from, to, unit }
  return Schema.Number.annotations({ message }).pipe(
    Schema.filter((n) => Number.isInteger(n) && n >= from && n <= to, {
      message,
      [WholeNumberRangeId]: range
    })
  )
}

/**
 * The first annotation `pick` finds in a setting's schema, looking through its
 * refinements, transformations, unions (a setting that may be left out) and an
 * array's element.
 */
const findIn = <A>(
  ast: AST.AST,
  pick: (ast: AST.AST) => A | undefined,
  depth = 0
): A | undefined => {
  if (depth > 8) return undefined
  const own = pick(ast)
  if (own !== undefined) return own
  const inner = (next: AST.AST) => findIn(next, pick, depth + 1)
  switch (ast._tag) {
    case "Refinement":
      return inner(ast.from)
    case "Transformation":
      return inner(ast.to) ?? inner(ast.from)
    case "Union":
      for (const member of ast.types) {
        const found = inner(member)
        if (found !== undefined) return found
      }
      return undefined
    case "TupleType":
      for (const element of [
        ...ast.elements.map((e: AST.OptionalType) => e.type),
        ...ast.rest.map((r: AST.Type) => r.type)
      ]) {
        const found = inner(element)
        if (found !== undefined) return found
      }
      return undefined
    default:
      return undefined
  }
}

/** What `pick` finds in a settings struct's field (see `findIn`), or undefined. */
export const settingAnnotation = <A>(
  fields: Schema.Struct.Fields,
  key: string,
  pick: (ast: AST.AST) => A | undefined
): A | undefined => {
  const field = fields[key]
  const ast: AST.AST | undefined =
    field === undefined
      ? undefined
      : Schema.isPropertySignature(field)
        ? field.ast._tag === "PropertySignatureTransformation"
          ? field.ast.from.type
          : field.ast.type
        : field.ast
  return ast === undefined ? undefined : findIn(ast, pick)
}

/**
 * The range of a settings struct's whole-number field (its element's, for an
 * array of them): `wholeNumberRangeOf(PaymentsSettings.fields, "maxLongPollMs")`
 * is `{ from: 0, to: 120000, unit: "milliseconds" }`. Throws on a field that
 * has none: a program asking for one relies on it.
 */
export const wholeNumberRangeOf = (fields: Schema.Struct.Fields, key: string): WholeNumberRange => {
  const found = settingAnnotation(
    fields,
    key,
    (ast) => ast.annotations[WholeNumberRangeId] as WholeNumberRange | undefined
  )
  if (found === undefined) throw new Error(`${key} is not a whole-number setting`)
  return found
}
