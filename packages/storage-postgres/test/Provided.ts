/**
 * The name under which the test run's globalSetup hands the database URL to
 * the test workers (vitest's provide/inject), typed on both sides.
 */
export const DATABASE_URL_KEY = "payPostgresUrl"

declare module "vitest" {
  export interface ProvidedContext {
    /** A database of this test run's own; tests make schemas in it. */
    payPostgresUrl: string
  }
}
