import { describe, expect, it } from "@effect/vitest"
import { makeLruCache } from "./LruCache.js"

describe("makeLruCache", () => {
  it("keeps at most its capacity, evicting the least recently used", () => {
    const evicted: Array<string> = []
    const cache = makeLruCache<string, number>(2, (key) => evicted.push(key))
    cache.set("a", 1)
    cache.set("b", 2)
    expect(cache.get("a")).toBe(1) // a is now newer than b
    cache.set("c", 3)
    expect(evicted).toEqual(["b"])
    expect(cache.keys()).toEqual(["a", "c"])
    expect(cache.get("b")).toBeUndefined()
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i)
    expect(cache.size()).toBe(2)
    expect(evicted.length).toBe(1 + 1000)
  })

  it("replacing a key does not evict", () => {
    const evicted: Array<string> = []
    const cache = makeLruCache<string, number>(1, (key) => evicted.push(key))
    cache.set("a", 1)
    cache.set("a", 2)
    expect(evicted).toEqual([])
    expect(cache.get("a")).toBe(2)
  })

  it("refuses a capacity below 1", () => {
    expect(() => makeLruCache(0)).toThrow(RangeError)
  })
})
