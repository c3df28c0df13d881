/** How the admin API names who acted, for the audit trail: never a credential, at most 200 characters. */
export type ActorOf = (request: unknown) => string | undefined;

const MAX = 200;

/**
 * The default actor: the guard's principal, `request.user.id` or `request.user.sub` (Passport and most JWT guards
 * put the authenticated user there). Only that identifier is kept — never the user object, a header or a token.
 */
export const defaultActor: ActorOf = (request) => {
  const user = (request as { user?: unknown } | null | undefined)?.user;
  if (typeof user !== 'object' || user === null) return undefined;
  const u = user as Record<string, unknown>;
  for (const id of [u['id'], u['sub']])
    if ((typeof id === 'string' && id !== '') || (typeof id === 'number' && Number.isFinite(id)))
      return String(id).slice(0, MAX);
  return undefined;
};

/** A configured `actor` option, bounded the same way; a function that throws names nobody. */
export function boundedActor(actorOf: ActorOf): ActorOf {
  return (request) => {
    try {
      const actor = actorOf(request);
      return typeof actor === 'string' && actor !== '' ? actor.slice(0, MAX) : undefined;
    } catch {
      return undefined;
    }
  };
}
