/**
 * Effect's metric snapshot in the Prometheus text exposition format (0.0.4):
 * what `/metrics` answers. Written here rather than taken from an exporter:
 * the only one for Effect is OpenTelemetry's Prometheus exporter, which needs
 * the OTel SDK and a server of its own, for a format of a few dozen lines.
 */
import { Option } from "effect"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4"

/** A metric or label name as Prometheus allows it: other characters become "_". */
const sanitizeName = (name: string) => {
  const safe = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[0-9]/.test(safe) ? `_${safe}` : safe
}

const escapeLabelValue = (value: string) =>
  value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

const escapeHelp = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const formatNumber = (value: number | bigint) => {
  if (typeof value === "bigint") return value.toString()
  if (Number.isNaN(value)) return "NaN"
  if (value === Number.POSITIVE_INFINITY) return "+Inf"
  if (value === Number.NEGATIVE_INFINITY) return "-Inf"
  return String(value)
}

type Labels = ReadonlyArray<readonly [string, string]>

const formatLabels = (labels: Labels) =>
  labels.length === 0
    ? ""
    : `{${labels.map(([k, v]) => `${sanitizeName(k)}="${escapeLabelValue(v)}"`).join(",")}}`

const sample = (name: string, labels: Labels, value: number | bigint) =>
  `${name}${formatLabels(labels)} ${formatNumber(value)}`

const typeOf = (state: MetricState.MetricState.Untyped) =>
  MetricState.isCounterState(state) || MetricState.isFrequencyState(state)
    ? "counter"
    : MetricState.isGaugeState(state)
      ? "gauge"
      : MetricState.isHistogramState(state)
        ? "histogram"
        : "summary"

const samplesOf = (
  name: string,
  labels: Labels,
  state: MetricState.MetricState.Untyped
): ReadonlyArray<string> => {
  if (MetricState.isCounterState(state)) return [sample(name, labels, state.count)]
  if (MetricState.isGaugeState(state)) return [sample(name, labels, state.value)]
  if (MetricState.isHistogramState(state)) {
    // Effect's buckets are cumulative already and end with +Inf.
    const buckets = state.buckets.map(([le, count]) =>
      sample(`${name}_bucket`, [...labels, ["le", formatNumber(le)]], count)
    )
    if (!state.buckets.some(([le]) => le === Number.POSITIVE_INFINITY)) {
      buckets.push(sample(`${name}_bucket`, [...labels, ["le", "+Inf"]], state.count))
    }
    return [
      ...buckets,
      sample(`${name}_sum`, labels, state.sum),
      sample(`${name}_count`, labels, state.count)
    ]
  }
  if (MetricState.isFrequencyState(state)) {
    return [...state.occurrences].map(([key, count]) =>
      sample(name, [...labels, ["key", key]], count)
    )
  }
  if (MetricState.isSummaryState(state)) {
    return [
      ...state.quantiles.flatMap(([q, value]) =>
        Option.isSome(value)
          ? [sample(name, [...labels, ["quantile", formatNumber(q)]], value.value)]
          : []
      ),
      sample(`${name}_sum`, labels, state.sum),
      sample(`${name}_count`, labels, state.count)
    ]
  }
  return []
}

/**
 * The snapshot as exposition text: each metric's HELP and TYPE once, then its
 * series (one a label set), metrics and series sorted so scrapes compare.
 */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const byName = new Map<
    string,
    {
      help: string | undefined
      type: string
      series: Array<{ labels: Labels; state: MetricState.MetricState.Untyped }>
    }
  >()
  for (const { metricKey, metricState } of pairs) {
    const name = sanitizeName(metricKey.name)
    let entry = byName.get(name)
    if (entry === undefined) {
      entry = {
        help: Option.getOrUndefined(metricKey.description),
        type: typeOf(metricState),
        series: []
      }
      byName.set(name, entry)
    }
    const labels = [...metricKey.tags]
      .map((tag) => [tag.key, tag.value] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    entry.series.push({ labels, state: metricState })
  }
  const lines: Array<string> = []
  for (const name of [...byName.keys()].sort()) {
    const entry = byName.get(name)!
    if (entry.help !== undefined) lines.push(`# HELP ${name} ${escapeHelp(entry.help)}`)
    lines.push(`# TYPE ${name} ${entry.type}`)
    const series = entry.series
      .map((s) => ({ key: formatLabels(s.labels), ...s }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    for (const s of series) lines.push(...samplesOf(name, s.labels, s.state))
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`
}
