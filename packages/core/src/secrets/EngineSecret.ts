/**
 * The engine's secret: one key from which every token and encrypted value of
 * the engine is derived (webhook signing secrets stored encrypted, later API
 * key replays and signed tokens). It is `PAY_SECRET` (the `secret` option: 32
 * or more random bytes, base64) when given; otherwise one is generated at the
 * first start and kept in the database, so every instance of a deployment
 * shares it and it survives restarts.
 *
 * Values are sealed with AES-256-GCM under a key derived per purpose (HKDF-SHA256
 * with the purpose as its info), so a value sealed for one use can never be
 * opened as another's. WebCrypto only: the core imports no Node module.
 */
import { Clock, Context, Data, Effect, Either, Encoding, Layer } from "effect"

/** The smallest engine secret: 32 bytes (256 bits). */
export const MIN_SECRET_BYTES = 32

/** A `PAY_SECRET` / `secret` option: standard base64 of 32 or more bytes, or why it is not one. */
export const decodeEngineSecret = (
  text: string
): Either.Either<Uint8Array<ArrayBuffer>, string> => {
  const trimmed = text.trim()
  const decoded = Encoding.decodeBase64(trimmed)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || Either.isLeft(decoded)) {
    return Either.left("must be standard base64, e.g. the output of `openssl rand -base64 32`")
  }
  const bytes = Uint8Array.from(decoded.right)
  return bytes.length >= MIN_SECRET_BYTES
    ? Either.right(bytes)
    : Either.left(`must be at least ${MIN_SECRET_BYTES} random bytes (it holds ${bytes.length})`)
}

/** A new random secret, base64: what a first start keeps when no secret is given. */
export const generateEngineSecret = (): string =>
  Encoding.encodeBase64(crypto.getRandomValues(new Uint8Array(MIN_SECRET_BYTES)))

/** Where a generated secret is kept: the engine's database. */
export class EngineSecretStore extends Context.Tag("@pay/core/EngineSecretStore")<
  EngineSecretStore,
  {
    /**
     * The stored secret, or `candidate` stored and returned when there is none
     * yet: whichever of several instances starting at once writes first wins,
     * and every one of them gets that one.
     */
    readonly getOrCreate: (candidate: string, at: Date) => Effect.Effect<string>
  }
>() {}

/** A sealed value that does not open: not sealed under this secret for this purpose, or altered. */
export class SealedValueInvalid extends Data.TaggedError("SealedValueInvalid")<{
  readonly purpose: string
}> {}

const SEALED_PREFIX = "v1."
const IV_BYTES = 12

export interface EngineSecretService {
  /** Encrypts `plaintext` for `purpose` (e.g. "webhook-secret"): `v1.<base64 of iv, ciphertext, tag>`. */
  readonly seal: (purpose: string, plaintext: string) => Effect.Effect<string>
  /** Opens what `seal` made for the same purpose. */
  readonly open: (purpose: string, sealed: string) => Effect.Effect<string, SealedValueInvalid>
}

export class EngineSecret extends Context.Tag("@pay/core/EngineSecret")<
  EngineSecret,
  EngineSecretService
>() {}

/** The sealing service over one secret's bytes. */
export const makeEngineSecret = (secret: Uint8Array<ArrayBuffer>): EngineSecretService => {
  const master = crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveKey"])
  const keys = new Map<string, Promise<CryptoKey>>()
  const keyFor = (purpose: string) => {
    let key = keys.get(purpose)
    if (key === undefined) {
      key = master.then((m) =>
        crypto.subtle.deriveKey(
          {
            name: "HKDF",
            hash: "SHA-256",
            salt: new Uint8Array(0),
            info: new TextEncoder().encode(`pay-engine/${purpose}`)
          },
          m,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"]
        )
      )
      keys.set(purpose, key)
    }
    return key
  }
  return {
    seal: (purpose, plaintext) =>
      Effect.promise(async () => {
        const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES))
        const sealed = new Uint8Array(
          await crypto.subtle.encrypt(
            { name: "AES-GCM", iv },
            await keyFor(purpose),
            new TextEncoder().encode(plaintext)
          )
        )
        const out = new Uint8Array(IV_BYTES + sealed.length)
        out.set(iv)
        out.set(sealed, IV_BYTES)
        return SEALED_PREFIX + Encoding.encodeBase64(out)
      }),
    open: (purpose, sealed) =>
      Effect.tryPromise({
        try: async () => {
          if (!sealed.startsWith(SEALED_PREFIX)) throw new Error("not a sealed value")
          const bytes = Uint8Array.from(
            Either.getOrThrow(Encoding.decodeBase64(sealed.slice(SEALED_PREFIX.length)))
          )
          const plain = await crypto.subtle.decrypt(
            { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES) },
            await keyFor(purpose),
            bytes.subarray(IV_BYTES)
          )
          return new TextDecoder().decode(plain)
        },
        catch: () => new SealedValueInvalid({ purpose })
      })
  }
}

/**
 * `EngineSecret` from the given secret (already checked by the options), or
 * else the database's, generated and kept at the first start.
 */
export const engineSecretLayer = (given: string | undefined) =>
  Layer.effect(
    EngineSecret,
    Effect.gen(function* () {
      const [source, secret] =
        given !== undefined
          ? (["the secret option (PAY_SECRET)", given] as const)
          : ([
              "the engine secret kept in the database",
              yield* (yield* EngineSecretStore).getOrCreate(
                generateEngineSecret(),
                new Date(yield* Clock.currentTimeMillis)
              )
            ] as const)
      const bytes = decodeEngineSecret(secret)
      if (Either.isLeft(bytes)) return yield* Effect.dieMessage(`${source} ${bytes.left}`)
      return makeEngineSecret(bytes.right)
    })
  )
