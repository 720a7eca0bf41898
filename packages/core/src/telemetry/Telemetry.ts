/**
 * Optional OpenTelemetry export (the `telemetry` option): a span per request
 * and the engine's metrics, sent over OTLP/HTTP (JSON) to a collector with
 * @effect/opentelemetry's Otlp exporters, which need only an HttpClient (the
 * runtime's `fetch`), not the OpenTelemetry SDK. Off unless configured.
 *
 * The request spans are made once a request is answered, from what its
 * observer is told (method, route template, status, duration): nothing is
 * added to the request's own path, and nothing at all when export is off.
 */

import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { FetchHttpClient } from "@effect/platform"
import { Context, Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import { isHttpUrl } from "../http/HttpConfig.js"
import type { RequestObserver } from "../http/RequestOutcome.js"
import { UNMATCHED_ROUTE } from "../metrics/EngineMetrics.js"
import { wholeNumber } from "../shared/WholeNumber.js"

export const TelemetrySettings = Schema.Struct({
  /**
   * The collector's OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`, e.g.
   * `http://127.0.0.1:4318`): traces go to `/v1/traces`, metrics to `/v1/metrics`.
   */
  otlpEndpoint: Schema.String.pipe(
    Schema.filter((s) => isHttpUrl(s) && new URL(s).search === "", {
      message: () =>
        "must be the collector's http:// or https:// OTLP base URL, e.g. http://127.0.0.1:4318"
    })
  ),
  /** The `service.name` of everything exported (`OTEL_SERVICE_NAME`). Default `pay-engine`. */
  serviceName: Schema.optional(
    Schema.String.pipe(
      Schema.filter((s) => s.trim() !== "" && s.length <= 256, {
        message: () => "must be a name of 1 to 256 characters"
      })
    )
  ),
  /** Headers sent with every export, e.g. a collector's key (`OTEL_EXPORTER_OTLP_HEADERS`). */
  headers: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
      message: () => "must be an object of header names to string values"
    })
  ),
  /** How often spans and metrics are sent. Default 5 s (traces) and 10 s (metrics). */
  exportIntervalMs: Schema.optional(wholeNumber(100, 600_000, "milliseconds"))
})
export type TelemetrySettings = typeof TelemetrySettings.Type

export const DEFAULT_SERVICE_NAME = "pay-engine"

const exporterParts = Layer.merge(FetchHttpClient.layer, OtlpSerialization.layerJson)

/**
 * `OTEL_EXPORTER_OTLP_HEADERS`: `key1=value1,key2=value2`, values URL-encoded
 * (the OpenTelemetry specification's form). Undefined for an entry without "=".
 */
export const parseOtlpHeaders = (
  text: string
): Readonly<Record<string, string>> | { readonly invalid: string } => {
  const headers: Record<string, string> = {}
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue
    const mark = entry.indexOf("=")
    if (mark <= 0) return { invalid: entry.trim() }
    try {
      headers[entry.slice(0, mark).trim()] = decodeURIComponent(entry.slice(mark + 1).trim())
    } catch {
      return { invalid: entry.trim() }
    }
  }
  return headers
}

const nanosNow = () => BigInt(Date.now()) * 1_000_000n

/**
 * Starts the exporters in the current scope (closing it sends what is left)
 * and returns the observer that turns each answered request into a span.
 */
export const startTelemetry = (settings: TelemetrySettings) =>
  Effect.gen(function* () {
    const base = settings.otlpEndpoint.replace(/\/+$/, "")
    const resource = { serviceName: settings.serviceName ?? DEFAULT_SERVICE_NAME }
    const headers = settings.headers ?? {}
    const interval =
      settings.exportIntervalMs === undefined
        ? undefined
        : Duration.millis(settings.exportIntervalMs)
    const parts = yield* Layer.build(exporterParts)
    const tracer = yield* OtlpTracer.make({
      url: `${base}/v1/traces`,
      resource,
      headers,
      ...(interval === undefined ? {} : { exportInterval: interval }),
      shutdownTimeout: Duration.seconds(2)
    }).pipe(Effect.provide(parts))
    yield* OtlpMetrics.make({
      url: `${base}/v1/metrics`,
      resource,
      headers,
      ...(interval === undefined ? {} : { exportInterval: interval }),
      shutdownTimeout: Duration.seconds(2)
    }).pipe(Effect.provide(parts))

    const requestSpans: RequestObserver = (outcome) => {
      const end = nanosNow()
      const start = end - BigInt(Math.round(outcome.durationMs * 1_000_000))
      const route = outcome.route ?? UNMATCHED_ROUTE
      const span = tracer.span(
        `${outcome.method} ${route}`,
        Option.none(),
        Context.empty(),
        [],
        start,
        "server"
      )
      span.attribute("http.request.method", outcome.method)
      span.attribute("http.route", route)
      span.attribute("http.response.status_code", outcome.status)
      span.attribute("pay.request_id", outcome.requestId)
      if (outcome.caller?.partnerId !== undefined) {
        span.attribute("pay.partner_id", outcome.caller.partnerId)
      }
      // A server error is the span's error (OpenTelemetry's HTTP rule); a 4xx is the client's.
      span.end(end, outcome.status >= 500 ? Exit.fail(`HTTP ${outcome.status}`) : Exit.void)
    }
    return { requestSpans }
  })
