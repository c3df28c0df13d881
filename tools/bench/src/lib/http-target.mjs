// SPEC §14.6's HTTP targets, read off one run of http.bench.mjs: a decorated route's CPU cost per request at most
// opossum-in-the-handler's plus Nest's own parameter resolution, and an undecorated route in an application importing
// ResilienceModule costing nothing measurable (Node 24). Per round (the rows of a round ran back to back), then the
// median and the middle half of rounds, so the verdict says how sure it is.
import { median, quantile } from './report.mjs';

/** µs of server user CPU per request of `name` in each round. */
const cpu = (r, name) => r[name].map((row) => row.cpuPerRequest);
const minus = (xs, ys) => xs.map((x, i) => x - ys[i]);
const plus = (xs, ys) => xs.map((x, i) => x + ys[i]);
const us = (x) => `${x.toFixed(2)} µs`;
const spread = (xs) => `middle half of rounds ${us(quantile(xs, 0.25))} to ${us(quantile(xs, 0.75))}`;
const mark = (ok) => (ok ? 'met' : 'NOT met');
/**
 * A verdict as sure as the run: met when even the lower quartile of the per-round margins is ≥ 0, NOT met when even
 * the upper quartile is < 0, else unsettled (the medians of the parts need not add up to the median of the margin).
 */
const verdictOf = (margins) =>
  quantile(margins, 0.25) >= 0
    ? 'met'
    : quantile(margins, 0.75) < 0
      ? 'NOT met'
      : 'not settled by this run (the middle half of rounds spans 0)';

/**
 * The verdict paragraph. On the reference Node 24 the default configuration is measured; on another Node (the
 * cross-check, Node 20) the target is stated with `ambientContext: false`, as for the pipeline.
 */
export function targetVerdict(results, adapters, cross) {
  const [decorated, plain, req] = cross
    ? ['resilient-noctx', 'plain-noctx', 'req-noctx']
    : ['resilient', 'plain', 'req'];
  const lines = adapters.map((a) => {
    const r = results[a];
    const over = minus(cpu(r, decorated), cpu(r, plain));
    const params = minus(cpu(r, req), cpu(r, plain));
    const opossum = minus(cpu(r, 'opossum'), cpu(r, 'bare'));
    const allowance = plus(opossum, params);
    const margin = minus(allowance, over);
    const undecorated = minus(cpu(r, plain), cpu(r, 'bare'));
    const nothing = quantile(undecorated, 0.25) <= 0 && quantile(undecorated, 0.75) >= 0;
    return (
      `- ${a}: \`@Resilient\` adds ${us(median(over))} per request over the undecorated handler (${spread(over)}); ` +
      `opossum in the handler adds ${us(median(opossum))} over no Ballast and Nest's parameter resolution ` +
      `(\`@Req()\`) ${us(median(params))}, so the allowance is ${us(median(allowance))}; the margin (allowance − added ` +
      `cost, per round) is ${us(median(margin))} (${spread(margin)}): ${verdictOf(margin)}. The undecorated route with ` +
      `ResilienceModule${cross ? ' (`ambientContext: false`)' : ''} costs ${us(median(undecorated))} over no Ballast ` +
      `(${spread(undecorated)})${cross ? ', for information' : `; the target is nothing measurable (0 within the middle half of rounds): ${mark(nothing)}`}.`
    );
  });
  return `SPEC §14.6's HTTP targets${cross ? ` (the Node 20 reading: \`ambientContext: false\`)` : ' (Node 24, default configuration)'}, in this run:
${lines.join('\n')}`;
}

/**
 * The same targets read off http-instructions.bench.mjs: instructions per request per round (the rows of a round ran
 * back to back in one server process). With counts repeatable to a few hundred instructions, a margin is met when
 * every round meets it, NOT met when no round does.
 */
export function instructionVerdict(results, adapters) {
  const k = (x) => `${Math.round(x).toLocaleString('en-US')}`;
  const range = (xs) => `rounds ${k(Math.min(...xs))} to ${k(Math.max(...xs))}`;
  const lines = adapters.map((a) => {
    const r = results[a];
    const over = minus(r.resilient, r.plain);
    const params = minus(r.req, r.plain);
    const opossum = minus(r.opossum, r.bare);
    const margin = minus(plus(opossum, params), over);
    const undecorated = minus(r.plain, r.bare);
    const verdict = (xs) =>
      Math.min(...xs) >= 0
        ? 'met'
        : Math.max(...xs) < 0
          ? 'NOT met'
          : 'not settled by this run (the rounds span 0)';
    // Two identical Nest applications of one process differ by a few hundred instructions per request either way: the
    // control row (the application without Ballast served once more) measures that floor in the same run. Without it,
    // measurable means more in every round.
    const floor = r.control === undefined ? undefined : Math.abs(median(minus(r.control, r.bare)));
    const nothing = floor === undefined ? Math.min(...undecorated) <= 0 : median(undecorated) <= floor;
    return (
      `- ${a}: \`@Resilient\` adds ${k(median(over))} instructions per request over the undecorated handler ` +
      `(${range(over)}); opossum in the handler adds ${k(median(opossum))} over no Ballast and Nest's parameter ` +
      `resolution (\`@Req()\`) ${k(median(params))}, so the allowance is ${k(median(plus(opossum, params)))}; the ` +
      `margin (allowance − added cost, per round) is ${k(median(margin))} (${range(margin)}): ${verdict(margin)}. ` +
      `The undecorated route with ResilienceModule costs ${k(median(undecorated))} instructions over no Ballast ` +
      `(${range(undecorated)}, ${((100 * median(undecorated)) / median(r.bare)).toFixed(1)} % of the request); ` +
      (floor === undefined
        ? `nothing measurable (not more in every round): ${mark(nothing)}.`
        : `two identical applications without Ballast differ by ${k(floor)}; nothing measurable (no more than that): ${mark(nothing)}.`)
    );
  });
  return `SPEC §14.6's HTTP targets in instructions (Node 24, default configuration), in this run:\n${lines.join('\n')}`;
}
