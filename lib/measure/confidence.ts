/**
 * Student's t distribution computed (no tables), and what repeat runs and
 * comparisons take from it: the confidence interval of a mean and Welch's
 * two-sample test.
 */
import { mean, sampleStdDev } from "./stats.ts";

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ~15 significant digits). */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const c = [
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  const z = x - 1;
  let sum = c[0];
  for (let i = 1; i < 9; i++) sum += c[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let step = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + step * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + step / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    step = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + step * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + step / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(
    logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x),
  );
  // The fraction converges fast below the mean; above it, by symmetry.
  return x < (a + 1) / (a + b + 2)
    ? (front * betaFraction(a, b, x)) / a
    : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom (any real df > 0). */
export function studentTCdf(t: number, df: number): number {
  if (!(df > 0 && Number.isFinite(df))) {
    throw new RangeError(`Degrees of freedom "${df}" must be a finite number > 0`);
  }
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The quantile t such that P(T <= t) = p, for 0 < p < 1 (bisection on the CDF). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`Probability "${p}" must be between 0 and 1`);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  if (p === 0.5) return 0;
  let low = 0;
  let high = 1;
  while (studentTCdf(high, df) < p) high *= 2;
  // 200 halvings of the bracket reach the last bit of a double.
  for (let i = 0; i < 200 && high - low > 1e-14 * high; i++) {
    const mid = (low + high) / 2;
    if (studentTCdf(mid, df) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** What a set of repeated measurements of one figure says of its mean. */
export interface MeanInterval {
  n: number;
  mean: number;
  /** Sample (n - 1) standard deviation; 0 for one value. */
  std: number;
  min: number;
  max: number;
  /** std / |mean|; 0 when the mean is 0. */
  cv: number;
  /** Standard error of the mean, std / sqrt(n). */
  se: number;
  /** Two-sided critical value of Student's t with n - 1 degrees of freedom; NaN for one value. */
  tCritical: number;
  /** The confidence interval of the mean; both the mean itself for one value. */
  ciLow: number;
  ciHigh: number;
}

/** The mean of `values` (at least one) with its Student's t confidence interval at `level`. */
export function meanInterval(values: readonly number[], level: number): MeanInterval {
  const n = values.length;
  if (n === 0) throw new RangeError("A confidence interval needs at least one value");
  const average = mean(values);
  const std = sampleStdDev(values, average);
  const se = std / Math.sqrt(n);
  const tCritical = n < 2 ? NaN : studentTQuantile(1 - (1 - level) / 2, n - 1);
  const half = n < 2 ? 0 : tCritical * se;
  return {
    n,
    mean: average,
    std,
    min: Math.min(...values),
    max: Math.max(...values),
    cv: average === 0 ? 0 : std / Math.abs(average),
    se,
    tCritical,
    ciLow: average - half,
    ciHigh: average + half,
  };
}

/** Welch's t test of the difference `b - a` of two means, each from its own sample. */
export interface WelchTest {
  difference: number;
  /** Welch-Satterthwaite degrees of freedom. */
  df: number;
  t: number;
  /** Two-sided p-value. */
  p: number;
  /** The confidence interval of the difference at the level asked for. */
  ciLow: number;
  ciHigh: number;
}

/** Welch's test from the two samples' means, sample standard deviations and sizes (each >= 2). */
export function welchTest(
  a: Pick<MeanInterval, "mean" | "std" | "n">,
  b: Pick<MeanInterval, "mean" | "std" | "n">,
  level: number,
): WelchTest {
  if (a.n < 2 || b.n < 2) throw new RangeError("Welch's test needs two values on each side");
  const va = (a.std * a.std) / a.n;
  const vb = (b.std * b.std) / b.n;
  const se = Math.sqrt(va + vb);
  const difference = b.mean - a.mean;
  if (se === 0) {
    // Two samples without spread: equal means are no difference, unequal ones a certain one.
    const p = difference === 0 ? 1 : 0;
    return {
      difference,
      df: a.n + b.n - 2,
      t: difference === 0 ? 0 : Infinity,
      p,
      ciLow: difference,
      ciHigh: difference,
    };
  }
  const df = (va + vb) ** 2 / ((va * va) / (a.n - 1) + (vb * vb) / (b.n - 1));
  const t = difference / se;
  const p = Math.min(1, 2 * (1 - studentTCdf(Math.abs(t), df)));
  const half = studentTQuantile(1 - (1 - level) / 2, df) * se;
  return { difference, df, t, p, ciLow: difference - half, ciHigh: difference + half };
}
