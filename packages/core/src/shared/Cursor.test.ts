import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { cursorCodec } from "./Cursor.js"

const codec = cursorCodec(
  "t1.",
  Schema.parseJson(Schema.Struct({ k: Schema.String.pipe(Schema.pattern(/^[0-9]+$/)) }))
)

describe("page cursors", () => {
  it("read back what they wrote, behind their prefix", () => {
    const cursor = codec.encode({ k: "42" })
    expect(cursor.startsWith("t1.")).toBe(true)
    expect(codec.decode(cursor)).toEqual({ k: "42" })
  })

  it("are none when tampered with, foreign, or not base64url", () => {
    const cursor = codec.encode({ k: "42" })
    expect(codec.decode(`x1.${cursor.slice(3)}`)).toBeUndefined()
    expect(codec.decode(`t1.${Buffer.from('{"k":"4a"}').toString("base64url")}`)).toBeUndefined()
    expect(codec.decode("t1.!!!")).toBeUndefined()
    expect(codec.decode("")).toBeUndefined()
  })
})
