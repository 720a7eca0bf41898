/**
 * Sustained load on one route with autocannon: a warm-up run whose figures are thrown
 * away (JIT, caches, SQLite pages), then the measured run. Any answer other than the
 * expected status fails the scenario, so an error page is never reported as speed.
 */
import autocannon from "autocannon"

export interface LoadSettings {
  readonly connections: number
  readonly warmupSeconds: number
  readonly seconds: number
}

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number }
  readonly requests: number
  readonly seconds: number
}

export interface LoadSpec {
  readonly name: string
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers: Record<string, string>
  /** Called before every request, so each one can carry its own path or body. */
  readonly next: () => { readonly path: string; readonly body?: string }
}

const run = async (spec: LoadSpec, connections: number, seconds: number) => {
  const result = await autocannon({
    url: spec.url,
    connections,
    duration: seconds,
    method: spec.method,
    headers: spec.headers,
    requests: [
      {
        setupRequest: (request) => {
          const { path, body } = spec.next()
          return body === undefined ? { ...request, path } : { ...request, path, body }
        }
      }
    ]
  })
  const good = result["2xx"]
  if (result.non2xx > 0 || result.errors > 0 || good === 0) {
    throw new Error(
      `${spec.name}: ${good} answers 2xx, ${result.non2xx} other statuses ` +
        `(${JSON.stringify(result.statusCodeStats ?? {})}), ${result.errors} connection errors, ` +
        `${result.timeouts} timeouts`
    )
  }
  return { result, good }
}

export const measureLoad = async (spec: LoadSpec, settings: LoadSettings): Promise<LoadResult> => {
  if (settings.warmupSeconds > 0) await run(spec, settings.connections, settings.warmupSeconds)
  const { result, good } = await run(spec, settings.connections, settings.seconds)
  return {
    requestsPerSecond: good / result.duration,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    requests: good,
    seconds: result.duration
  }
}
