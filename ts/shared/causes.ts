// An error and the errors it wraps: Drizzle wraps the driver's error in its
// DrizzleQueryError (`cause`), and a driver may wrap another.

/** `e` and its causes, outermost first, at most `depth` of them (a cycle of causes ends there too). */
export function* causes(e: unknown, depth = 4): Generator<Record<string, unknown>> {
  for (let err = e, n = 0; typeof err === 'object' && err !== null && n < depth; err = (err as { cause?: unknown }).cause, n++) {
    yield err as Record<string, unknown>;
  }
}
