/**
 * Indexes for the payment list's filters that the listing and statistics
 * indexes do not cover (issue 18):
 * - the reference search, a case-insensitive substring: an FTS5 index with the
 *   `trigram` tokenizer over the already lower-cased `reference_folded`
 *   (`case_sensitive 1`, so FTS5 folds nothing itself and a match is exactly a
 *   substring of what the store compares). Its rows live in
 *   `payment_references`, keyed by an INTEGER PRIMARY KEY of its own: the
 *   payments' rowid may change on VACUUM, this one may not. Triggers on
 *   `payments` keep both in step on every write path, whatever the statement;
 * - network and token: the payments of a partner by (chain, creation time,
 *   id), the token included, for pages in date order; and a covering index of
 *   the succeeded ones by (chain, token, creation time) with the buyer and the
 *   amount, for their statistics without reading the table.
 * Existing payments are indexed here.
 */
import type { SqliteConnection } from "../SqliteDatabase.js"

const statements = [
  `CREATE TABLE payment_references (
    id INTEGER PRIMARY KEY,
    payment_id TEXT NOT NULL UNIQUE,
    reference_folded TEXT NOT NULL
  ) STRICT`,
  `CREATE VIRTUAL TABLE payment_references_fts USING fts5(
    reference_folded,
    content = 'payment_references',
    content_rowid = 'id',
    tokenize = 'trigram case_sensitive 1'
  )`,
  `INSERT INTO payment_references (payment_id, reference_folded)
    SELECT id, reference_folded FROM payments ORDER BY created_at, id`,
  `INSERT INTO payment_references_fts (payment_references_fts) VALUES ('rebuild')`,
  `CREATE TRIGGER payments_reference_inserted AFTER INSERT ON payments BEGIN
    INSERT INTO payment_references (payment_id, reference_folded)
      VALUES (new.id, new.reference_folded);
    INSERT INTO payment_references_fts (rowid, reference_folded)
      VALUES ((SELECT id FROM payment_references WHERE payment_id = new.id), new.reference_folded);
  END`,
  // Nothing changes a payment's id or reference today; should anything ever, the index follows.
  `CREATE TRIGGER payments_reference_updated AFTER UPDATE OF id, reference_folded ON payments
    WHEN old.id IS NOT new.id OR old.reference_folded IS NOT new.reference_folded BEGIN
    INSERT INTO payment_references_fts (payment_references_fts, rowid, reference_folded)
      SELECT 'delete', id, reference_folded FROM payment_references WHERE payment_id = old.id;
    UPDATE payment_references SET payment_id = new.id, reference_folded = new.reference_folded
      WHERE payment_id = old.id;
    INSERT INTO payment_references_fts (rowid, reference_folded)
      SELECT id, reference_folded FROM payment_references WHERE payment_id = new.id;
  END`,
  `CREATE TRIGGER payments_reference_deleted AFTER DELETE ON payments BEGIN
    INSERT INTO payment_references_fts (payment_references_fts, rowid, reference_folded)
      SELECT 'delete', id, reference_folded FROM payment_references WHERE payment_id = old.id;
    DELETE FROM payment_references WHERE payment_id = old.id;
  END`,
  `CREATE INDEX payments_by_partner_chain_date
    ON payments (partner_id, token_chain, created_at, id, token_asset)`,
  `CREATE INDEX payments_succeeded_by_partner_token
    ON payments (partner_id, token_chain, token_asset, created_at, buyer_key, amount_unit,
      amount_minor) WHERE status = 'succeeded'`
]

export default (db: SqliteConnection): void => {
  for (const statement of statements) db.exec(statement)
}
