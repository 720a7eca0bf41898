/**
 * A `PAY_*` variable the server does not read is most likely a misspelt one
 * (`PAY_DATABSE`), which would otherwise be ignored without a word while the
 * default takes its place: the start warns, naming the closest known setting,
 * and goes on.
 */
import { SETTINGS } from "./config.js"

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`. */
export const editDistance = (a: string, b: string): number => {
  const d: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1)
      }
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/** The known setting nearest to `name`, when one is near enough to be what was meant. */
export const closestSetting = (
  name: string,
  known: ReadonlyArray<string> = Object.keys(SETTINGS)
): string | undefined => {
  let best: { name: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(name, candidate)
    if (best === undefined || distance < best.distance) best = { name: candidate, distance }
  }
  // A third of the name's length: PAY_DATABSE is PAY_DATABASE, PAY_FOO is nothing.
  return best !== undefined && best.distance <= Math.max(2, Math.floor(name.length / 3))
    ? best.name
    : undefined
}

/**
 * A warning line for each `PAY_*` variable in `env` that is not a setting.
 * `alsoKnown`: variables the settings name (PAY_CONFIG's `collectorKeyEnv`, `deployerKeyEnv`).
 */
export const unknownSettingWarnings = (
  env: NodeJS.ProcessEnv,
  alsoKnown: ReadonlyArray<string> = []
): ReadonlyArray<string> => {
  const known = Object.keys(SETTINGS)
  const skip = new Set([...known, ...alsoKnown])
  return Object.keys(env)
    .filter((name) => name.startsWith("PAY_") && !skip.has(name))
    .sort()
    .map((name) => {
      const closest = closestSetting(name, known)
      return `warning: ${name} is not a setting of this server; ${
        closest === undefined
          ? "the settings are in docs/configuration.md"
          : `did you mean ${closest}?`
      }`
    })
}

/**
 * The variables PAY_CONFIG's file names for its keys, collecting and deploying
 * (read leniently: the start checks it).
 */
export const keyVariables = (text: string): ReadonlyArray<string> => {
  try {
    const file = JSON.parse(text) as {
      networks?: Array<{ collectorKeyEnv?: unknown; deployerKeyEnv?: unknown }>
    }
    return (Array.isArray(file.networks) ? file.networks : []).flatMap((n) =>
      [n?.collectorKeyEnv, n?.deployerKeyEnv].filter((v): v is string => typeof v === "string")
    )
  } catch {
    return []
  }
}
