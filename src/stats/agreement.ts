import { NumpyGenerator } from '../compat/numpy-random.js';
import { averageRanks } from './correlation.js';
import { normalQuantile } from './intervals.js';
import { percentile } from './meta.js';

/**
 * How far a judge (or a metric) agrees with a truth: Cohen's kappa (= scikit-learn `cohen_kappa_score`), AUROC
 * (= scikit-learn `roc_auc_score`) with a bootstrap interval, the confusion matrix at a threshold or at the best
 * Youden threshold, and the Rogan-Gladen correction of a judge-estimated pass rate.
 */

export type KappaWeights = 'none' | 'linear' | 'quadratic';

/**
 * Cohen's kappa of two raters, scikit-learn `cohen_kappa_score(y1, y2, weights)`: the labels are the sorted union
 * of both raters' values and the linear/quadratic weights use their positions in that order (|i - j|, (i - j)²),
 * as scikit-learn does, not the values themselves. NaN when the expected disagreement is 0 (one label only).
 */
export function cohenKappa(a: ArrayLike<number>, b: ArrayLike<number>, weights: KappaWeights = 'none'): number {
  const labels = [...new Set([...Array.from(a), ...Array.from(b)])].sort((x, y) => x - y);
  const k = labels.length;
  const index = new Map(labels.map((l, i) => [l, i]));
  const confusion = new Float64Array(k * k);
  for (let i = 0; i < a.length; i++) confusion[index.get(a[i])! * k + index.get(b[i])!]++;
  const sum0 = new Float64Array(k); // column sums
  const sum1 = new Float64Array(k); // row sums
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      sum0[j] += confusion[i * k + j];
      sum1[i] += confusion[i * k + j];
    }
  }
  const total = sum0.reduce((s, x) => s + x, 0);
  let observed = 0;
  let expected = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const w = weights === 'none' ? (i === j ? 0 : 1) : weights === 'linear' ? Math.abs(i - j) : (i - j) ** 2;
      observed += w * confusion[i * k + j];
      expected += (w * sum0[i] * sum1[j]) / total; // np.outer(sum0, sum1) / sum
    }
  }
  return expected === 0 ? NaN : 1 - observed / expected;
}

/**
 * Area under the ROC curve of `scores` against 0/1 `labels` (ties count one half), equal to scikit-learn
 * `roc_auc_score`: the Mann-Whitney statistic from average ranks. NaN with one class only.
 */
export function auroc(labels: ArrayLike<number>, scores: ArrayLike<number>): number {
  let positives = 0;
  for (let i = 0; i < labels.length; i++) if (labels[i] === 1) positives++;
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) return NaN;
  const ranks = averageRanks(scores);
  let sum = 0;
  for (let i = 0; i < labels.length; i++) if (labels[i] === 1) sum += ranks[i];
  return (sum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/**
 * AUROC with a percentile bootstrap 95% interval: `samples` resamples of the rows (NumPy default_rng(seed).choice,
 * as every codegauge bootstrap), the 2.5th and 97.5th percentiles of the resampled AUROCs (resamples with one class
 * only are skipped). No interval with `samples` 0.
 */
export function aurocWithCi(labels: ArrayLike<number>, scores: ArrayLike<number>, samples = 1000, seed = 12345): { value: number; ci: [number, number] | null } {
  const value = auroc(labels, scores);
  if (samples <= 0 || Number.isNaN(value)) return { value, ci: null };
  const n = labels.length;
  const draws = new NumpyGenerator(seed).choice(n, samples * n);
  const values = new Float64Array(samples);
  const l = new Float64Array(n);
  const s = new Float64Array(n);
  for (let r = 0; r < samples; r++) {
    for (let i = 0; i < n; i++) {
      const j = draws[r * n + i];
      l[i] = labels[j];
      s[i] = scores[j];
    }
    values[r] = auroc(l, s);
  }
  return { value, ci: [percentile(values, 2.5), percentile(values, 97.5)] };
}

export interface Confusion {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

/** Confusion matrix when `score >= threshold` predicts a positive (label 1). */
export function confusionAt(labels: ArrayLike<number>, scores: ArrayLike<number>, threshold: number): Confusion {
  const c: Confusion = { tp: 0, fp: 0, tn: 0, fn: 0 };
  for (let i = 0; i < labels.length; i++) {
    const predicted = scores[i] >= threshold;
    if (labels[i] === 1) predicted ? c.tp++ : c.fn++;
    else predicted ? c.fp++ : c.tn++;
  }
  return c;
}

/**
 * The threshold with the largest Youden index J = sensitivity + specificity - 1 among the observed scores
 * (`score >= threshold` is positive); among equal J the highest threshold, as the first maximum along
 * scikit-learn's `roc_curve`.
 */
export function youdenThreshold(labels: ArrayLike<number>, scores: ArrayLike<number>): number {
  const candidates = [...new Set(Array.from(scores))].sort((a, b) => b - a);
  let best = candidates[0];
  let bestJ = -Infinity;
  for (const t of candidates) {
    const c = confusionAt(labels, scores, t);
    const j = c.tp / (c.tp + c.fn) + c.tn / (c.tn + c.fp) - 1;
    if (j > bestJ) {
      bestJ = j;
      best = t;
    }
  }
  return best;
}

const ratio = (a: number, b: number) => (b === 0 ? null : a / b);

/** Sensitivity, specificity, precision and F1 of a confusion matrix; null where a denominator is 0. */
export function confusionRates(c: Confusion): { sensitivity: number | null; specificity: number | null; precision: number | null; f1: number | null } {
  return {
    sensitivity: ratio(c.tp, c.tp + c.fn),
    specificity: ratio(c.tn, c.tn + c.fp),
    precision: ratio(c.tp, c.tp + c.fp),
    f1: ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn),
  };
}

export interface RoganGladen {
  /** Corrected prevalence, clipped to [0, 1]; null when sensitivity + specificity <= 1 (the judge is no better than chance). */
  value: number | null;
  /** 95% interval (delta method), clipped to [0, 1]. */
  ci: [number, number] | null;
  /** The judge's raw positive rate. */
  observed: number;
}

/**
 * Rogan-Gladen correction of an apparent prevalence (a judge's pass rate) by the judge's sensitivity and
 * specificity measured on a labelled subset: π = (p + Sp - 1) / (Se + Sp - 1). Its 95% interval is the delta
 * method with the three estimates independent (Greiner & Gardner 2000; Reiczigel, Földi & Ózsvári 2010):
 * Var(π) = [p(1-p)/n + π² Se(1-Se)/n₊ + (1-π)² Sp(1-Sp)/n₋] / (Se + Sp - 1)², with n₊ and n₋ the labelled
 * positives and negatives. All on the 0-1 scale.
 */
export function roganGladen(input: { positives: number; n: number; sensitivity: number; specificity: number; labelledPositives: number; labelledNegatives: number }, alpha = 0.05): RoganGladen {
  const p = input.positives / input.n;
  const { sensitivity: se, specificity: sp } = input;
  const youden = se + sp - 1;
  if (!(youden > 0)) return { value: null, ci: null, observed: p };
  const raw = (p + sp - 1) / youden;
  const value = Math.min(1, Math.max(0, raw));
  const variance =
    ((p * (1 - p)) / input.n + (raw ** 2 * se * (1 - se)) / input.labelledPositives + ((1 - raw) ** 2 * sp * (1 - sp)) / input.labelledNegatives) / youden ** 2;
  const half = normalQuantile(1 - alpha / 2) * Math.sqrt(variance);
  return { value, ci: [Math.max(0, raw - half), Math.min(1, raw + half)], observed: p };
}
