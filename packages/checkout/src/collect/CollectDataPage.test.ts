/**
 * Tests for the data-collection page: inputs rendered from the schema, errors beside their
 * fields, escaping of hostile text, the done page's `IC_COMPLETE` signal (its script run against
 * stand-ins for each wallet bridge), and form bodies read back into submitted fields.
 */
import { createHash } from "node:crypto"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "@effect/vitest"
import { type CollectDataSchema, collectDataSchema, collectedDataFromFields } from "@pay/core"
import { Either } from "effect"
import { parseFormBody, valuesFromPrefill } from "./CollectDataForm.js"
import { renderCollectDataPage, SCRIPT_HASH } from "./CollectDataPage.js"

const ACTION = "/v1/gateway/payment/pay_123/collect?accounts=eip155:8453:0xabc"

const HOSTILE = `"><script>alert(1)</script><img src=x onerror=alert(2)>' onfocus='alert(3)`

/** The markup of the field whose input is named `name` (its wrapping div). */
const fieldHtml = (html: string, name: string): string => {
  const match = html.match(
    new RegExp(
      `<div class="field[^"]*">(?:(?!<div class="field).)*name="${name}"(?:(?!<div class="field).)*?</div>`,
      "s"
    )
  )
  if (match === null) throw new Error(`no field ${name}`)
  return match[0]
}

const inputOf = (html: string, name: string): string => {
  const match = html.match(new RegExp(`<input[^>]*name="${name}"[^>]*>`))
  if (match === null) throw new Error(`no input ${name}`)
  return match[0]
}

const attrOf = (tag: string, name: string): string | undefined => {
  const match = tag.match(new RegExp(` ${name}="([^"]*)"`))
  return match?.[1] === undefined ? undefined : decodeEntities(match[1])
}

const decodeEntities = (text: string): string =>
  text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&")

const scriptOf = (html: string): string => {
  const match = html.match(/<script>([\s\S]*?)<\/script>/)
  if (match?.[1] === undefined) throw new Error("no script")
  return match[1]
}

/** What a browser would submit: every named input's value, a checkbox only when checked. */
const submitted = (html: string): string => {
  const params = new URLSearchParams()
  for (const [tag] of html.matchAll(/<input[^>]*>/g)) {
    const name = attrOf(tag, "name")
    if (name === undefined) continue
    if (attrOf(tag, "type") === "checkbox") {
      if (/ checked[ >]/.test(tag)) params.append(name, attrOf(tag, "value") ?? "on")
    } else params.append(name, attrOf(tag, "value") ?? "")
  }
  return params.toString()
}

describe("renderCollectDataPage", () => {
  const html = renderCollectDataPage({ action: ACTION })

  it("is a complete, self-contained document", () => {
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true)
    expect(html.trimEnd().endsWith("</html>")).toBe(true)
    expect(html).toContain('<meta name="viewport"')
    expect(html).not.toMatch(/<(link|img|iframe)\b/)
    expect(html).not.toMatch(/\ssrc=|https?:\/\/(?!json-schema)/)
    expect(html.match(/<script\b/g)).toHaveLength(1)
  })

  it("posts a urlencoded form to the action", () => {
    expect(html).toContain(
      `<form method="post" action="${ACTION}" enctype="application/x-www-form-urlencoded"`
    )
    expect(html).toContain('<button type="submit">')
  })

  it("renders each schema property with the right input", () => {
    for (const [id, property] of Object.entries(collectDataSchema.properties)) {
      const field = fieldHtml(html, id)
      expect(field).toContain(`>${property.title.replaceAll("'", "&#39;")}`)
      expect(field).toContain(property.description.replaceAll("'", "&#39;"))
      expect(field).toContain(`<label for="f-${id}">`)
      expect(attrOf(inputOf(html, id), "id")).toBe(`f-${id}`)
    }
    expect(attrOf(inputOf(html, "dob"), "type")).toBe("date")
    expect(attrOf(inputOf(html, "fullName"), "type")).toBe("text")
    const tos = inputOf(html, "tosConfirmed")
    expect(attrOf(tos, "type")).toBe("checkbox")
    expect(attrOf(tos, "value")).toBe("true")
    for (const id of ["pobCountry", "porCountry"]) {
      const input = inputOf(html, id)
      expect(attrOf(input, "type")).toBe("text")
      expect(attrOf(input, "pattern")).toBe("^[A-Z]{2}$")
      expect(input).toContain("data-uppercase")
    }
    for (const id of ["pobAddress", "porAddress"]) {
      expect(attrOf(inputOf(html, id), "maxlength")).toBe("200")
    }
    expect(attrOf(inputOf(html, "fullName"), "minlength")).toBe("1")
  })

  it("marks the schema's required fields; the place pairs are one of two, in fieldsets", () => {
    for (const id of ["fullName", "dob", "tosConfirmed"]) {
      expect(inputOf(html, id)).toMatch(/ required[ >]/)
      expect(fieldHtml(html, id)).toContain("(required)")
    }
    for (const id of ["pobCountry", "pobAddress", "porCountry", "porAddress"]) {
      expect(inputOf(html, id)).not.toMatch(/ required[ >]/)
    }
    expect(html).toContain("<legend>Place of Birth</legend>")
    expect(html).toContain("<legend>Place of Residence</legend>")
    expect(html).toContain(
      "Fill in at least one of these in full: Place of Birth or Place of Residence."
    )
    // The form's order is the schema's.
    const order = [...html.matchAll(/<input[^>]* name="([^"]+)"/g)].map((m) => m[1])
    expect(order).toEqual(Object.keys(collectDataSchema.properties))
  })

  it("shows each issue beside its field, and lists them all at the top", () => {
    const page = renderCollectDataPage({
      action: ACTION,
      issues: [
        { field: "collectedData.dob", message: "must be a date as YYYY-MM-DD" },
        { field: "collectedData.tosConfirmed", message: "must be accepted" },
        { field: "collectedData.fields.7.id", message: 'unknown field "nick"' }
      ]
    })
    const dob = fieldHtml(page, "dob")
    expect(dob).toContain('<p class="error" id="f-dob-error">Must be a date as YYYY-MM-DD</p>')
    expect(attrOf(inputOf(page, "dob"), "aria-invalid")).toBe("true")
    expect(attrOf(inputOf(page, "dob"), "aria-describedby")).toBe("f-dob-hint f-dob-error")
    const tos = fieldHtml(page, "tosConfirmed")
    expect(tos).toContain("Must be accepted")
    expect(attrOf(inputOf(page, "tosConfirmed"), "aria-invalid")).toBe("true")
    // No other field is marked.
    for (const id of ["fullName", "pobCountry", "pobAddress", "porCountry", "porAddress"]) {
      expect(fieldHtml(page, id)).not.toContain('class="error"')
      expect(inputOf(page, id)).not.toContain("aria-invalid")
    }
    expect(page).toContain('id="error-summary" role="alert"')
    expect(page).toContain("There are 3 problems to fix")
    expect(page).toContain('<a href="#f-dob">Date of Birth: must be a date as YYYY-MM-DD</a>')
    expect(page).toContain("<li>Unknown field &quot;nick&quot;</li>")
    expect(html).not.toContain('id="error-summary"')
  })

  it("shows the place message beside the field it names", () => {
    const page = renderCollectDataPage({
      action: ACTION,
      issues: [
        {
          field: "collectedData.pobCountry",
          message:
            "place of birth (country and address) or place of residence (country and address) is required"
        }
      ]
    })
    expect(fieldHtml(page, "pobCountry")).toContain(
      "Place of birth (country and address) or place of residence (country and address) is required"
    )
    expect(page).toContain("There is a problem to fix")
  })

  it("matches issues under another prefix, or none", () => {
    const issue = { field: "dob", message: "is required" }
    expect(
      fieldHtml(renderCollectDataPage({ action: ACTION, issues: [issue], issuePrefix: "" }), "dob")
    ).toContain("Is required")
    const page = renderCollectDataPage({ action: ACTION, issues: [issue] })
    expect(fieldHtml(page, "dob")).not.toContain("Is required")
    expect(page).toContain("<li>Is required</li>")
  })

  it("keeps the values on re-render, and a browser resubmits them unchanged", () => {
    const values = {
      fullName: "Zoë O'Brien & Co",
      dob: "1990-01-01",
      pobCountry: "IE",
      pobAddress: 'Cork, 100% "rebel" county; a=b+c',
      porCountry: "",
      porAddress: "",
      tosConfirmed: "true"
    }
    const page = renderCollectDataPage({ action: ACTION, values })
    expect(attrOf(inputOf(page, "fullName"), "value")).toBe(values.fullName)
    expect(inputOf(page, "tosConfirmed")).toMatch(/ checked[ >]/)
    const fields = parseFormBody(submitted(page))
    expect(Object.fromEntries(fields.map((f) => [f.id, f.value]))).toEqual(values)
    expect(Either.isRight(collectedDataFromFields(fields))).toBe(true)
    // Unticked: the box is not sent, and reads as not accepted.
    const unticked = renderCollectDataPage({
      action: ACTION,
      values: { ...values, tosConfirmed: "false" }
    })
    expect(inputOf(unticked, "tosConfirmed")).not.toMatch(/ checked[ >]/)
    expect(parseFormBody(submitted(unticked))).toContainEqual({
      id: "tosConfirmed",
      value: "false"
    })
  })

  it("escapes hostile values, issues, titles, actions and schema text", () => {
    const schema: CollectDataSchema = {
      ...collectDataSchema,
      properties: {
        ...collectDataSchema.properties,
        fullName: { type: "string", title: HOSTILE, description: HOSTILE, minLength: 1 }
      }
    }
    const page = renderCollectDataPage({
      action: `${ACTION}&x="><script>alert(4)</script>`,
      schema,
      title: HOSTILE,
      intro: HOSTILE,
      values: { fullName: HOSTILE, pobAddress: HOSTILE, dob: HOSTILE, [HOSTILE]: HOSTILE },
      issues: [
        { field: "collectedData.fullName", message: HOSTILE },
        { field: HOSTILE, message: HOSTILE }
      ]
    })
    // Only the page's own script and no markup from the hostile text.
    expect(page.match(/<script\b/g)).toHaveLength(1)
    expect(page).not.toContain("<img")
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(attrOf(inputOf(page, "fullName"), "value")).toBe(HOSTILE)
    expect(attrOf(inputOf(page, "pobAddress"), "value")).toBe(HOSTILE)
    // Every tag is one the page writes, with well-formed attributes and no event handler.
    const markup = page.replace(/<script>[\s\S]*?<\/script>/, "")
    const tags = [...markup.matchAll(/<[a-z][^>]*>/g)].map(([tag]) => tag)
    expect(tags.length).toBeGreaterThan(30)
    for (const tag of tags) {
      expect(tag).toMatch(/^<[a-z0-9]+( [a-z-]+(="[^"<>]*")?)*>$/)
      const names = [...tag.matchAll(/ ([a-z-]+)(?:="[^"]*")?/g)].map(([, name]) => name)
      expect(names.filter((name) => name?.startsWith("on"))).toEqual([])
    }
  })

  it("follows a wallet's theme when given", () => {
    expect(renderCollectDataPage({ action: ACTION, theme: "dark" })).toContain(
      '<html lang="en" data-theme="dark">'
    )
  })

  it("allows only its own script and form target in its Content-Security-Policy", () => {
    const script = scriptOf(html)
    const hash = createHash("sha256").update(script, "utf8").digest("base64")
    expect(SCRIPT_HASH).toBe(`'sha256-${hash}'`)
    const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/)?.[1]
    expect(decodeEntities(csp ?? "")).toBe(
      `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; img-src data:; base-uri 'none'; form-action 'self'`
    )
    const absolute = renderCollectDataPage({ action: "https://pay.example:8443/collect?x=1" })
    expect(decodeEntities(absolute)).toContain("form-action 'self' https://pay.example:8443\"")
  })
})

describe("the done page", () => {
  const done = renderCollectDataPage({ action: ACTION, done: true, values: { fullName: "Ada" } })

  it("thanks the buyer, has no form, and signals IC_COMPLETE", () => {
    expect(done).toContain('<body data-state="done">')
    expect(done).toContain("Thank you")
    expect(done).not.toContain("<form")
    expect(done).not.toContain("Ada")
    expect(scriptOf(done)).toContain("IC_COMPLETE")
  })

  interface Run {
    readonly window: Record<string, unknown>
    readonly tick: () => void
    readonly pending: () => number
  }

  // Runs the page's script in a fresh context standing in for a web view's window.
  const run = (page: string, bridges: Record<string, unknown>): Run => {
    const timers: Array<() => void> = []
    const window: Record<string, unknown> = {
      ...bridges,
      document: {
        querySelectorAll: () => [],
        getElementById: () => null,
        body: { getAttribute: () => (page.includes('data-state="done"') ? "done" : "form") }
      },
      setTimeout: (f: () => void) => timers.push(f)
    }
    window.window = window
    window.parent ??= window
    window.opener ??= null
    runInNewContext(scriptOf(page), window)
    return {
      window,
      tick: () => timers.shift()?.(),
      pending: () => timers.length
    }
  }

  const recorder = () => {
    const calls: Array<unknown> = []
    return { calls, post: (message: unknown) => calls.push(JSON.parse(JSON.stringify(message))) }
  }

  const COMPLETE = { type: "IC_COMPLETE", success: true }
  const COMPLETE_JSON = JSON.stringify(COMPLETE)

  it("posts JSON to React Native's web view", () => {
    const rn = recorder()
    run(done, { ReactNativeWebView: { postMessage: (m: unknown) => rn.post(m) } })
    expect(rn.calls).toEqual([COMPLETE_JSON])
  })

  it("posts the object to an iOS message handler", () => {
    for (const name of ["payDataCollectionComplete", "iOSWallet"]) {
      const ios = recorder()
      run(done, { webkit: { messageHandlers: { [name]: { postMessage: ios.post } } } })
      expect(ios.calls).toEqual([COMPLETE])
    }
  })

  it("calls Android and Flutter bridges with JSON", () => {
    const android = recorder()
    run(done, { AndroidWallet: { onDataCollectionComplete: android.post } })
    expect(android.calls).toEqual([COMPLETE_JSON])
    for (const name of ["payDataCollectionComplete", "FlutterCollectDataBridge"]) {
      const bridge = recorder()
      run(done, { [name]: { postMessage: bridge.post } })
      expect(bridge.calls).toEqual([COMPLETE_JSON])
    }
  })

  it("uses one bridge only when a wallet aliases one to another", () => {
    const android = recorder()
    // A wallet's shim: the Android interface, also exposed as an iOS-style handler.
    run(done, {
      payDataCollectionComplete: { postMessage: android.post },
      webkit: {
        messageHandlers: {
          payDataCollectionComplete: {
            postMessage: (m: unknown) => android.post(JSON.stringify(m))
          }
        }
      }
    })
    expect(android.calls).toHaveLength(1)
  })

  it("falls through a bridge that throws", () => {
    const android = recorder()
    run(done, {
      ReactNativeWebView: {
        postMessage: () => {
          throw new Error("gone")
        }
      },
      AndroidWallet: { onDataCollectionComplete: android.post }
    })
    expect(android.calls).toEqual([COMPLETE_JSON])
  })

  it("waits for a bridge injected after load, and stops after a while without one", () => {
    const rn = recorder()
    const late = run(done, {})
    expect(late.pending()).toBe(1)
    late.tick()
    late.window.ReactNativeWebView = { postMessage: rn.post }
    late.tick()
    expect(rn.calls).toEqual([COMPLETE_JSON])
    expect(late.pending()).toBe(0)
    const none = run(done, {})
    let ticks = 0
    while (none.pending() > 0 && ticks < 100) {
      none.tick()
      ticks++
    }
    expect(ticks).toBe(19)
  })

  it("posts to the parent of an iframe and to an opener", () => {
    const parent = recorder()
    const opener = recorder()
    const targets: Array<unknown> = []
    run(done, {
      parent: {
        postMessage: (m: unknown, target: unknown) => {
          parent.post(m)
          targets.push(target)
        }
      },
      opener: { postMessage: opener.post }
    })
    expect(parent.calls).toEqual([COMPLETE])
    expect(opener.calls).toEqual([COMPLETE])
    expect(targets).toEqual(["*"])
  })

  it("signals nothing from the form page", () => {
    const rn = recorder()
    const parent = recorder()
    const form = run(renderCollectDataPage({ action: ACTION }), {
      ReactNativeWebView: { postMessage: rn.post },
      parent: { postMessage: parent.post }
    })
    expect(rn.calls).toEqual([])
    expect(parent.calls).toEqual([])
    expect(form.pending()).toBe(0)
  })
})

describe("a problem page", () => {
  const page = renderCollectDataPage({
    action: "",
    problem: "this payment has expired.",
    title: "This link cannot be used"
  })

  it("says only what is wrong: no form, no inputs, no request for details", () => {
    expect(page).toContain('<body data-state="problem">')
    expect(page).toContain("<h1>This link cannot be used</h1>")
    expect(page).toMatch(
      /<div class="summary"[^>]*role="alert"[^>]*>\s*<p>This payment has expired\.<\/p>/
    )
    expect(page).not.toContain("<form")
    expect(page).not.toContain("<input")
    expect(page).not.toContain("The merchant needs a few details")
    expect(page).not.toContain("Thank you")
  })

  it("escapes the message, and wins over nothing: a done page stays a done page", () => {
    const hostile = renderCollectDataPage({ action: "", problem: HOSTILE })
    expect(hostile).not.toContain("<script>alert(1)")
    expect(hostile).not.toContain("<img")
    const done = renderCollectDataPage({ action: ACTION, done: true, problem: "ignored" })
    expect(done).toContain('<body data-state="done">')
    expect(done).not.toContain("ignored")
  })
})

describe("parseFormBody", () => {
  it("reads urlencoded fields in order, decoding + and percent escapes", () => {
    const body =
      "fullName=Zo%C3%AB+O%27Brien&dob=1990-01-01&pobAddress=a%3Db%26c%2Bd&tosConfirmed=true"
    expect(parseFormBody(body)).toEqual([
      { id: "fullName", value: "Zoë O'Brien" },
      { id: "dob", value: "1990-01-01" },
      { id: "pobAddress", value: "a=b&c+d" },
      { id: "tosConfirmed", value: "true" }
    ])
  })

  it("round-trips what URLSearchParams encodes", () => {
    const fields = [
      { id: "fullName", value: "  spaces  & symbols = + % 😀 " },
      { id: "porAddress", value: "line\nbreak" },
      { id: "tosConfirmed", value: "true" }
    ]
    const body = new URLSearchParams(fields.map((f) => [f.id, f.value])).toString()
    expect(parseFormBody(body)).toEqual(fields)
  })

  it("reads an unticked checkbox as false, and keeps unknown and repeated names for the check", () => {
    expect(parseFormBody("fullName=Ada&nick=A&dob=1&dob=2")).toEqual([
      { id: "fullName", value: "Ada" },
      { id: "nick", value: "A" },
      { id: "dob", value: "1" },
      { id: "dob", value: "2" },
      { id: "tosConfirmed", value: "false" }
    ])
    expect(parseFormBody("")).toEqual([{ id: "tosConfirmed", value: "false" }])
  })
})

describe("valuesFromPrefill", () => {
  const encode = (value: unknown, url: boolean) => {
    const b64 = Buffer.from(JSON.stringify(value), "utf8").toString(url ? "base64url" : "base64")
    return b64
  }

  it("reads a wallet's base64 or base64url JSON prefill", () => {
    const prefill = { fullName: "Zoë Ünal", dob: "1990-01-15", pobCountry: "US" }
    expect(valuesFromPrefill(encode(prefill, false))).toEqual(prefill)
    expect(valuesFromPrefill(encode(prefill, true))).toEqual(prefill)
  })

  it("never ticks the terms, and drops unknown or non-text entries", () => {
    expect(
      valuesFromPrefill(
        encode({ fullName: "Ada", tosConfirmed: "true", nick: "A", dob: 19900115 }, true)
      )
    ).toEqual({ fullName: "Ada" })
  })

  it("gives nothing for anything malformed", () => {
    for (const bad of [
      null,
      undefined,
      "",
      "%%%",
      encode([1, 2], true),
      encode("x", true),
      "e30".repeat(5000)
    ]) {
      expect(valuesFromPrefill(bad)).toEqual({})
    }
    expect(valuesFromPrefill(Buffer.from([0xff, 0xfe]).toString("base64"))).toEqual({})
  })
})
