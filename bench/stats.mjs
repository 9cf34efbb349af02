// Statistics for the bench: medians and nearest-rank quantiles, seeded
// bootstrap confidence intervals for an overhead (a ratio of medians, or of
// paired rounds), the gate's verdict, and the seeded order of a pass's
// sides.
import { mean, median, quantile, sampleWithReplacement } from 'simple-statistics';

export { mean, median };

/** The nearest-rank `q` quantile of `samples` (the value at rank ⌈q·n⌉, 1-based): the query benches' median and p95. */
export function nearestRank(samples, q) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length, Math.max(1, Math.ceil(q * s.length))) - 1];
}

/**
 * `items` in an order drawn from `random` (Fisher-Yates): the sides of one
 * pass of a write bench, so that no side always runs right after the same
 * one (and inherits its warm caches).
 */
export function shuffled(items, random) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Mulberry32: a small seeded PRNG, so a run's intervals are reproducible. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Overhead of `treated` over `base` as median(treated) / median(base) - 1,
 * with a 95% percentile-bootstrap interval (resampling both sides).
 */
export function overhead(base, treated, { resamples = 2000, seed = 42 } = {}) {
  const random = seededRandom(seed);
  const point = median(treated) / median(base) - 1;
  const boots = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) {
    const b = median(sampleWithReplacement(base, base.length, random));
    const t = median(sampleWithReplacement(treated, treated.length, random));
    boots[i] = t / b - 1;
  }
  const sorted = Array.from(boots).sort((x, y) => x - y);
  return { point, low: quantile(sorted, 0.025), high: quantile(sorted, 0.975) };
}

/**
 * Overhead of `treated` over `base` from samples timed in rounds
 * (timeBatches): sample r of each side is round r's, and rounds alternate
 * forward and backward order. Each unit is a forward round with the
 * backward one after it, so neither side always runs first in a unit; its
 * ratio is the treated side's time over the base side's. The estimate is
 * the median of the units' ratios less 1, with a 95% percentile-bootstrap
 * interval over units. A host whose speed drifts moves both sides of a
 * unit alike, so the drift leaves the ratios alone where a ratio of
 * medians (overhead()) takes it in.
 */
export function pairedOverhead(base, treated, { resamples = 2000, seed = 42 } = {}) {
  if (base.length !== treated.length || base.length < 2 || base.length % 2 !== 0) {
    throw new Error('pairedOverhead: both sides need the same, even number of rounds');
  }
  const ratios = [];
  for (let r = 0; r < base.length; r += 2) ratios.push((treated[r] + treated[r + 1]) / (base[r] + base[r + 1]));
  const { point, low, high } = medianInterval(ratios, { resamples, seed });
  return { point: point - 1, low: low - 1, high: high - 1 };
}

/** The median of `values`, with a 95% percentile-bootstrap interval. */
export function medianInterval(values, { resamples = 2000, seed = 42 } = {}) {
  const random = seededRandom(seed);
  const boots = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) boots[i] = median(sampleWithReplacement(values, values.length, random));
  const sorted = Array.from(boots).sort((x, y) => x - y);
  return { point: median(values), low: quantile(sorted, 0.025), high: quantile(sorted, 0.975) };
}

/**
 * The gate: PASS when the whole 95% interval lies below `limit`, FAIL when
 * it lies at or above it, INCONCLUSIVE when it straddles it.
 */
export function verdict({ low, high }, limit) {
  if (high < limit) return 'PASS';
  if (low >= limit) return 'FAIL';
  return 'INCONCLUSIVE';
}

/** "+3.1%"; for a negative point estimate "within noise" when the interval reaches 0, else "faster" (the interval is the figure). */
export function formatOverhead({ point, low, high }) {
  const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  const head = point >= 0 ? pct(point) : high >= 0 ? 'within noise' : 'faster';
  return `${head} [${pct(low)}, ${pct(high)}]`;
}
