// The run's timeline: the answers the edge (edge.mjs) reports each second, merged per whole second since the edge's
// last `zero` and per endpoint. Each report carries the `epoch` of the zero it counts from, and only the current
// epoch's reports are kept: the edge numbers its seconds from its own start until the first zero, so the capacity
// run's answers (every one accepted, the rate limit retuned out of the way) used to land on the same seconds as the
// load's first ones and were counted as the fleet's (a "fleet rate limit overshoot" in the first ~18 s of a run).

/** Follows `edge`'s reports; `zero()` starts the timeline over and resolves with the edge's new t0 (epoch ms). */
export function recordTimeline(edge) {
  const timeline = new Map();
  let zeros = 0;
  /** The epoch whose reports are kept: none before the first zero. */
  let epoch;
  edge.on('second', (m) => {
    if (m.epoch === epoch) merge(timeline, m);
  });
  return {
    timeline,
    async zero() {
      epoch = ++zeros;
      timeline.clear();
      return edge.send({ op: 'zero', epoch });
    },
  };
}

/** Adds one report (a second, or part of one: the edge reports every 250 ms) to the timeline. */
export function merge(timeline, m) {
  const s = timeline.get(m.at) ?? { endpoints: {} };
  for (const [endpoint, e] of Object.entries(m.endpoints)) {
    const x = (s.endpoints[endpoint] ??= { outcomes: {}, latencies: [], unexpected: [] });
    for (const [k, v] of Object.entries(e.outcomes)) x.outcomes[k] = (x.outcomes[k] ?? 0) + v;
    for (const l of e.latencies) x.latencies.push(l);
    x.unexpected.push(...e.unexpected);
  }
  s.retries = (s.retries ?? 0) + (m.retries ?? 0);
  timeline.set(m.at, s);
}
