/**
 * What a buyer holds, read from the chain when options are made: each
 * (token, account)'s balance, so an option the buyer cannot afford is marked
 * and ranked last, and a Permit2 token's allowance, which decides its
 * approvals. Anyone with an `App-Id` can ask for options, so every read is
 * kept for a few seconds and shared by concurrent requests (shared/
 * SharedReads.ts, by the keys below), and one request reads at most
 * `MAX_BALANCE_READS` balances: past them its options are offered unmarked.
 */
import type { Address } from "viem"
import type { Caip19 } from "../shared/Caip.js"

/** How long a read is kept: long enough to absorb a burst, short enough to follow a payment. */
export const HOLDINGS_TTL_MS = 5_000
/** The most balances one options request reads (20 accounts times a chain's tokens could be more). */
export const MAX_BALANCE_READS = 16
export const balanceKey = (asset: Caip19, owner: Address) =>
  `balance/${asset}/${owner.toLowerCase()}`

export const allowanceKey = (asset: Caip19, owner: Address, spender: Address) =>
  `allowance/${asset}/${owner.toLowerCase()}/${spender.toLowerCase()}`

/** A per-request budget of balance reads: `take` answers whether one more may be read. */
export const balanceBudget = (max = MAX_BALANCE_READS) => {
  let left = max
  return {
    take: () => {
      if (left <= 0) return false
      left--
      return true
    }
  }
}

/** What ranks an option for the buyer: the cheapest to pay first. */
export interface OptionRank {
  /** False when a balance read says the buyer holds too little; undefined when not read. */
  readonly affordable: boolean | undefined
  /** Transactions the buyer must send first (Permit2 approvals), each paid in gas by the buyer. */
  readonly approvals: number
  /** Whether the token follows a fiat currency (a stablecoin), whose price does not move. */
  readonly stable: boolean
}

/**
 * The order options are offered in: what the buyer can afford (or may: not
 * read) before what it cannot; then no approval before an approval (an
 * EIP-3009 token, or an allowance already there, costs the buyer no gas); then
 * a stablecoin before a volatile coin. Otherwise as made (the networks' and
 * their tokens' order), since the sort is stable.
 */
export const rankOptions = <A>(
  options: ReadonlyArray<A>,
  rankOf: (option: A) => OptionRank
): ReadonlyArray<A> => {
  const score = (r: OptionRank) => [r.affordable === false ? 1 : 0, r.approvals, r.stable ? 0 : 1]
  return options
    .map((option, index) => ({ option, index, score: score(rankOf(option)) }))
    .sort((a, b) => {
      for (let i = 0; i < a.score.length; i++) {
        const d = a.score[i]! - b.score[i]!
        if (d !== 0) return d
      }
      return a.index - b.index
    })
    .map((r) => r.option)
}
