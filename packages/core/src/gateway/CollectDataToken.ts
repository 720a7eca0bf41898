/**
 * The token of a data-collection page's URL (`collectData.url`): an HMAC under
 * the engine's secret of the payment id and the accounts the URL names, so only
 * a URL the engine handed out (in an options answer, or a confirm's refusal)
 * opens the page or posts its form; knowing a payment id is not enough to
 * overwrite what its buyer entered. A token covers exactly its accounts, in
 * their order: it writes those accounts' data and no other's.
 *
 * Nothing is stored: every instance sharing the engine's secret makes and
 * checks the same tokens, across restarts, and a token made under a previous
 * secret (`PAY_SECRET_PREVIOUS`) still works during a rotation. A token does not
 * expire by itself: the page refuses a payment that can no longer be paid.
 */
import { Effect } from "effect"
import type { PaymentId } from "../payments/Payment.js"
import type { EngineSecretService } from "../secrets/EngineSecret.js"

/** The purpose the token's key is derived for (HKDF info `pay-engine/hmac/collect-data-page`). */
export const COLLECT_TOKEN_PURPOSE = "collect-data-page"

/** The query parameter that carries the token. */
export const COLLECT_TOKEN_PARAM = "token"

/** What is signed: the payment id and the accounts, one per line (neither holds a newline). */
const message = (id: string, accounts: ReadonlyArray<string>) =>
  ["collect-data-page/v1", id, ...accounts].join("\n")

/** The token for the page of `id` and `accounts` (CAIP-10, as the URL names them). */
export const collectDataToken = (
  secret: EngineSecretService,
  id: PaymentId,
  accounts: ReadonlyArray<string>
): Effect.Effect<string> => secret.sign(COLLECT_TOKEN_PURPOSE, message(id, accounts))

/** Whether `token` is the one for `id` and `accounts`; a missing token is not. */
export const isCollectDataToken = (
  secret: EngineSecretService,
  id: PaymentId,
  accounts: ReadonlyArray<string>,
  token: string | null | undefined
): Effect.Effect<boolean> =>
  token === null || token === undefined || token === ""
    ? Effect.succeed(false)
    : secret.verify(COLLECT_TOKEN_PURPOSE, message(id, accounts), token)
