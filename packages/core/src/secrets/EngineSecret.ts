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
 *
 * Rotation: previous secrets (`PAY_SECRET_PREVIOUS`, the `previousSecrets`
 * option) still open what was sealed under them, and never seal; `reseal`
 * (Reseal.ts) rewrites stored values under the current one, after which they
 * can be dropped. A sealed value names no key: opening tries the current
 * secret, then each previous one (a wrong key fails GCM's tag check at once).
 *
 * Signed tokens (`sign`, `verify`): HMAC-SHA256 under a key derived the same
 * way, with its own info (`pay-engine/hmac/<purpose>`), so a signing key is never
 * a sealing key. They need no storage: every instance sharing the secret makes
 * and checks the same ones, across restarts; a token made under a previous
 * secret still verifies while that secret is listed (a rotation breaks no link).
 */
import { Clock, Context, Data, Effect, Either, Encoding, Layer, Option } from "effect"

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
/** What `EngineSecret` seals webhook endpoint secrets for (webhooks/WebhookEndpoints.ts). */
export const WEBHOOK_SECRET_PURPOSE = "webhook-secret"

export class EngineSecretStore extends Context.Tag("@pay/core/EngineSecretStore")<
  EngineSecretStore,
  {
    /**
     * The stored secret, or `candidate` stored and returned when there is none
     * yet: whichever of several instances starting at once writes first wins,
     * and every one of them gets that one.
     */
    readonly getOrCreate: (candidate: string, at: Date) => Effect.Effect<string>
    /**
     * The kept secret, if one was ever generated; never writes. A deployment
     * that moved to `PAY_SECRET` still opens what was sealed under it.
     */
    readonly find: Effect.Effect<Option.Option<string>>
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
  /** Opens what `seal` made for the same purpose, under the current secret or a previous one. */
  readonly open: (purpose: string, sealed: string) => Effect.Effect<string, SealedValueInvalid>
  /**
   * The same plaintext sealed under the current secret when `sealed` was
   * sealed under a previous one; none when it already is under the current one.
   */
  readonly reseal: (
    purpose: string,
    sealed: string
  ) => Effect.Effect<Option.Option<string>, SealedValueInvalid>
  /** `message`'s HMAC-SHA256 for `purpose` under the current secret, base64url without padding. */
  readonly sign: (purpose: string, message: string) => Effect.Effect<string>
  /**
   * Whether `token` is what `sign` makes for `message` and `purpose`, under the
   * current secret or a previous one (compared in constant time by WebCrypto).
   */
  readonly verify: (purpose: string, message: string, token: string) => Effect.Effect<boolean>
}

export class EngineSecret extends Context.Tag("@pay/core/EngineSecret")<
  EngineSecret,
  EngineSecretService
>() {}

/**
 * The keys one secret derives with HKDF-SHA256, one per purpose, made once
 * each; `info` names the kind and the purpose, so no two kinds or purposes
 * share a key.
 */
const derivedKeys = (
  secret: Uint8Array<ArrayBuffer>,
  infoPrefix: string,
  algorithm: AesKeyGenParams | HmacKeyGenParams,
  usages: Array<KeyUsage>
) => {
  const master = crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveKey"])
  const keys = new Map<string, Promise<CryptoKey>>()
  return (purpose: string) => {
    let key = keys.get(purpose)
    if (key === undefined) {
      key = master.then((m) =>
        crypto.subtle.deriveKey(
          {
            name: "HKDF",
            hash: "SHA-256",
            salt: new Uint8Array(0),
            info: new TextEncoder().encode(`${infoPrefix}${purpose}`)
          },
          m,
          algorithm,
          false,
          usages
        )
      )
      keys.set(purpose, key)
    }
    return key
  }
}

/** The AES-GCM keys that seal: `pay-engine/<purpose>`. */
const keyring = (secret: Uint8Array<ArrayBuffer>) =>
  derivedKeys(secret, "pay-engine/", { name: "AES-GCM", length: 256 }, ["encrypt", "decrypt"])

/** The HMAC-SHA256 keys that sign tokens: `pay-engine/hmac/<purpose>`. */
const hmacKeyring = (secret: Uint8Array<ArrayBuffer>) =>
  derivedKeys(secret, "pay-engine/hmac/", { name: "HMAC", hash: "SHA-256", length: 256 }, [
    "sign",
    "verify"
  ])

/** Base64url without padding, the form of a token in a URL. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((byte, i) => byte === b[i])

/**
 * The sealing service over one secret's bytes; `previous` secrets only open
 * (the current one among them, or a repeat, is left out).
 */
export const makeEngineSecret = (
  secret: Uint8Array<ArrayBuffer>,
  previous: ReadonlyArray<Uint8Array<ArrayBuffer>> = []
): EngineSecretService => {
  const current = keyring(secret)
  const distinct: Array<Uint8Array<ArrayBuffer>> = [secret]
  for (const p of previous) if (!distinct.some((d) => sameBytes(d, p))) distinct.push(p)
  const older = distinct.slice(1).map(keyring)
  const signing = distinct.map(hmacKeyring)

  const signWith = async (purpose: string, message: string) =>
    Encoding.encodeBase64Url(
      new Uint8Array(
        await crypto.subtle.sign(
          "HMAC",
          await (signing[0] as (purpose: string) => Promise<CryptoKey>)(purpose),
          new TextEncoder().encode(message)
        )
      )
    )

  const verifyWith = async (purpose: string, message: string, token: string) => {
    if (!TOKEN_PATTERN.test(token)) return false
    const mac = Encoding.decodeBase64Url(token)
    if (Either.isLeft(mac)) return false
    const data = new TextEncoder().encode(message)
    for (const keyFor of signing) {
      if (
        await crypto.subtle.verify("HMAC", await keyFor(purpose), Uint8Array.from(mac.right), data)
      ) {
        return true
      }
    }
    return false
  }

  const sealWith = async (purpose: string, plaintext: string) => {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES))
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv },
        await current(purpose),
        new TextEncoder().encode(plaintext)
      )
    )
    const out = new Uint8Array(IV_BYTES + sealed.length)
    out.set(iv)
    out.set(sealed, IV_BYTES)
    return SEALED_PREFIX + Encoding.encodeBase64(out)
  }

  /** The plaintext, and whether the current secret opened it; throws when none does. */
  const unseal = async (purpose: string, sealed: string) => {
    if (!sealed.startsWith(SEALED_PREFIX)) throw new Error("not a sealed value")
    const bytes = Uint8Array.from(
      Either.getOrThrow(Encoding.decodeBase64(sealed.slice(SEALED_PREFIX.length)))
    )
    const decrypt = async (keyFor: (purpose: string) => Promise<CryptoKey>) =>
      new TextDecoder().decode(
        await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES) },
          await keyFor(purpose),
          bytes.subarray(IV_BYTES)
        )
      )
    for (const [i, keyFor] of [current, ...older].entries()) {
      const plaintext = await decrypt(keyFor).then(
        (p) => p,
        () => undefined
      )
      if (plaintext !== undefined) return { plaintext, current: i === 0 }
    }
    throw new Error("no secret opens it")
  }

  return {
    seal: (purpose, plaintext) => Effect.promise(() => sealWith(purpose, plaintext)),
    open: (purpose, sealed) =>
      Effect.tryPromise({
        try: async () => (await unseal(purpose, sealed)).plaintext,
        catch: () => new SealedValueInvalid({ purpose })
      }),
    sign: (purpose, message) => Effect.promise(() => signWith(purpose, message)),
    verify: (purpose, message, token) => Effect.promise(() => verifyWith(purpose, message, token)),
    reseal: (purpose, sealed) =>
      Effect.tryPromise({
        try: () => unseal(purpose, sealed),
        catch: () => new SealedValueInvalid({ purpose })
      }).pipe(
        Effect.flatMap((opened) =>
          opened.current
            ? Effect.succeed(Option.none())
            : Effect.map(
                Effect.promise(() => sealWith(purpose, opened.plaintext)),
                Option.some
              )
        )
      )
  }
}

/**
 * `EngineSecret` from the given secret (already checked by the options), or
 * else the database's, generated and kept at the first start. `previous`
 * secrets open what was sealed under them. With a given secret, the one kept
 * in the database (when the deployment once ran without `PAY_SECRET`) opens
 * too, so moving to `PAY_SECRET` needs no copy of it: once `reseal` has
 * re-sealed the stored values, it protects nothing.
 */
export const engineSecretLayer = (
  given: string | undefined,
  previous: ReadonlyArray<string> = []
) =>
  Layer.effect(
    EngineSecret,
    Effect.gen(function* () {
      const store = yield* EngineSecretStore
      const decode = (source: string, text: string) => {
        const bytes = decodeEngineSecret(text)
        return Either.isLeft(bytes)
          ? Effect.dieMessage(`${source} ${bytes.left}`)
          : Effect.succeed(bytes.right)
      }
      const older = yield* Effect.forEach(previous, (text, i) =>
        decode(`previous secret ${i + 1} (PAY_SECRET_PREVIOUS)`, text)
      )
      if (given === undefined) {
        const kept = yield* store.getOrCreate(
          generateEngineSecret(),
          new Date(yield* Clock.currentTimeMillis)
        )
        return makeEngineSecret(
          yield* decode("the engine secret kept in the database", kept),
          older
        )
      }
      const current = yield* decode("the secret option (PAY_SECRET)", given)
      const kept = yield* store.find
      if (Option.isNone(kept)) return makeEngineSecret(current, older)
      const keptBytes = decodeEngineSecret(kept.value)
      if (Either.isLeft(keptBytes)) {
        // Not used to seal here: a broken row need not stop a start that has its own secret.
        yield* Effect.logWarning(
          `the engine secret kept in the database ${keptBytes.left}: ignored, PAY_SECRET is set`
        )
        return makeEngineSecret(current, older)
      }
      return makeEngineSecret(current, [...older, keptBytes.right])
    })
  )
