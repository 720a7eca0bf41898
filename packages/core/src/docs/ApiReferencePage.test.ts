/**
 * Tests for the offline API reference page: structure, escaping, schema outlines and links, and
 * compatibility with the documents `OpenApi.fromApi` produces.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  type OpenApiDocument,
  renderApiReferencePage,
  renderInline,
  renderMarkdown
} from "./ApiReferencePage.js"

const errorSchema = (name: string) => ({
  $ref: `#/components/schemas/${name}`
})

const document: OpenApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "Payment engine",
    version: "1.2.0",
    description:
      "Accepts **stablecoin** payments.\n\n- Amounts are in `minor units`\n- Times are UTC\n\nBeware <script>alert(1)</script> & friends."
  },
  tags: [
    { name: "payments", description: "Create and inspect payments." },
    { name: "merchants", description: "Merchant accounts." }
  ],
  paths: {
    "/payments": {
      get: {
        operationId: "listPayments",
        tags: ["payments"],
        summary: "List payments",
        description: "Newest first. Filter with `status`.",
        security: [{ apiKey: [] }],
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            description: "Page size",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 20 }
          },
          {
            name: "status",
            in: "query",
            schema: { type: "string", enum: ["pending", "paid", "expired"] }
          },
          { name: "cursor", in: "query", schema: { type: "string", pattern: "^[A-Za-z0-9]+$" } }
        ],
        responses: {
          "200": {
            description: "A page of payments",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["items"],
                  properties: {
                    items: { type: "array", items: { $ref: "#/components/schemas/Payment" } },
                    next: { anyOf: [{ type: "string" }, { type: "null" }] }
                  }
                }
              }
            }
          },
          "401": {
            description: "Missing or invalid API key",
            content: { "application/json": { schema: errorSchema("Unauthorized") } }
          }
        }
      },
      post: {
        operationId: "createPayment",
        tags: ["payments"],
        summary: "Create a payment",
        security: [{ apiKey: [] }],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: { $ref: "#/components/schemas/CreatePayment" } }
          }
        },
        responses: {
          "201": {
            description: "Created",
            content: { "application/json": { schema: errorSchema("Payment") } }
          },
          "400": {
            description: "Invalid body",
            content: {
              "application/json": {
                schema: { anyOf: [errorSchema("ValidationError"), errorSchema("Unauthorized")] }
              }
            }
          },
          "500": { description: "Unexpected failure" }
        }
      }
    },
    "/merchants/{merchantId}": {
      get: {
        operationId: "getMerchant",
        tags: ["merchants"],
        summary: "Get a merchant",
        parameters: [
          { name: "merchantId", in: "path", required: true, schema: { type: "string" } }
        ],
        responses: { "200": { description: "The merchant" } }
      }
    }
  },
  components: {
    schemas: {
      CreatePayment: {
        type: "object",
        description: "What a merchant sends to open a payment.",
        required: ["amount", "currency"],
        properties: {
          amount: {
            type: "string",
            pattern: "^[0-9]+$",
            minLength: 1,
            maxLength: 78,
            description: "Amount in minor units"
          },
          currency: { type: "string", enum: ["USDC", "EURC"] },
          expiresAt: { type: "string", format: "date-time" },
          customer: { anyOf: [{ $ref: "#/components/schemas/Customer" }, { type: "null" }] },
          metadata: { type: "object", properties: {}, additionalProperties: { type: "string" } },
          lines: {
            type: "array",
            minItems: 1,
            items: {
              type: "object",
              required: ["sku"],
              properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } }
            }
          }
        }
      },
      Customer: {
        type: "object",
        required: ["email"],
        properties: { email: { type: "string", format: "email" } }
      },
      Payment: {
        type: "object",
        required: ["id", "status"],
        properties: {
          id: { type: "string", format: "uuid" },
          status: { type: "string", enum: ["pending", "paid", "expired"] }
        }
      },
      ValidationError: {
        type: "object",
        required: ["_tag", "message"],
        properties: {
          _tag: { type: "string", enum: ["ValidationError"] },
          message: { type: "string", description: "Why it failed: <b>bad</b>" }
        }
      },
      Unauthorized: { type: "object", required: [], properties: {} }
    },
    securitySchemes: {
      apiKey: { type: "apiKey", name: "X-Api-Key", in: "header", description: "Merchant key" }
    }
  }
}

const countOf = (haystack: string, needle: string): number => haystack.split(needle).length - 1

describe("renderApiReferencePage", () => {
  const html = renderApiReferencePage(document)

  it("is a complete HTML document", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true)
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<meta charset="utf-8">')
    expect(html).toContain("<title>Payment engine</title>")
    expect(html).toContain("<head>")
    expect(html).toContain("<body>")
    expect(html.trimEnd().endsWith("</html>")).toBe(true)
    expect(countOf(html, "<main")).toBe(1)
    expect(countOf(html, "</main>")).toBe(1)
  })

  it("is self-contained: no scripts, stylesheets, fonts or other external resources", () => {
    expect(html).not.toMatch(/<script/i)
    expect(html).not.toMatch(/<link/i)
    expect(html).not.toMatch(/<(img|iframe|object|embed)\b/i)
    expect(html).not.toMatch(/\bsrc\s*=/i)
    expect(html).not.toMatch(/@import|url\(/i)
    expect(html).not.toMatch(/(href|src)\s*=\s*["']?(https?:)?\/\//i)
    expect(html).toContain("<style>")
  })

  it("renders the title, version and Markdown description", () => {
    expect(html).toContain("Payment engine")
    expect(html).toContain("v1.2.0")
    expect(html).toContain("<strong>stablecoin</strong>")
    expect(html).toContain("<li>Amounts are in <code>minor units</code></li>")
  })

  it("escapes every string from the document", () => {
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends")
    expect(html).not.toContain("<script>alert(1)</script>")
    expect(html).toContain("Why it failed: &lt;b&gt;bad&lt;/b&gt;")
    expect(html).not.toContain("<b>bad</b>")
  })

  it("lets the caller override the title", () => {
    const custom = renderApiReferencePage(document, { title: "Engine <API>" })
    expect(custom).toContain("<title>Engine &lt;API&gt;</title>")
    expect(custom).not.toContain("Engine <API>")
  })

  it("lists every operation with method and path, in document order", () => {
    expect(html).toContain('id="op-listPayments"')
    expect(html).toContain('id="op-createPayment"')
    expect(html).toContain('id="op-getMerchant"')
    const list = html.indexOf('id="op-listPayments"')
    const create = html.indexOf('id="op-createPayment"')
    const merchant = html.indexOf('id="op-getMerchant"')
    expect(list).toBeLessThan(create)
    expect(create).toBeLessThan(merchant)
    expect(html).toContain('<span class="method m-get">GET</span>')
    expect(html).toContain('<span class="method m-post">POST</span>')
    expect(html).toContain('/merchants/<span class="pp">{merchantId}</span>')
    expect(html).toContain("List payments")
    expect(html).toContain("Newest first. Filter with <code>status</code>.")
  })

  it("has a table of contents grouped by tag", () => {
    const nav = html.slice(html.indexOf("<nav"), html.indexOf("</nav>"))
    expect(nav).toContain('<a href="#tag-payments">payments</a>')
    expect(nav).toContain('<a href="#tag-merchants">merchants</a>')
    expect(nav.indexOf("#tag-payments")).toBeLessThan(nav.indexOf("#op-listPayments"))
    expect(nav.indexOf("#op-createPayment")).toBeLessThan(nav.indexOf("#tag-merchants"))
    expect(nav.indexOf("#tag-merchants")).toBeLessThan(nav.indexOf("#op-getMerchant"))
    expect(nav).toContain('href="#schema-CreatePayment"')
    expect(html).toContain('id="tag-payments"')
    expect(html).toContain("Create and inspect payments.")
  })

  it("renders parameters in a table", () => {
    for (const name of ["limit", "status", "cursor", "merchantId"]) {
      expect(html).toContain(`<td><code>${name}</code></td>`)
    }
    expect(html).toContain("<td>query</td>")
    expect(html).toContain("<td>path</td>")
    expect(html).toContain("Page size")
    expect(html).toContain("≥ 1")
    expect(html).toContain("≤ 100")
    expect(html).toContain('default: <span class="lit">20</span>')
    expect(html).toContain('<span class="lit">&quot;expired&quot;</span>')
    expect(html).toContain("pattern: <code>^[A-Za-z0-9]+$</code>")
  })

  it("shows which headers an operation needs", () => {
    expect(html).toContain("header <code>X-Api-Key</code>")
    expect(html).toContain("None: no authentication required.")
  })

  it("links $refs to a Schemas section that lists every component schema", () => {
    expect(html).toContain('<a class="ref" href="#schema-CreatePayment">CreatePayment</a>')
    expect(html).toContain('<a class="ref" href="#schema-Payment">Payment</a>')
    expect(html).toContain('id="schemas"')
    for (const name of [
      "CreatePayment",
      "Customer",
      "Payment",
      "ValidationError",
      "Unauthorized"
    ]) {
      expect(html).toContain(`id="schema-${name}"`)
    }
    // Every link into the Schemas section points at an existing anchor.
    const ids = new Set([...html.matchAll(/id="([^"]+)"/g)].map((m) => m[1]))
    for (const [, target] of html.matchAll(/href="#([^"]+)"/g)) {
      expect(ids.has(target)).toBe(true)
    }
  })

  it("renders responses with status, description and schema", () => {
    expect(html).toContain('<span class="status s-2xx">201</span>')
    expect(html).toContain('<span class="status s-4xx">400</span>')
    expect(html).toContain('<span class="status s-5xx">500</span>')
    expect(html).toContain("Missing or invalid API key")
    expect(html).toContain(
      '<a class="ref" href="#schema-ValidationError">ValidationError</a> <span class="op">|</span> <a class="ref" href="#schema-Unauthorized">Unauthorized</a>'
    )
    expect(html).toContain("Request body")
  })

  it("outlines schemas with required markers, constraints, nullability and nesting", () => {
    const section = html.slice(html.indexOf('id="schema-CreatePayment"'))
    expect(section).toContain(
      '<span class="pname">amount</span><span class="req" title="required">*</span>'
    )
    expect(section).toContain('<span class="pname">expiresAt</span><span class="opt"')
    expect(section).toContain("format: date-time")
    expect(section).toContain("minLength: 1")
    expect(section).toContain("maxLength: 78")
    expect(section).toContain("minItems: 1")
    expect(section).toContain(
      '<a class="ref" href="#schema-Customer">Customer</a> <span class="op">|</span> <span class="t">null</span>'
    )
    expect(section).toContain('[key: <span class="t">string</span>]')
    expect(section).toContain('<span class="t">array</span>&lt;<span class="brace">{</span>')
    expect(section).toContain('<span class="pname">quantity</span>')
    expect(section).toContain("What a merchant sends to open a payment.")
  })

  it("stays fast for a document with dozens of operations", () => {
    const paths: Record<string, NonNullable<OpenApiDocument["paths"]>[string]> = {}
    for (let i = 0; i < 40; i++) {
      paths[`/resource${i}/{id}`] = document.paths?.["/payments"] ?? {}
    }
    const big: OpenApiDocument = { ...document, paths }
    const started = performance.now()
    const page = renderApiReferencePage(big)
    const elapsed = performance.now() - started
    expect(countOf(page, '<section class="operation')).toBe(80)
    expect(elapsed).toBeLessThan(500)
  })
})

describe("Markdown subset", () => {
  it("escapes HTML and only links safe URLs", () => {
    expect(renderInline("[docs](https://example.com) and [x](javascript:void)")).toBe(
      '<a href="https://example.com" rel="noopener noreferrer">docs</a> and x'
    )
    expect(renderInline("a <img onerror=x> **b `c`**")).toBe(
      "a &lt;img onerror=x&gt; <strong>b <code>c</code></strong>"
    )
  })

  it("renders paragraphs, lists and fenced code", () => {
    const html = renderMarkdown("One\ntwo\n\n1. first\n2. second\n\n```\n<x>\n```")
    expect(html).toBe(
      "<p>One two</p>\n<ol><li>first</li><li>second</li></ol>\n<pre><code>&lt;x&gt;</code></pre>"
    )
  })
})

class Item extends Schema.Class<Item>("Item")({
  id: Schema.UUID,
  label: Schema.NonEmptyString.pipe(Schema.maxLength(40)),
  note: Schema.NullOr(Schema.String),
  kind: Schema.Literal("a", "b")
}) {}

class ItemNotFound extends Schema.TaggedError<ItemNotFound>()(
  "ItemNotFound",
  { id: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

const api = HttpApi.make("items").add(
  HttpApiGroup.make("items")
    .add(
      HttpApiEndpoint.get("listItems", "/items")
        .setUrlParams(Schema.Struct({ limit: Schema.optional(Schema.NumberFromString) }))
        .addSuccess(Schema.Array(Item))
    )
    .add(
      HttpApiEndpoint.post("createItem", "/items")
        .setPayload(Item)
        .addSuccess(Item, { status: 201 })
        .addError(ItemNotFound)
    )
)

describe("with OpenApi.fromApi output", () => {
  it("accepts the generated document and renders its operations and schemas", () => {
    const spec: OpenApiDocument = OpenApi.fromApi(api)
    const html = renderApiReferencePage(spec)
    expect(html).toContain("/items")
    expect(html).toContain('<span class="method m-post">POST</span>')
    expect(html).toContain("<td><code>limit</code></td>")
    expect(html).toContain("a string to be decoded into a number")
    expect(html).toContain('href="#schema-Item"')
    expect(html).toContain('id="schema-Item"')
    expect(html).toContain('id="schema-ItemNotFound"')
    expect(html).toContain('<span class="status s-4xx">404</span>')
    expect(html).toContain('<span class="t">null</span>')
    expect(html).toContain('<span class="lit">&quot;a&quot;</span>')
  })
})
