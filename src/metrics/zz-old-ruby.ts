import { graphEditDistance, type LabeledGraph } from '../code/graph-edit-distance.js';
import { loadLanguage, type LanguageId } from '../code/languages.js';
import { labeledSyntaxTree, programDependenceGraph } from '../code/pdg.js';
import { parsesAsPython3 } from '../code/python3.js';
import { parseCode, textOf } from '../code/syntax-tree.js';
import { treeEditDistance, treeSize, type LabeledTree } from '../code/tree-edit-distance.js';
import { codeTokens } from '../text/code-tokenizer.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';

/**
 * RUBY (Tran et al. 2019), on tree-sitter for every supported language:
 * - graph level: when both programs parse and yield a program dependence graph, 1 - GED / (|V1|+|V2|+|E1|+|E2|),
 *   GED from a deterministic bipartite assignment (see graph-edit-distance.ts), a statement substitution costing
 *   the normalised token edit distance of the two statements;
 * - tree level: when both parse but a PDG has no dependence edge, 1 - TED / (|T1|+|T2|) with the exact
 *   Zhang-Shasha tree edit distance;
 * - string level: when either side does not parse (or the trees are too large for an exact TED: |T1|*|T2| above
 *   25 million), 1 - Levenshtein(tokens) / max(len), tokens from the "Out of the BLEU" code tokenizer, 1 when both
 *   are empty (as JetBrains-Research/codegen-metrics computes it).
 * With several references the best one counts. Statistics: [score, 1, graph, tree, string] so the corpus score is
 * the mean and the level counts add up.
 */
export type RubyLevel = 'graph' | 'tree' | 'string';
const LEVELS: RubyLevel[] = ['graph', 'tree', 'string'];
const MAX_TED_CELLS = 25_000_000;

export function tokenLevenshtein(a: readonly string[], b: readonly string[]): number {
  if (a.length < b.length) [a, b] = [b, a];
  let prev = new Int32Array(b.length + 1);
  let cur = new Int32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    const ai = a[i - 1];
    for (let j = 1; j <= b.length; j++) {
      const sub = prev[j - 1] + (ai === b[j - 1] ? 0 : 1);
      const del = prev[j] + 1;
      const ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/** codegen-metrics `string_similarity`. */
export function stringSimilarity(sample: string, reference: string): number {
  const a = codeTokens(sample);
  const b = codeTokens(reference);
  if (a.length === 0 && b.length === 0) return 1;
  return 1 - tokenLevenshtein(a, b) / Math.max(a.length, b.length);
}

interface Analysed {
  parses: boolean;
  graph: LabeledGraph | null;
  tree: LabeledTree | null;
  treeSize: number;
}

function statementCost(a: string, b: string): number {
  if (a === b) return 0;
  const x = a.split('\u0001');
  const y = b.split('\u0001');
  return tokenLevenshtein(x, y) / Math.max(x.length, y.length, 1);
}

export interface RubyResult {
  score: number;
  level: RubyLevel;
}

export class Ruby implements Metric<string[]> {
  readonly name = 'RUBY';
  readonly statsSize = 5;
  private readonly cache = new Map<string, Analysed>();
  private loaded = false;

  constructor(
    readonly language: LanguageId,
    readonly spec = `ruby:lang=${language}`,
  ) {}

  async ready(): Promise<void> {
    await loadLanguage(this.language);
    this.loaded = true;
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|lang:${this.language}|levels:graph>tree>string|ged:bipartite|ted:zhang-shasha|tok:code|version:${VERSION}`;
  }

  private analyse(code: string): Analysed {
    let hit = this.cache.get(code);
    if (hit) return hit;
    if (!this.loaded) throw new Error('RUBY: call and await ready() before scoring');
    const parsed = parseCode(this.language, code);
    if (parsed.hasError || code.trim() === '' || (this.language === 'python' && !parsesAsPython3(parsed))) hit = { parses: false, graph: null, tree: null, treeSize: 0 };
    else {
      const pdg = programDependenceGraph(parsed, (n) => codeTokens(textOf(parsed, n)).join('\u0001'));
      const tree = labeledSyntaxTree(parsed);
      hit = { parses: true, graph: pdg.dependenceEdges > 0 ? pdg.graph : null, tree, treeSize: treeSize(tree) };
    }
    if (this.cache.size >= 1 << 15) this.cache.clear();
    this.cache.set(code, hit);
    return hit;
  }

  /** RUBY of one sample against one reference, with the level used. */
  compare(sample: string, reference: string): RubyResult {
    const a = this.analyse(sample);
    const b = this.analyse(reference);
    if (a.parses && b.parses) {
      if (a.graph && b.graph) {
        const total = a.graph.nodes.length + b.graph.nodes.length + a.graph.edges.length + b.graph.edges.length;
        return { score: 1 - graphEditDistance(a.graph, b.graph, statementCost) / total, level: 'graph' };
      }
      if (a.treeSize * b.treeSize <= MAX_TED_CELLS) {
        return { score: 1 - treeEditDistance(a.tree!, b.tree!) / (a.treeSize + b.treeSize), level: 'tree' };
      }
    }
    return { score: stringSimilarity(sample, reference), level: 'string' };
  }

  prepareReferences(refs: readonly string[]): string[] {
    return refs.slice();
  }

  segmentStatistics(hyp: string, refs: string[], out: Float64Array, offset: number): void {
    let best: RubyResult | null = null;
    for (const ref of refs) {
      const r = this.compare(hyp, ref);
      if (best === null || r.score > best.score) best = r;
    }
    out[offset] = 100 * (best?.score ?? 0);
    out[offset + 1] = 1;
    out[offset + 2 + LEVELS.indexOf(best?.level ?? 'string')] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return stats[1] > 0 ? stats[0] / stats[1] : 0;
  }

  /** How many segments were scored at each level. */
  summary(stats: ArrayLike<number>): Record<RubyLevel, number> {
    return { graph: stats[2], tree: stats[3], string: stats[4] };
  }

  /** The level of one segment's statistics row. */
  segmentLabel(row: ArrayLike<number>): RubyLevel {
    return row[2] ? 'graph' : row[3] ? 'tree' : 'string';
  }
}
