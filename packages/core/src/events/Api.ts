/**
 * The events routes of the partner API: a partner's events, newest first,
 * kept at least 30 days. Neither SPEC.md nor the reference has them; they
 * follow the payment list's style (RFC 3339 `startTs`/`endTs`, an opaque
 * cursor).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { failsWith, pathOf, VersionHeaders } from "../http/ApiDocs.js"
import { ApiErrors } from "../http/ErrorResponses.js"
import { PartnerApiKey } from "../identity/PartnerAuth.js"
import { wholeNumberFromString } from "../shared/WholeNumber.js"
import { EVENT_TYPES, EventId, PING } from "./Event.js"

export const EventView = Schema.Struct({
  id: Schema.String.annotations({ examples: ["evt_0Mg3vLwE9kTq2xHbY7pA"] }),
  type: Schema.String.annotations({ description: `One of ${[...EVENT_TYPES, PING].join(", ")}` }),
  createdAt: Schema.String.annotations({ description: "RFC 3339: when the change happened" }),
  apiVersion: Schema.String.annotations({
    description: "The API version `data.object` is rendered in"
  }),
  data: Schema.Struct({
    object: Schema.Unknown.annotations({
      description:
        "A snapshot, taken when the change happened, of what the API returns for the resource: a merchant's profile, a settlement as listed, or `{id, deleted: true}`"
    })
  })
}).annotations({ identifier: "Event" })

/** `limit` of a keyset-paged list: 1 to 100. */
export const PageLimit = wholeNumberFromString(1, 100)

export const PageCursor = Schema.optional(
  Schema.String.annotations({ description: "Opaque: the `nextCursor` of the previous page" })
)

export const ListEventsParams = Schema.Struct({
  type: Schema.optional(Schema.String.annotations({ description: "Comma-separated event types" })),
  paymentId: Schema.optional(Schema.String),
  startTs: Schema.optional(Schema.String.annotations({ description: "RFC 3339, inclusive" })),
  endTs: Schema.optional(Schema.String.annotations({ description: "RFC 3339, exclusive" })),
  cursor: PageCursor,
  limit: Schema.optionalWith(PageLimit, { default: () => 20 })
})

export const ListEventsResponse = Schema.Struct({
  data: Schema.Array(EventView),
  nextCursor: Schema.NullOr(Schema.String)
})

/** An event id in a path that does not decode names no event: 404 not_found. */
export const EventPath = pathOf(
  { id: EventId },
  { error: ApiErrors.NotFound, nouns: { id: "event" } }
)

export const listEvents = HttpApiEndpoint.get("list", "/v1/events")
  .setHeaders(VersionHeaders)
  .setUrlParams(ListEventsParams)
  .addSuccess(ListEventsResponse)
  .annotate(OpenApi.Summary, "List the partner's events, newest first")
  .pipe(failsWith())

export const getEvent = HttpApiEndpoint.get("get", "/v1/events/:id")
  .setHeaders(VersionHeaders)
  .setPath(EventPath)
  .addSuccess(EventView)
  .annotate(OpenApi.Summary, "Fetch one event")
  .pipe(failsWith(ApiErrors.NotFound))

export class EventsApi extends HttpApiGroup.make("events")
  .annotate(OpenApi.Title, "Events")
  .add(listEvents)
  .add(getEvent)
  .middleware(PartnerApiKey) {}
