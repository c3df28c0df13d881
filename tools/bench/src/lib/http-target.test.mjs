// The SPEC §14.6 HTTP verdicts that BENCHMARKS.md prints: a verdict must follow the rounds, never the wording.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { instructionVerdict, targetVerdict } from './http-target.mjs';

/** Rounds of instructions per request, the shape http-instructions.bench.mjs hands over. */
const rounds = ({ bare, plain, req, resilient, opossum }) => ({
  a: { bare, plain, req, resilient, opossum, cockatiel: bare.map((x) => x * 2) },
});

test('instructions: met when every round is within the allowance, and an undecorated route spanning 0 is nothing', () => {
  const text = instructionVerdict(
    rounds({
      bare: [60_000, 60_400],
      plain: [60_200, 60_100],
      req: [63_000, 63_100], // Nest's parameters: + 2,800 / + 3,000
      resilient: [69_000, 69_300], // + 8,800 / + 9,200
      opossum: [67_000, 67_400], // + 7,000 / + 7,000: allowance 9,800 / 10,000
    }),
    ['a'],
  );
  assert.match(text, /margin \(allowance − added cost, per round\) is 900 \(rounds 800 to 1,000\): met\./);
  assert.match(
    text,
    /costs -50 instructions over no Ballast \(rounds -300 to 200.*nothing measurable \(not more in every round\): met\./,
  );
});

test('instructions: NOT met when no round is, unsettled when the rounds disagree; a route always dearer is measurable', () => {
  const base = { bare: [60_000, 60_000], plain: [61_000, 61_500], req: [64_000, 64_500] };
  const missed = instructionVerdict(
    rounds({ ...base, resilient: [80_000, 80_500], opossum: [65_000, 65_000] }),
    ['a'],
  );
  assert.match(missed, /: NOT met\. The undecorated/);
  assert.match(
    missed,
    /costs 1,250 instructions over no Ballast \(rounds 1,000 to 1,500, 2\.1 % of the request\); nothing measurable \(not more in every round\): NOT met\./,
  );
  const unsettled = instructionVerdict(
    rounds({ ...base, resilient: [68_000, 76_000], opossum: [68_000, 68_000] }),
    ['a'],
  );
  assert.match(unsettled, /not settled by this run \(the rounds span 0\)/);
  const cheaper = instructionVerdict(
    rounds({ ...base, plain: [59_500, 59_800], resilient: [68_000, 76_000], opossum: [68_000, 68_000] }),
    ['a'],
  );
  assert.match(cheaper, /costs -350 instructions over no Ballast \(rounds -500 to -200.*\): met\./);
});

test('CPU time: the verdict reads the middle half of rounds', () => {
  const row = (xs) => xs.map((cpuPerRequest) => ({ cpuPerRequest }));
  const results = {
    a: {
      bare: row([10, 10, 10, 10]),
      plain: row([10, 10, 10, 10]),
      req: row([11, 11, 11, 11]),
      resilient: row([12, 12, 12, 12]),
      opossum: row([12, 12, 12, 12]),
    },
  };
  assert.match(
    targetVerdict(results, ['a'], false),
    /is 1\.00 µs \(middle half of rounds 1\.00 µs to 1\.00 µs\): met\./,
  );
});

test('instructions: with a control row, an undecorated route is judged against what two identical applications differ by', () => {
  const base = {
    bare: [60_000, 60_000],
    req: [64_000, 64_500],
    resilient: [68_000, 68_000],
    opossum: [65_000, 65_000],
  };
  const within = instructionVerdict({ a: { ...base, plain: [60_800, 60_900], control: [60_850, 60_900] } }, [
    'a',
  ]);
  assert.match(
    within,
    /two identical applications without Ballast differ by 875; nothing measurable \(no more than that\): met\./,
  );
  const beyond = instructionVerdict({ a: { ...base, plain: [62_000, 62_000], control: [60_300, 60_100] } }, [
    'a',
  ]);
  assert.match(beyond, /differ by 200; nothing measurable \(no more than that\): NOT met\./);
});
