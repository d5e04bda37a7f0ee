/**
 * A Tree-structured Parzen Estimator over integer parameters, as Optuna's
 * TPESampler: the first trials are drawn uniformly; after them the trials so
 * far split into the best γ(n) ("good", γ(n) = min(⌈n / 10⌉, 25)) and the
 * rest, Parzen estimators (mixtures of truncated Gaussians, one per
 * observation plus a wide prior) are built over the good trials, l(x), and
 * over the others, g(x), and the candidate drawn from l with the highest
 * l(x) / g(x), the expected improvement's ratio, is suggested. Independent
 * (Optuna's default): one estimator per parameter, each chosen on its own.
 * Multivariate (Optuna's multivariate=True): one joint estimator, so a
 * candidate stays near one good trial in every parameter; it finds a best
 * that needs several parameters high together, where independent estimators
 * see each parameter's marginal only. Pure: the seeded RNG is the only
 * state, so the same scores give the same suggestions.
 */
import { standardNormal } from "../input/generate.ts";

/** An integer parameter from `low` to `high` (both included). */
export interface IntParameter {
  name: string;
  low: number;
  high: number;
}

export interface Observation {
  params: Readonly<Record<string, number>>;
  /** Higher is better. */
  score: number;
}

export interface TpeOptions {
  /** Trials drawn uniformly before the estimators are used (Optuna: 10). */
  startupTrials?: number;
  /** Candidates drawn from l(x) per parameter (Optuna: 24). */
  candidates?: number;
  /** One joint estimator over all parameters (Optuna's multivariate TPE). */
  multivariate?: boolean;
}

/** mulberry32: a small seeded generator of uniform [0, 1) numbers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Optuna's default γ: how many of `n` trials count as good. */
export function gamma(n: number): number {
  return Math.min(Math.ceil(0.1 * n), 25);
}

/** erf by Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7). */
function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const poly = t *
    (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign * (1 - poly * Math.exp(-a * a));
}

const cdf = (x: number, mu: number, sigma: number) =>
  0.5 * (1 + erf((x - mu) / (sigma * Math.SQRT2)));

interface Mixture {
  mus: number[];
  sigmas: number[];
  weights: number[];
  /** The continuous domain: the integers' bins, [low - 0.5, high + 0.5]. */
  low: number;
  high: number;
}

/**
 * The Parzen estimator of `values` over [low, high] as Optuna builds it: one
 * Gaussian per value whose width is the larger gap to its neighbours (the
 * domain's ends as outer neighbours), clipped to [range / min(100, n + 1),
 * range], and a prior at the middle as wide as the range, all of weight 1.
 */
export function parzenEstimator(values: readonly number[], p: IntParameter): Mixture {
  const low = p.low - 0.5;
  const high = p.high + 0.5;
  const range = high - low;
  const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const sorted = [low, ...order.map((i) => values[i]!), high];
  const sigmas = new Array<number>(values.length);
  order.forEach((index, k) => {
    let sigma = Math.max(sorted[k + 1]! - sorted[k]!, sorted[k + 2]! - sorted[k + 1]!);
    // Optuna's consider_endpoints=False: the outermost use their inner neighbour only.
    if (sorted.length >= 4 && k === 0) sigma = sorted[2]! - sorted[1]!;
    if (sorted.length >= 4 && k === order.length - 1) sigma = sorted[k + 1]! - sorted[k]!;
    sigmas[index] = sigma;
  });
  const minSigma = range / Math.min(100, values.length + 2);
  return {
    mus: [...values, (low + high) / 2],
    sigmas: [...sigmas.map((s) => Math.min(Math.max(s, minSigma), range)), range],
    weights: new Array(values.length + 1).fill(1 / (values.length + 1)),
    low,
    high,
  };
}

/** log P(x) of integer x: the mass of its bin [x - 0.5, x + 0.5] under the truncated mixture. */
export function logMass(m: Mixture, x: number): number {
  let total = 0;
  m.mus.forEach((mu, k) => {
    const sigma = m.sigmas[k]!;
    const norm = cdf(m.high, mu, sigma) - cdf(m.low, mu, sigma);
    const mass = cdf(Math.min(x + 0.5, m.high), mu, sigma) -
      cdf(Math.max(x - 0.5, m.low), mu, sigma);
    total += m.weights[k]! * mass / Math.max(norm, 1e-300);
  });
  return Math.log(Math.max(total, 1e-300));
}

/** An integer drawn from the mixture: a component by weight, then its truncated Gaussian. */
function draw(m: Mixture, p: IntParameter, random: () => number, component?: number): number {
  let k = component ?? 0;
  if (component === undefined) {
    let u = random();
    while (k < m.weights.length - 1 && u >= m.weights[k]!) u -= m.weights[k++]!;
  }
  let x = m.mus[k]!;
  for (let tries = 0; tries < 100; tries++) {
    const y = m.mus[k]! + m.sigmas[k]! * standardNormal(random);
    if (y >= m.low && y <= m.high) {
      x = y;
      break;
    }
  }
  return Math.min(p.high, Math.max(p.low, Math.round(x)));
}

/** The next parameters to try given `history`; `random` is the sampler's seeded RNG. */
export function suggest(
  space: readonly IntParameter[],
  history: readonly Observation[],
  options: TpeOptions & { random: () => number },
): Record<string, number> {
  const { random, startupTrials = 10, candidates = 24 } = options;
  const params: Record<string, number> = {};
  if (history.length < startupTrials) {
    for (const p of space) params[p.name] = p.low + Math.floor(random() * (p.high - p.low + 1));
    return params;
  }
  // Stable: of equal scores the earlier trial counts as better.
  const ranked = history.map((o, i) => ({ o, i })).sort((a, b) =>
    b.o.score - a.o.score || a.i - b.i
  );
  const split = gamma(history.length);
  const good = ranked.slice(0, split).map((r) => r.o);
  const bad = ranked.slice(split).map((r) => r.o);
  if (options.multivariate) return suggestJointly(space, { good, bad, random, candidates });
  for (const p of space) {
    const l = parzenEstimator(good.map((o) => o.params[p.name]!), p);
    const g = parzenEstimator(bad.map((o) => o.params[p.name]!), p);
    let best = { x: p.low, ratio: -Infinity };
    for (let c = 0; c < candidates; c++) {
      const x = draw(l, p, random);
      const ratio = logMass(l, x) - logMass(g, x);
      if (ratio > best.ratio) best = { x, ratio };
    }
    params[p.name] = best.x;
  }
  return params;
}

/**
 * The joint Parzen estimator of `observations` as Optuna's multivariate TPE
 * builds it: one component per observation, a product of truncated Gaussians
 * of one width per parameter, 0.2 x n^(-1 / (d + 4)) of its range (Scott's
 * rule), clipped as the univariate widths are, and the wide prior.
 */
function jointEstimator(observations: readonly Observation[], space: readonly IntParameter[]) {
  const n = observations.length;
  return space.map((p) => {
    const low = p.low - 0.5;
    const high = p.high + 0.5;
    const range = high - low;
    const scott = 0.2 * Math.max(n, 1) ** (-1 / (space.length + 4)) * range;
    const sigma = Math.min(Math.max(scott, range / Math.min(100, n + 2)), range);
    return {
      mus: [...observations.map((o) => o.params[p.name]!), (low + high) / 2],
      sigmas: [...observations.map(() => sigma), range],
      weights: new Array(n + 1).fill(1 / (n + 1)),
      low,
      high,
    } satisfies Mixture;
  });
}

/** log P(x) of a point under a joint estimator: its components' products of bin masses. */
function jointLogMass(m: readonly Mixture[], x: readonly number[]): number {
  let total = 0;
  for (let k = 0; k < m[0]!.mus.length; k++) {
    let mass = m[0]!.weights[k]!;
    m.forEach((dim, d) => {
      const mu = dim.mus[k]!;
      const sigma = dim.sigmas[k]!;
      const norm = cdf(dim.high, mu, sigma) - cdf(dim.low, mu, sigma);
      mass *= (cdf(Math.min(x[d]! + 0.5, dim.high), mu, sigma) -
        cdf(Math.max(x[d]! - 0.5, dim.low), mu, sigma)) / Math.max(norm, 1e-300);
    });
    total += mass;
  }
  return Math.log(Math.max(total, 1e-300));
}

function suggestJointly(
  space: readonly IntParameter[],
  options: {
    good: readonly Observation[];
    bad: readonly Observation[];
    random: () => number;
    candidates: number;
  },
): Record<string, number> {
  const { random } = options;
  const l = jointEstimator(options.good, space);
  const g = jointEstimator(options.bad, space);
  let best = { x: space.map((p) => p.low), ratio: -Infinity };
  for (let c = 0; c < options.candidates; c++) {
    // One component for all parameters: the candidate is near one good observation in every one.
    const component = Math.floor(random() * l[0]!.mus.length);
    const x = space.map((p, d) => draw(l[d]!, p, random, component));
    const ratio = jointLogMass(l, x) - jointLogMass(g, x);
    if (ratio > best.ratio) best = { x, ratio };
  }
  return Object.fromEntries(space.map((p, d) => [p.name, best.x[d]!]));
}
