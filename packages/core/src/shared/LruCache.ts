/**
 * A least-recently-used map of bounded size, for caches whose keys a client
 * can vary (prepared statements keyed by their SQL text or name): past its
 * capacity the entry used longest ago is dropped and handed to `onEvict`, so
 * what it holds (a statement on a connection) is released, not leaked.
 */
export interface LruCache<K, V> {
  /** The value under `key`, now the most recently used; undefined when absent. */
  readonly get: (key: K) => V | undefined
  /** Stores `value` under `key` as the most recently used, evicting the oldest past capacity. */
  readonly set: (key: K, value: V) => void
  readonly size: () => number
  readonly keys: () => ReadonlyArray<K>
}

export const makeLruCache = <K, V>(
  capacity: number,
  onEvict: (key: K, value: V) => void = () => {}
): LruCache<K, V> => {
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(`an LRU cache needs a capacity of at least 1, not ${capacity}`)
  }
  // A Map iterates in insertion order: re-inserting on use keeps the oldest first.
  const entries = new Map<K, V>()
  return {
    get: (key) => {
      const value = entries.get(key)
      if (value !== undefined) {
        entries.delete(key)
        entries.set(key, value)
      }
      return value
    },
    set: (key, value) => {
      entries.delete(key)
      entries.set(key, value)
      while (entries.size > capacity) {
        const [oldestKey, oldestValue] = entries.entries().next().value as [K, V]
        entries.delete(oldestKey)
        onEvict(oldestKey, oldestValue)
      }
    },
    size: () => entries.size,
    keys: () => [...entries.keys()]
  }
}
