import { UsageError } from '../errors.js';
import { readFileSync } from 'node:fs';
import { CodeAnalysisCache } from '../code/analysis-cache.js';
import { loadLanguage, type LanguageId } from '../code/languages.js';
import { fsum, pySplit, pyStrip } from '../compat/python-strings.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';
import { maxMerge, wordNgramCounts } from './ngrams.js';

/**
 * CodeBLEU as the `codebleu` package 0.7.1 (k4black, after CodeXGLUE) computes it:
 *   alpha * ngram_match + beta * weighted_ngram_match + gamma * syntax_match + theta * (dataflow_match or 1)
 * - n-gram match: NLTK-style corpus BLEU on whitespace tokens with smoothing method1 (epsilon 0.1);
 * - weighted n-gram match: its *recall*-based form, unigrams weighted 1 for keywords and 0.2 otherwise, summed
 *   over references, with its brevity penalty computed against a reference "length" of 2 (the length of each
 *   [tokens, weights] pair, a quirk we keep because it is part of every published CodeBLEU number);
 * - syntax match: share of reference subtrees (after comment removal) that also occur in the hypothesis;
 * - data-flow match: share of normalised reference data-flow edges found in the hypothesis (multiset).
 * The `dataflow or 1` rule: a data-flow score of 0 (no reference edges anywhere, or none matched) counts as 1.
 * All four components are corpus-level ratios, so the statistics below are their numerators and denominators.
 */
const ORDER = 4;
const EPSILON = 0.1;

const KEYWORD_FILES: Record<LanguageId, string> = {
  python: 'python', java: 'java', javascript: 'javascript', typescript: 'typescript', tsx: 'typescript',
  c_sharp: 'c_sharp', c: 'c', cpp: 'cpp', go: 'go', rust: 'rust', php: 'php', ruby: 'ruby',
};

function loadKeywords(language: LanguageId): Set<string> {
  const url = new URL(`../../data/codebleu-keywords/${KEYWORD_FILES[language]}.txt`, import.meta.url);
  return new Set(readFileSync(url, 'utf8').split('\n').map((l) => pyStrip(l)));
}

export interface CodeBleuWeights {
  ngram: number;
  weightedNgram: number;
  syntax: number;
  dataflow: number;
}

// Statistics layout.
const NG = 0; // ngram: num[4], den[4], hyp len, ref len
const WNG = NG + 2 * ORDER + 2; // weighted: num[4], den[4], hyp len, ref len
const SYN = WNG + 2 * ORDER + 2; // syntax: matched, total
const DF = SYN + 2; // dataflow: matched, total
const SIZE = DF + 2;

interface CodeBleuRef {
  tokens: string[][];
  ngrams: Map<string, number>[];
  codes: string[];
}

/** codebleu `bleu.corpus_bleu` / `weighted_ngram_match.corpus_bleu` from summed statistics. */
function smoothedBleu(stats: ArrayLike<number>, offset: number): number {
  const hypLen = stats[offset + 2 * ORDER];
  const refLen = stats[offset + 2 * ORDER + 1];
  if (stats[offset] === 0) return 0;
  const bp = hypLen > refLen ? 1 : hypLen === 0 ? 0 : Math.exp(1 - refLen / hypLen);
  const logs: number[] = [];
  for (let n = 0; n < ORDER; n++) {
    const num = stats[offset + n] === 0 ? stats[offset + n] + EPSILON : stats[offset + n];
    logs.push(0.25 * Math.log(num / stats[offset + ORDER + n]));
  }
  return bp * Math.exp(fsum(logs));
}

export class CodeBleu implements Metric<CodeBleuRef> {
  readonly name = 'CodeBLEU';
  readonly statsSize = SIZE;
  readonly weights: CodeBleuWeights;
  private keywords: Set<string> | null = null;
  private analyses: CodeAnalysisCache | null = null;

  constructor(
    readonly language: LanguageId,
    weights: Partial<CodeBleuWeights> = {},
    readonly spec = `codebleu:lang=${language}`,
  ) {
    this.weights = { ngram: 0.25, weightedNgram: 0.25, syntax: 0.25, dataflow: 0.25, ...weights };
  }

  async ready(): Promise<void> {
    await loadLanguage(this.language);
    this.keywords ??= loadKeywords(this.language);
    this.analyses ??= new CodeAnalysisCache(this.language);
  }

  private get cache(): CodeAnalysisCache {
    if (!this.analyses) throw new UsageError('CodeBLEU: call and await metric.ready() before scoring (scoreSystems does it for you)');
    return this.analyses;
  }

  signature(nrefs: number | 'var'): string {
    const w = this.weights;
    return `nrefs:${nrefs}|lang:${this.language}|weights:${w.ngram}/${w.weightedNgram}/${w.syntax}/${w.dataflow}|tok:split|smooth:method1|dataflow:or-1|impl:codebleu-0.7.1|version:${VERSION}`;
  }

  prepareReferences(refs: readonly string[]): CodeBleuRef {
    const codes = refs.map((r) => pyStrip(r));
    const tokens = codes.map((c) => pySplit(c));
    const ngrams = wordNgramCounts([], ORDER);
    for (const t of tokens) {
      const counts = wordNgramCounts(t, ORDER);
      for (let n = 0; n < ORDER; n++) maxMerge(ngrams[n], counts[n]);
    }
    return { tokens, ngrams, codes };
  }

  segmentStatistics(hypText: string, refs: CodeBleuRef, out: Float64Array, o: number): void {
    const hypCode = pyStrip(hypText);
    const hyp = pySplit(hypCode);
    const hypCounts = wordNgramCounts(hyp, ORDER);
    const keywords = this.keywords!;
    // n-gram precision, clipped by the maximum count over references.
    for (let n = 0; n < ORDER; n++) {
      let matched = 0;
      let total = 0;
      for (const [k, c] of hypCounts[n]) {
        total += c;
        matched += Math.min(c, refs.ngrams[n].get(k) ?? 0);
      }
      out[o + NG + n] = matched;
      out[o + NG + ORDER + n] = Math.max(1, total);
    }
    out[o + NG + 2 * ORDER] = hyp.length;
    let closest = Infinity;
    for (const t of refs.tokens) {
      const d = Math.abs(t.length - hyp.length);
      const best = Math.abs(closest - hyp.length);
      if (d < best || (d === best && t.length < closest)) closest = t.length;
    }
    out[o + NG + 2 * ORDER + 1] = closest;
    // Weighted n-gram recall, summed over references.
    for (let n = 0; n < ORDER; n++) {
      let num = 0;
      let den = 0;
      for (const t of refs.tokens) {
        const refCounts = wordNgramCounts(t, n + 1, n + 1)[0];
        let clipped = 0;
        let all = 0;
        for (const [k, c] of refCounts) {
          const m = Math.min(c, hypCounts[n].get(k) ?? 0);
          const w = n === 0 ? (keywords.has(k) ? 1 : 0.2) : 1;
          clipped += m * w;
          all += c * w;
        }
        num += clipped;
        den += Math.max(1, all);
      }
      out[o + WNG + n] = num;
      out[o + WNG + ORDER + n] = den;
    }
    out[o + WNG + 2 * ORDER] = hyp.length;
    out[o + WNG + 2 * ORDER + 1] = 2; // len([tokens, weights]), see the class comment
    // Syntax and data flow, against each reference in turn.
    const h = this.cache.analyse(hypCode);
    let synMatch = 0;
    let synTotal = 0;
    let dfMatch = 0;
    let dfTotal = 0;
    for (const code of refs.codes) {
      const r = this.cache.analyse(code);
      for (const id of r.subtrees) if (h.subtreeSet.has(id)) synMatch++;
      synTotal += r.subtrees.length;
      if (r.dataflow.length > 0) {
        dfTotal += r.dataflow.length;
        const remaining = new Map<string, number>();
        for (const e of h.dataflow) remaining.set(e, (remaining.get(e) ?? 0) + 1);
        for (const e of r.dataflow) {
          const left = remaining.get(e) ?? 0;
          if (left > 0) {
            dfMatch++;
            remaining.set(e, left - 1);
          }
        }
      }
    }
    out[o + SYN] = synMatch;
    out[o + SYN + 1] = synTotal;
    out[o + DF] = dfMatch;
    out[o + DF + 1] = dfTotal;
  }

  /** The four components on the 0-1 scale (data flow before the `or 1` rule). */
  componentsFromStatistics(stats: ArrayLike<number>): { ngram: number; weighted_ngram: number; syntax: number; dataflow: number } {
    return {
      ngram: smoothedBleu(stats, NG),
      weighted_ngram: smoothedBleu(stats, WNG),
      syntax: stats[SYN + 1] > 0 ? stats[SYN] / stats[SYN + 1] : 0,
      dataflow: stats[DF + 1] > 0 ? stats[DF] / stats[DF + 1] : 0,
    };
  }

  /** CodeBLEU on the package's 0-1 scale. */
  fraction(stats: ArrayLike<number>): number {
    const c = this.componentsFromStatistics(stats);
    const w = this.weights;
    return w.ngram * c.ngram + w.weightedNgram * c.weighted_ngram + w.syntax * c.syntax + w.dataflow * (c.dataflow || 1);
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return 100 * this.fraction(stats);
  }

  components(stats: ArrayLike<number>): Record<string, number> {
    const c = this.componentsFromStatistics(stats);
    return { ngram: 100 * c.ngram, weighted_ngram: 100 * c.weighted_ngram, syntax: 100 * c.syntax, dataflow: 100 * c.dataflow };
  }
}
