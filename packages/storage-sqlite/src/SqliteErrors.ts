/**
 * Reading SQLite's errors: a unique or primary key violation is an answer the
 * ports promise (a taken key prefix, a registered asset); anything else is a
 * defect and is rethrown.
 */
export const isUniqueViolation = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  ((error as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE" ||
    (error as { code?: unknown }).code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    /UNIQUE constraint failed/.test(String((error as { message?: unknown }).message)))
