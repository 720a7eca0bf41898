/**
 * What the client reads off the engine's HttpApi definition (`PayApi`), and
 * nothing else: the endpoint of a group and name, its success type and the
 * error codes it declares. Only the definition's entry points of @pay/core
 * are imported (`@pay/core/api` and the groups' schema modules), never its
 * index, which pulls in the whole engine.
 */
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { PayApi } from "@pay/core/api"

export type PayApiGroups =
  typeof PayApi extends HttpApi.HttpApi<string, infer G, infer _E, infer _R> ? G : never

/** Errors every endpoint may answer (401, 413, 415, 500, and the platform's decode error). */
export type PayApiErrors =
  typeof PayApi extends HttpApi.HttpApi<string, infer _G, infer E, infer _R> ? E : never

export type GroupName = HttpApiGroup.HttpApiGroup.Name<PayApiGroups>

export type EndpointName<G extends GroupName> = HttpApiEndpoint.HttpApiEndpoint.Name<
  HttpApiGroup.HttpApiGroup.EndpointsWithName<PayApiGroups, G>
>

export type Endpoint<
  G extends GroupName,
  N extends EndpointName<G>
> = HttpApiEndpoint.HttpApiEndpoint.WithName<
  HttpApiGroup.HttpApiGroup.EndpointsWithName<PayApiGroups, G>,
  N
>

/** The decoded success body of an endpoint. */
export type Success<
  G extends GroupName,
  N extends EndpointName<G>
> = HttpApiEndpoint.HttpApiEndpoint.Success<Endpoint<G, N>>

/** Every error body an endpoint may answer: its own, its group's and the API's. */
export type ErrorBody<G extends GroupName, N extends EndpointName<G>> =
  | HttpApiEndpoint.HttpApiEndpoint.Error<Endpoint<G, N>>
  | HttpApiGroup.HttpApiGroup.ErrorWithName<PayApiGroups, G>
  | PayApiErrors

/**
 * The wire codes an endpoint declares: the `code` literals of its error
 * bodies. (The platform's own `HttpApiDecodeError` has no `code`; the engine
 * never sends it, so it drops out here.)
 */
export type ErrorCode<G extends GroupName, N extends EndpointName<G>> =
  ErrorBody<G, N> extends infer B
    ? B extends { readonly code: infer C extends string }
      ? C
      : never
    : never

/** The codes the client itself uses when it refuses a request before sending it (see Call.ts). */
export type LocalValidationCode = "params_validation" | "invalid_params"

/** The endpoint object of the definition, with its schemas, looked up by group and name. */
export const endpointOf = <G extends GroupName, N extends EndpointName<G>>(
  group: G,
  name: N
): Endpoint<G, N> => endpointByName(group, name) as Endpoint<G, N>

/** The same, for names only known at run time. */
export const endpointByName = (
  group: string,
  name: string
): HttpApiEndpoint.HttpApiEndpoint.AnyWithProps => {
  const endpoint = (PayApi as HttpApi.HttpApi.AnyWithProps).groups[group]?.endpoints[name]
  if (endpoint === undefined) throw new Error(`PayApi has no endpoint ${group}.${name}`)
  return endpoint
}

/** Type-level check that two types are the same (used to pin wire schemas to their endpoints). */
export type Equals<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
export type Assert<T extends true> = T
