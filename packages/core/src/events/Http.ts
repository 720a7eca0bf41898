/**
 * The events route handlers: reads over the outbox (EventStore), scoped to
 * the calling partner. Another partner's event id answers 404, as an unknown
 * one does: no existence oracle.
 */
import { Effect, Option } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import { json } from "../http/Exchange.js"
import { RequestError } from "../http/RequestError.js"
import { implement } from "../http/Route.js"
import { CurrentPartner } from "../partners/PartnerAuth.js"
import type { ApiVersion } from "../shared/ApiVersion.js"
import { cursorCodec } from "../shared/Cursor.js"
import { parseRfc3339 } from "../shared/Time.js"
import { EventsApi, type EventView } from "./Api.js"
import { EVENT_TYPES, EventId, EventStore, type EventType, type PayEvent } from "./Event.js"

/** An event as the API and webhook deliveries show it, in `apiVersion`. */
export const eventView = (e: PayEvent, apiVersion: ApiVersion): typeof EventView.Type => ({
  id: e.id,
  type: e.type,
  createdAt: e.createdAt.toISOString(),
  apiVersion,
  data: { object: JSON.parse(e.data) }
})

// Inside the opaque cursor: the last event of the page.
const cursors = cursorCodec("e1.", EventId)

const invalid = (field: string, message: string) =>
  RequestError.invalid(ApiErrors.InvalidParams, field, message)

const typesOf = (
  value: string | undefined
): Effect.Effect<ReadonlyArray<EventType> | undefined, RequestError> => {
  if (value === undefined) return Effect.succeed(undefined)
  const types = value.split(",").map((t) => t.trim())
  const unknown = types.find((t) => !(EVENT_TYPES as ReadonlyArray<string>).includes(t))
  return unknown === undefined
    ? Effect.succeed(types as ReadonlyArray<EventType>)
    : Effect.fail(
        invalid(
          "type",
          `${JSON.stringify(unknown)} is not an event type; known: ${EVENT_TYPES.join(", ")}`
        )
      )
}

const timeOf = (field: string, value: string | undefined) => {
  if (value === undefined) return Effect.succeed(undefined)
  const date = parseRfc3339(value)
  return date
    ? Effect.succeed(date)
    : Effect.fail(invalid(field, "must be an RFC 3339 timestamp like 2026-01-31T00:00:00Z"))
}

export const eventHandlers = Effect.gen(function* () {
  const store = yield* EventStore
  return implement(EventsApi, {
    list: ({ urlParams, version }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const before = urlParams.cursor === undefined ? undefined : cursors.decode(urlParams.cursor)
        if (urlParams.cursor !== undefined && before === undefined) {
          return yield* invalid("cursor", "is not a cursor from this list")
        }
        const rows = yield* store.list({
          partnerId: partner.id,
          types: yield* typesOf(urlParams.type),
          paymentId: urlParams.paymentId,
          from: yield* timeOf("startTs", urlParams.startTs),
          to: yield* timeOf("endTs", urlParams.endTs),
          before,
          limit: urlParams.limit + 1
        })
        const page = rows.slice(0, urlParams.limit)
        const last = page.at(-1)
        return json(200, {
          data: page.map((e) => eventView(e, version)),
          nextCursor: rows.length > urlParams.limit && last ? cursors.encode(last.id) : null
        })
      }),

    get: ({ path, version }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const found = yield* store.find(path.id)
        if (Option.isNone(found) || found.value.partnerId !== partner.id) {
          return yield* RequestError.of(ApiErrors.NotFound, `No event ${path.id}`)
        }
        return json(200, eventView(found.value, version))
      })
  })
})
