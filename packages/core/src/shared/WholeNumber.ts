/**
 * A whole number given as text (a query parameter): one message for every
 * way it can be wrong, naming the rule ("must be a whole number from 1 to
 * 200"), instead of one per check in Effect's own notation.
 */
import { Schema } from "effect"

export const wholeNumberFromString = (min: number, max: number, rule?: string) => {
  const message = () => rule ?? `must be a whole number from ${min} to ${max}`
  return Schema.NumberFromString.annotations({ message }).pipe(
    Schema.int({ message }),
    Schema.between(min, max, { message })
  )
}

/**
 * A setting's whole number (a number, not text) in a range, with one message
 * naming the rule and the unit ("must be a whole number of milliseconds from
 * 100 to 600000").
 */
export const wholeNumber = (from: number, to: number, unit: string) => {
  const message = () => `must be a whole number of ${unit} from ${from} to ${to}`
  return Schema.Number.annotations({ message }).pipe(
    Schema.filter((n) => Number.isInteger(n) && n >= from && n <= to, { message })
  )
}
