import { describe, expect, it } from "@effect/vitest"
import { Metric, MetricBoundaries, MetricLabel, MetricPair, MetricState, Option } from "effect"
import * as MetricKey from "effect/MetricKey"
import { renderPrometheus } from "./Prometheus.js"

const counterKey = (name: string, tags: ReadonlyArray<readonly [string, string]>, help?: string) =>
  MetricKey.taggedWithLabels(
    MetricKey.counter(name, help === undefined ? undefined : { description: help }),
    tags.map(([k, v]) => MetricLabel.make(k, v))
  )

describe("renderPrometheus", () => {
  it("writes HELP and TYPE once per metric, then one line per label set, sorted", () => {
    const text = renderPrometheus([
      MetricPair.unsafeMake(
        counterKey("pay_x_total", [["status", "500"]], "Things\nthat happened \\ here"),
        MetricState.counter(2)
      ),
      MetricPair.unsafeMake(
        counterKey("pay_x_total", [["status", "200"]], "Things\nthat happened \\ here"),
        MetricState.counter(7)
      ),
      MetricPair.unsafeMake(
        MetricKey.gauge("pay_a_gauge", { description: "A level" }),
        MetricState.gauge(1.5)
      )
    ])
    expect(text).toBe(
      [
        "# HELP pay_a_gauge A level",
        "# TYPE pay_a_gauge gauge",
        "pay_a_gauge 1.5",
        "# HELP pay_x_total Things\\nthat happened \\\\ here",
        "# TYPE pay_x_total counter",
        'pay_x_total{status="200"} 7',
        'pay_x_total{status="500"} 2',
        ""
      ].join("\n")
    )
  })

  it("escapes backslashes, quotes and newlines in label values, and sanitizes names", () => {
    const text = renderPrometheus([
      MetricPair.unsafeMake(
        counterKey("pay.odd-name", [
          ["route", 'a\\b"c\nd'],
          ["bad-label", "x"]
        ]),
        MetricState.counter(1)
      )
    ])
    expect(text).toBe(
      [
        "# TYPE pay_odd_name counter",
        'pay_odd_name{bad_label="x",route="a\\\\b\\"c\\nd"} 1',
        ""
      ].join("\n")
    )
  })

  it("writes a histogram as cumulative _bucket lines ending at +Inf, then _sum and _count", async () => {
    const histogram = Metric.histogram(
      "pay_test_duration_seconds",
      MetricBoundaries.fromIterable([0.1, 1]),
      "How long"
    ).pipe(Metric.tagged("route", "/v1/x"))
    for (const value of [0.05, 0.5, 0.7, 3]) histogram.unsafeUpdate(value, [])
    const pair = MetricPair.unsafeMake(
      MetricKey.taggedWithLabels(
        MetricKey.histogram(
          "pay_test_duration_seconds",
          MetricBoundaries.fromIterable([0.1, 1]),
          "How long"
        ),
        [MetricLabel.make("route", "/v1/x")]
      ),
      histogram.unsafeValue([])
    )
    expect(renderPrometheus([pair])).toBe(
      [
        "# HELP pay_test_duration_seconds How long",
        "# TYPE pay_test_duration_seconds histogram",
        'pay_test_duration_seconds_bucket{route="/v1/x",le="0.1"} 1',
        'pay_test_duration_seconds_bucket{route="/v1/x",le="1"} 3',
        'pay_test_duration_seconds_bucket{route="/v1/x",le="+Inf"} 4',
        'pay_test_duration_seconds_sum{route="/v1/x"} 4.25',
        'pay_test_duration_seconds_count{route="/v1/x"} 4',
        ""
      ].join("\n")
    )
  })

  it("writes a metric without a description with its TYPE line only, and nothing for none", () => {
    expect(renderPrometheus([])).toBe("")
    const text = renderPrometheus([
      MetricPair.unsafeMake(MetricKey.gauge("pay_g"), MetricState.gauge(Number.NaN))
    ])
    expect(text).toBe("# TYPE pay_g gauge\npay_g NaN\n")
    expect(Option.isNone(MetricKey.gauge("pay_g").description)).toBe(true)
  })
})
