/**
 * A small per-process memory of values that stay good for a while (verified
 * API keys, known wallet apps), so a hot request path need not read the
 * database every time. Bounded: when full it simply starts over.
 */
export interface TtlCache<A> {
  /** The value if it was set less than the TTL before `now`. */
  readonly get: (key: string, now: number) => A | undefined
  readonly set: (key: string, value: A, now: number) => void
  /** Drops the value: the next `get` misses. */
  readonly forget: (key: string) => void
}

export const makeTtlCache = <A>(ttlMs: number, maxEntries: number): TtlCache<A> => {
  const entries = new Map<string, { readonly value: A; readonly until: number }>()
  return {
    get: (key, now) => {
      const entry = entries.get(key)
      return entry !== undefined && entry.until > now ? entry.value : undefined
    },
    set: (key, value, now) => {
      if (entries.size >= maxEntries) entries.clear()
      entries.set(key, { value, until: now + ttlMs })
    },
    forget: (key) => {
      entries.delete(key)
    }
  }
}
