/**
 * The events route handlers: reads over the outbox (EventStore), scoped to
 * the calling partner. Another partner's event id answers 404, as an unknown
 * one does: no existence oracle.
 */
import { Effect, Option } from "effect"
import { ApiErrors } from "../http/ErrorResponses.js"
import { json } from "../http/Exchange.js"
import { cursorParam, timestampParam } from "../http/QueryParams.js"
import { RequestError } from "../http/RequestError.js"
import { implement } from "../http/Route.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import type { ApiVersion } from "../shared/ApiVersion.js"
import { cursorCodec, keysetPage } from "../shared/Cursor.js"
import { EventsApi, type EventView } from "./Api.js"
import {
  EVENT_TYPES,
  EventId,
  EventStore,
  type PayEvent,
  type PayEventType,
  PING
} from "./Event.js"

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
): Effect.Effect<ReadonlyArray<PayEventType> | undefined, RequestError> => {
  if (value === undefined) return Effect.succeed(undefined)
  const known: ReadonlyArray<string> = [...EVENT_TYPES, PING]
  const types = value.split(",").map((t) => t.trim())
  const unknown = types.find((t) => !known.includes(t))
  return unknown === undefined
    ? Effect.succeed(types as ReadonlyArray<PayEventType>)
    : Effect.fail(
        invalid(
          "type",
          `${JSON.stringify(unknown)} is not an event type; known: ${known.join(", ")}`
        )
      )
}

export const eventHandlers = Effect.gen(function* () {
  const store = yield* EventStore
  return implement(EventsApi, {
    list: ({ urlParams, version }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const before = yield* cursorParam(cursors, urlParams.cursor)
        const fetched = yield* store.list({
          partnerId: partner.id,
          types: yield* typesOf(urlParams.type),
          paymentId: urlParams.paymentId,
          from: yield* timestampParam("startTs", urlParams.startTs),
          to: yield* timestampParam("endTs", urlParams.endTs),
          before,
          limit: urlParams.limit + 1
        })
        const { rows, nextCursor } = keysetPage(fetched, urlParams.limit, (last) =>
          cursors.encode(last.id)
        )
        return json(200, { data: rows.map((e) => eventView(e, version)), nextCursor })
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
