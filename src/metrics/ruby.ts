import { graphEditDistance, type LabeledGraph } from '../code/graph-edit-distance.js';
import { loadLanguage, type LanguageId } from '../code/languages.js';
import { labeledSyntaxTree, programDependenceGraph } from '../code/pdg.js';
import { parsesAsPython3 } from '../code/python3.js';
import { PARSE_TIME_LIMIT_MS, ParseBoundError, parseCode, textOf, type SyntaxNode } from '../code/syntax-tree.js';
import { treeEditDistance, treeSize, zhangShashaWork, type LabeledTree } from '../code/tree-edit-distance.js';
import { codeTokens } from '../text/code-tokenizer.js';
import { tokenIds } from '../text/token-ids.js';
import { UsageError, WorkBoundError } from '../errors.js';
import { BoundedCache } from './bounded-cache.js';
import { VERSION } from '../version.js';
import type { Metric } from './metric.js';

/**
 * RUBY (Tran et al. 2019), on tree-sitter for every supported language:
 * - graph level: when both programs parse and yield a program dependence graph, 1 - GED / (|V1|+|V2|+|E1|+|E2|),
 *   GED from a deterministic bipartite assignment (see graph-edit-distance.ts), a statement substitution costing
 *   the normalised token edit distance of the two statements;
 * - tree level: when both parse but a PDG has no dependence edge, 1 - TED / (|T1|+|T2|) with the exact
 *   Zhang-Shasha tree edit distance;
 * - string level: when either side does not parse, 1 - Levenshtein(tokens) / max(len), tokens from the "Out of the
 *   BLEU" code tokenizer, 1 when both are empty (as JetBrains-Research/codegen-metrics computes it).
 * Bounded work: a comparison whose graph or tree level would exceed the size and work bounds below falls down
 * RUBY's own ladder (graph -> tree -> string) instead, and says so: the segment label becomes e.g.
 * "string (graph, tree over budget)" and the corpus details count `graph_over_budget` / `tree_over_budget`.
 * The bounds count operations, never time, so scores are the same on every machine; the one exception is
 * tree-sitter's parse time limit (PARSE_TIME_LIMIT_MS), reached only by long broken code, where both levels count
 * as over budget. The string level's bound has nothing below it: past it a WorkBoundError.
 * With several references the best one counts. Statistics: [score, 1, graph, tree, string, graph over budget,
 * tree over budget] so the corpus score is the mean and the level counts add up.
 */
export type RubyLevel = 'graph' | 'tree' | 'string';
const LEVELS: RubyLevel[] = ['graph', 'tree', 'string'];
/**
 * Size and work bounds per comparison (sample, reference); a level is used when its size is within the bound and
 * its work (counted in elementary steps before starting) within the budget. Each budget is about half a second of
 * work, 15x more than any pair of the CoNaLa, HearthStone and HumanEval data needs.
 */
export const RUBY_BOUNDS = {
  /** |V1|+|V2|: the bipartite GED solves a dense (|V1|+|V2|)^2 assignment in cubic time. */
  graphVertices: 400,
  /**
   * Graph work: (|V1|+|V2|)^3 for the assignment plus the statement substitution costs, a token edit distance for
   * every vertex pair, sum|x| * sum|y| cells in all. Statements contain those nested in them, so the labels grow
   * with nesting depth and the cells with its fourth power (200 nested functions: 1.5e10 cells, 47 s).
   */
  graphWork: 50_000_000,
  /** |T1|*|T2|: the Zhang-Shasha tree-distance table (8 bytes a cell); larger pairs always used the string level. */
  treeCells: 25_000_000,
  /** Tree work: the exact count of forest-distance cells, zhangShashaWork(T1) * zhangShashaWork(T2). */
  treeWork: 50_000_000,
  /**
   * Characters of one program's PDG vertex labels (each statement's text, nested statements included): tokenising
   * them sets up the graph level, and grows with the square of nesting depth (5,000 nested `if`s: 1.4e8
   * characters, 23 s and 1.7 GB). Past it the graph level is over budget without tokenising them.
   */
  graphLabelChars: 2_000_000,
  /**
   * |tokens1|*|tokens2|: the string level's edit-distance table, the last rung of the ladder (about 1 s here).
   * Past it there is nothing left to fall back to: a WorkBoundError names the segment.
   */
  stringCells: 2 ** 28,
} as const;

export function tokenLevenshtein(a: readonly string[], b: readonly string[]): number {
  if (a.length < b.length) [a, b] = [b, a];
  // Integer ids: comparing two strings can mean comparing their characters, an id never does.
  const ids = new Map<string, number>();
  const x = tokenIds(a, ids);
  const y = tokenIds(b, ids);
  let prev = new Int32Array(y.length + 1);
  let cur = new Int32Array(y.length + 1);
  for (let j = 0; j <= y.length; j++) prev[j] = j;
  for (let i = 1; i <= x.length; i++) {
    cur[0] = i;
    const xi = x[i - 1];
    for (let j = 1; j <= y.length; j++) {
      const sub = prev[j - 1] + (xi === y[j - 1] ? 0 : 1);
      const del = prev[j] + 1;
      const ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
    }
    [prev, cur] = [cur, prev];
  }
  return prev[y.length];
}

/** codegen-metrics `string_similarity`. */
export function stringSimilarity(sample: string, reference: string): number {
  const a = codeTokens(sample);
  const b = codeTokens(reference);
  if (a.length === 0 && b.length === 0) return 1;
  // A common prefix and suffix cost no edits (exact), so the bound is on what is left.
  let lo = 0;
  let aHi = a.length;
  let bHi = b.length;
  while (lo < aHi && lo < bHi && a[lo] === b[lo]) lo++;
  while (aHi > lo && bHi > lo && a[aHi - 1] === b[bHi - 1]) aHi--, bHi--;
  if ((aHi - lo) * (bHi - lo) > RUBY_BOUNDS.stringCells) {
    throw new WorkBoundError(`the string level's edit distance of ${aHi - lo} x ${bHi - lo} tokens (after a common prefix and suffix) exceeds the bound of ${RUBY_BOUNDS.stringCells} cells (split such long programs)`);
  }
  return 1 - tokenLevenshtein(a.slice(lo, aHi), b.slice(lo, bHi)) / Math.max(a.length, b.length);
}

interface Analysed {
  parses: boolean;
  /** The parse ran past its time limit: graph and tree levels over budget. */
  overParse?: boolean;
  graph: LabeledGraph | null;
  /** The tokens of each PDG vertex label. */
  labelTokens: Map<string, string[]>;
  /** Sum over the PDG vertices of their label's token count (the graph level's work factor). */
  labelWork: number;
  tree: LabeledTree | null;
  treeSize: number;
  /** This tree's factor of the Zhang-Shasha work. */
  treeWork: number;
}

/** Statement substitution cost: the normalised token edit distance of two vertex labels (tokens split once). */
function statementCost(a: Analysed, b: Analysed): (x: string, y: string) => number {
  return (x, y) => {
    if (x === y) return 0;
    const xs = a.labelTokens.get(x)!;
    const ys = b.labelTokens.get(y)!;
    return tokenLevenshtein(xs, ys) / Math.max(xs.length, ys.length, 1);
  };
}

export interface RubyResult {
  score: number;
  level: RubyLevel;
  /** Higher levels that applied but were skipped because they exceeded their size or work bound. */
  overBudget: RubyLevel[];
}

/** Size and work (elementary steps) of the graph level for two PDGs. */
function graphWork(a: Analysed, b: Analysed): { vertices: number; work: number } {
  const vertices = a.graph!.nodes.length + b.graph!.nodes.length;
  return { vertices, work: a.labelWork * b.labelWork + vertices ** 3 };
}

export class Ruby implements Metric<string[]> {
  readonly name = 'RUBY';
  readonly statsSize = 7;
  private readonly cache = new BoundedCache<Analysed>();
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
    const b = RUBY_BOUNDS;
    return `nrefs:${nrefs}|lang:${this.language}|levels:graph>tree>string|ged:bipartite|ted:zhang-shasha|bounds:graph-${b.graphVertices}v-${b.graphWork / 1e6}Mops-${b.graphLabelChars / 1e6}Mchars,tree-${b.treeCells / 1e6}Mcells-${b.treeWork / 1e6}Mops,string-${b.stringCells}cells,parse-${PARSE_TIME_LIMIT_MS / 1000}s|tok:code|version:${VERSION}`;
  }

  private analyse(code: string): Analysed {
    let hit = this.cache.get(code);
    if (hit) return hit;
    if (!this.loaded) throw new UsageError('RUBY: call and await metric.ready() before scoring (scoreSystems does it for you)');
    let parsed;
    try {
      parsed = parseCode(this.language, code);
    } catch (e) {
      if (!(e instanceof ParseBoundError)) throw e;
      // Over the parse time limit: whether the graph and tree levels applied is unknown; both count as over budget.
      hit = { parses: true, overParse: true, graph: null, labelTokens: new Map(), labelWork: Infinity, tree: null, treeSize: Infinity, treeWork: Infinity };
      this.cache.set(code, hit);
      return hit;
    }
    if (parsed.hasError || code.trim() === '' || (this.language === 'python' && !parsesAsPython3(parsed))) hit = { parses: false, graph: null, labelTokens: new Map(), labelWork: 0, tree: null, treeSize: 0, treeWork: 0 };
    else {
      // The graph first with its vertices unlabelled: their labels are only tokenised when within graphLabelChars.
      const vertices: SyntaxNode[] = [];
      let labelChars = 0;
      const pdg = programDependenceGraph(parsed, (n) => {
        vertices.push(n);
        labelChars += n.endIndex - n.startIndex;
        return '';
      });
      const tree = labeledSyntaxTree(parsed);
      let labelTokens = new Map<string, string[]>();
      let labelWork = Infinity;
      if (labelChars <= RUBY_BOUNDS.graphLabelChars) {
        pdg.graph.nodes = vertices.map((n) => codeTokens(textOf(parsed, n)).join('\u0001'));
        labelTokens = new Map(pdg.graph.nodes.map((label) => [label, label.split('\u0001')]));
        labelWork = 0;
        for (const label of pdg.graph.nodes) labelWork += labelTokens.get(label)!.length;
      }
      const graph = pdg.dependenceEdges > 0 ? pdg.graph : null;
      hit = { parses: true, graph, labelTokens, labelWork, tree, treeSize: treeSize(tree), treeWork: zhangShashaWork(tree) };
    }
    this.cache.set(code, hit);
    return hit;
  }

  /** The work each level would take for this pair (graph: null when it does not apply), before any bound. */
  work(sample: string, reference: string): { graph: { vertices: number; work: number } | null; tree: { cells: number; work: number } | null } {
    const a = this.analyse(sample);
    const b = this.analyse(reference);
    if (!a.parses || !b.parses) return { graph: null, tree: null };
    return { graph: a.graph && b.graph ? graphWork(a, b) : null, tree: { cells: a.treeSize * b.treeSize, work: a.treeWork * b.treeWork } };
  }

  /** RUBY of one sample against one reference, with the level used (and the levels skipped for their bounds). */
  compare(sample: string, reference: string): RubyResult {
    const a = this.analyse(sample);
    const b = this.analyse(reference);
    const overBudget: RubyLevel[] = [];
    if (a.overParse || b.overParse) overBudget.push('graph', 'tree');
    else if (a.parses && b.parses) {
      if (a.graph && b.graph) {
        const { vertices, work } = graphWork(a, b);
        if (vertices <= RUBY_BOUNDS.graphVertices && work <= RUBY_BOUNDS.graphWork) {
          const total = vertices + a.graph.edges.length + b.graph.edges.length;
          return { score: 1 - graphEditDistance(a.graph, b.graph, statementCost(a, b)) / total, level: 'graph', overBudget };
        }
        overBudget.push('graph');
      }
      // Pairs whose trees are too large were always scored at the string level; only the work bound is new.
      if (a.treeSize * b.treeSize <= RUBY_BOUNDS.treeCells) {
        if (a.treeWork * b.treeWork <= RUBY_BOUNDS.treeWork) {
          return { score: 1 - treeEditDistance(a.tree!, b.tree!) / (a.treeSize + b.treeSize), level: 'tree', overBudget };
        }
        overBudget.push('tree');
      }
    }
    return { score: stringSimilarity(sample, reference), level: 'string', overBudget };
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
    for (const level of best?.overBudget ?? []) out[offset + 5 + LEVELS.indexOf(level)] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return stats[1] > 0 ? stats[0] / stats[1] : 0;
  }

  /** How many segments were scored at each level, and (only when some were) how many skipped a level for its bound. */
  summary(stats: ArrayLike<number>): Record<string, number> {
    const counts: Record<string, number> = { graph: stats[2], tree: stats[3], string: stats[4] };
    if (stats[5]) counts.graph_over_budget = stats[5];
    if (stats[6]) counts.tree_over_budget = stats[6];
    return counts;
  }

  /** The level of one segment's statistics row, e.g. "tree", or "string (graph, tree over budget)". */
  segmentLabel(row: ArrayLike<number>): string {
    const level = row[2] ? 'graph' : row[3] ? 'tree' : 'string';
    const skipped = LEVELS.filter((_, i) => i < 2 && row[5 + i]);
    return skipped.length ? `${level} (${skipped.join(', ')} over budget)` : level;
  }
}
