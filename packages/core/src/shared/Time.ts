/**
 * RFC 3339 timestamps at the edge: strict about the form (a date alone or a
 * time without an offset is refused), exact to the millisecond.
 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/

export const parseRfc3339 = (value: string): Date | undefined => {
  if (!RFC3339.test(value)) return undefined
  const ms = Date.parse(value.replace(" ", "T"))
  return Number.isNaN(ms) ? undefined : new Date(ms)
}

export const toUnixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000)
