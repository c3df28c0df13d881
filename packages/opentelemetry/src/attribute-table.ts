import type { Attributes } from '@opentelemetry/api';
import { AttributeKey } from './metric-names';

/** The attribute sets of one `(policy, route)`, by the extra dimension each instrument adds. */
interface RouteNode {
  readonly base: Attributes;
  readonly outcome: Map<string, Attributes>;
  readonly outcomeCode: Map<string, Map<string, Attributes>>;
  readonly code: Map<string, Attributes>;
  readonly store: Map<string, Attributes>;
}

const RESERVED_KEYS: readonly string[] = Object.values(AttributeKey);

/** Default bound on cached attribute sets; far above policy × route × outcome/code of any sane service. */
export const DEFAULT_MAX_ATTRIBUTE_SETS = 10_000;

/**
 * Frozen attribute objects, one per `(policy, route, dimension value)`, looked up through nested maps so that
 * recording a data point allocates nothing once its set exists (no key string is built per event).
 *
 * Memory is bounded: core evicts idle routes (LRU), but route names can churn forever, so when more than
 * `maxSets` sets exist the whole table is dropped and rebuilt on demand. That costs only re-allocation; the OTel
 * SDK identifies series by attribute values, not object identity, so no series is split by it.
 */
export class AttributeTable {
  readonly #extra: Attributes;
  readonly #maxSets: number;
  #policies = new Map<string, Map<string | undefined, RouteNode>>();
  #sets = 0;

  constructor(extra: Attributes = {}, maxSets = DEFAULT_MAX_ATTRIBUTE_SETS) {
    // Ballast's keys win on a clash, also where Ballast leaves one out: a user's `ballast.route` must not label a
    // route-less call, nor a `ballast.outcome` the instruments that have no outcome.
    const own = { ...extra };
    for (const reserved of RESERVED_KEYS) delete own[reserved];
    this.#extra = own;
    this.#maxSets = maxSets;
  }

  /** Number of attribute sets currently cached. */
  get size(): number {
    return this.#sets;
  }

  /** `ballast.policy` + `ballast.route` (+ the user's extra attributes). */
  base(policy: string, route: string | undefined): Attributes {
    return this.#node(policy, route).base;
  }

  outcome(policy: string, route: string | undefined, outcome: string): Attributes {
    const node = this.#node(policy, route);
    return node.outcome.get(outcome) ?? this.#add(node.outcome, outcome, node.base, AttributeKey.OUTCOME);
  }

  outcomeCode(policy: string, route: string | undefined, outcome: string, code: string): Attributes {
    const node = this.#node(policy, route);
    let byCode = node.outcomeCode.get(outcome);
    if (byCode === undefined) {
      byCode = new Map();
      node.outcomeCode.set(outcome, byCode);
    }
    const found = byCode.get(code);
    if (found !== undefined) return found;
    const withOutcome = this.outcome(policy, route, outcome);
    return this.#add(byCode, code, withOutcome, AttributeKey.CODE);
  }

  code(policy: string, route: string | undefined, code: string): Attributes {
    const node = this.#node(policy, route);
    return node.code.get(code) ?? this.#add(node.code, code, node.base, AttributeKey.CODE);
  }

  store(policy: string, route: string | undefined, store: string): Attributes {
    const node = this.#node(policy, route);
    return node.store.get(store) ?? this.#add(node.store, store, node.base, AttributeKey.STORE);
  }

  #node(policy: string, route: string | undefined): RouteNode {
    let routes = this.#policies.get(policy);
    if (routes === undefined) {
      this.#trim();
      routes = new Map();
      this.#policies.set(policy, routes);
    }
    let node = routes.get(route);
    if (node === undefined) {
      if (this.#trim()) {
        // The table was just dropped: file the node under a fresh policy map, not the orphaned one.
        routes = new Map();
        this.#policies.set(policy, routes);
      }
      const base: Attributes = { ...this.#extra, [AttributeKey.POLICY]: policy };
      if (route !== undefined) base[AttributeKey.ROUTE] = route;
      node = {
        base: Object.freeze(base),
        outcome: new Map(),
        outcomeCode: new Map(),
        code: new Map(),
        store: new Map(),
      };
      routes.set(route, node);
      this.#sets++;
    }
    return node;
  }

  #add(into: Map<string, Attributes>, value: string, parent: Attributes, key: string): Attributes {
    const attrs = Object.freeze({ ...parent, [key]: value });
    into.set(value, attrs);
    this.#sets++;
    return attrs;
  }

  /** Called before creating a node: dropping later would orphan the node a caller is about to fill. */
  #trim(): boolean {
    if (this.#sets < this.#maxSets) return false;
    this.#policies = new Map();
    this.#sets = 0;
    return true;
  }
}
