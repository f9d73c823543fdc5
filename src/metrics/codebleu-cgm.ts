import { UsageError } from '../errors.js';
import { loadLanguage, type LanguageId } from '../code/languages.js';
import { pythonTokens } from '../compat/python-tokenize.js';
import { SubtreeInterner } from '../code/subtrees.js';
import { parsesAsPython3 } from '../code/python3.js';
import { parseCode, type ParsedCode, type SyntaxNode } from '../code/syntax-tree.js';
import { codeTokens } from '../text/code-tokenizer.js';
import { VERSION } from '../version.js';
import { MEAN_STATS_SIZE, meanScore, type Metric } from './metric.js';

/**
 * The CodeBLEU re-implementation of "Out of the BLEU" (JetBrains-Research/codegen-metrics,
 * metrics_evaluation/metrics/codebleu/codebleu.py), Python only, per segment, best over references:
 * - BLEU: Google NMT `compute_bleu` (no smoothing) on CPython tokenizer tokens (tranX tokens if that fails);
 * - weighted BLEU: unigram recall with weight 5 for "keywords" — Python's keywords plus `dir(__builtins__)`, which
 *   inside an imported module is the builtins *dict*, so the names of dict's attributes (`get`, `items`, ...);
 * - AST match: share of reference subtrees (all nodes) matched one-to-one by candidate subtrees of the same shape
 *   (node types and child counts, recursively);
 * - data flow: the original uses typilus graphs; we substitute next-use edges between occurrences of the same
 *   variable, variables numbered by first occurrence. This part is approximate (see the README's measurement).
 * Weights 0.1/0.1/0.4/0.4; a part that cannot be computed (reference without a data-flow edge or that Python 3
 * does not parse; BLEU and weighted BLEU of a reference without tokens, where the original stops with
 * ZeroDivisionError) is dropped and the remaining weights renormalised. The AST part always counts.
 */
const WEIGHTS = [0.1, 0.1, 0.4, 0.4];
const KEYWORD_WEIGHT = 4;
const DICT_ATTRIBUTES = ['__class__', '__class_getitem__', '__contains__', '__delattr__', '__delitem__', '__dir__', '__doc__', '__eq__', '__format__', '__ge__', '__getattribute__', '__getitem__', '__getstate__', '__gt__', '__hash__', '__init__', '__init_subclass__', '__ior__', '__iter__', '__le__', '__len__', '__lt__', '__ne__', '__new__', '__or__', '__reduce__', '__reduce_ex__', '__repr__', '__reversed__', '__ror__', '__setattr__', '__setitem__', '__sizeof__', '__str__', '__subclasshook__', 'clear', 'copy', 'fromkeys', 'get', 'items', 'keys', 'pop', 'popitem', 'setdefault', 'update', 'values'];
const PY_KEYWORDS = ['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield'];
const KEYWORDS = new Set([...DICT_ATTRIBUTES, ...PY_KEYWORDS]);

/** codegen-metrics `tokenize_builtin`: CPython's token strings without ENCODING/ENDMARKER, else tranX tokens. */
export function builtinTokens(code: string): string[] {
  try {
    return pythonTokens(code)
      .filter((t) => t.type !== 'ENDMARKER')
      .map((t) => t.string);
  } catch {
    return codeTokens(code);
  }
}

/**
 * Google NMT `compute_bleu` for one segment, no smoothing. An empty reference (no tokens at all: empty or blank
 * code) is -1, a part that cannot be computed: the original divides by its length and stops with ZeroDivisionError.
 */
function nmtBleu(reference: string[], translation: string[], maxOrder = 4): number {
  if (reference.length === 0) return -1;
  const grams = (seq: string[]) => {
    const m = new Map<string, number>();
    for (let n = 1; n <= maxOrder; n++) {
      for (let i = 0; i + n <= seq.length; i++) {
        const k = `${n}\u0000${seq.slice(i, i + n).join('\u0001')}`;
        m.set(k, (m.get(k) ?? 0) + 1);
      }
    }
    return m;
  };
  const ref = grams(reference);
  const matches = new Array<number>(maxOrder).fill(0);
  for (const [k, c] of grams(translation)) {
    const r = ref.get(k);
    if (r !== undefined) matches[Number(k.slice(0, k.indexOf('\u0000'))) - 1] += Math.min(c, r);
  }
  const precisions: number[] = [];
  for (let n = 1; n <= maxOrder; n++) {
    const possible = translation.length - n + 1;
    precisions.push(possible > 0 ? matches[n - 1] / possible : 0);
  }
  let geoMean = 0;
  if (Math.min(...precisions) > 0) geoMean = Math.exp(precisions.reduce((s, p) => s + (1 / maxOrder) * Math.log(p), 0));
  const ratio = translation.length / reference.length;
  const bp = ratio > 1 ? 1 : ratio === 0 ? 0 : Math.exp(1 - 1 / ratio);
  return geoMean * bp;
}

function weightedBleu(reference: string[], candidate: string[]): number {
  const weight = (t: string) => 1 + KEYWORD_WEIGHT * (KEYWORDS.has(t) ? 1 : 0);
  const dict = (tokens: string[]) => {
    const d = new Map<string, number>();
    for (const t of tokens) d.set(t, (d.get(t) ?? 0) + weight(t));
    return d;
  };
  const ratio = candidate.length / reference.length;
  const bp = ratio > 1 ? 1 : ratio === 0 ? 0 : Math.exp(1 - 1 / ratio);
  let possible = 0;
  for (const t of reference) possible += weight(t);
  if (possible === 0) return -1; // an empty reference: the original divides by zero, as in nmtBleu
  const r = dict(reference);
  const c = dict(candidate);
  let matches = 0;
  for (const [k, v] of r) matches += Math.min(v, c.get(k) ?? 0);
  return (matches * bp) / possible;
}

interface ShapeNode {
  type: string;
  children: ShapeNode[];
}

/**
 * The tree as the 2021 tree-sitter-python grammar the original used (commit 9e53981) shaped it: a string was
 * `"` + escape sequences + `"`; the 0.23 grammar has string_start / string_content / string_end instead.
 */
function legacyShape(root: SyntaxNode): ShapeNode {
  const convert = (n: SyntaxNode): ShapeNode => ({ type: n.type === 'string_start' || n.type === 'string_end' ? '"' : n.type, children: [] });
  const top = convert(root);
  const stack: [SyntaxNode, ShapeNode][] = [[root, top]];
  while (stack.length) {
    const [n, s] = stack.pop()!;
    const kids: SyntaxNode[] = [];
    for (const c of n.children) {
      if (n.type === 'string' && c.type === 'string_content') kids.push(...c.children.filter((g) => g.named));
      else kids.push(c);
    }
    for (const c of kids) {
      const cs = convert(c);
      s.children.push(cs);
      stack.push([c, cs]);
    }
  }
  return top;
}

/** Shape ids of all nodes (type and children, recursively), for the greedy one-to-one subtree matching. */
function shapeCounts(syntaxRoot: SyntaxNode, interner: SubtreeInterner): Map<number, number> {
  const root = legacyShape(syntaxRoot);
  const id = new Map<ShapeNode, number>();
  const order: ShapeNode[] = [];
  const stack = [root];
  while (stack.length) {
    const n = stack.pop()!;
    order.push(n);
    for (const c of n.children) stack.push(c);
  }
  const counts = new Map<number, number>();
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    const shape = interner.id(`${n.type}(${n.children.map((c) => id.get(c)).join(',')})`);
    id.set(n, shape);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  return counts;
}

/** Next-use edges between consecutive occurrences of a variable, as (variable number) per edge. */
function nextUseEdges(parsed: ParsedCode): Map<number, number> | null {
  const numbers = new Map<string, number>();
  const last = new Set<string>();
  const edges = new Map<number, number>();
  const stack = [parsed.root];
  const occurrences: SyntaxNode[] = [];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'identifier' && !(n.parent?.type === 'attribute' && n.field === 'attribute')) occurrences.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  for (const n of occurrences) {
    const name = parsed.source.slice(n.startIndex, n.endIndex);
    if (!numbers.has(name)) numbers.set(name, numbers.size);
    const k = numbers.get(name)!;
    if (last.has(name)) edges.set(k, (edges.get(k) ?? 0) + 1);
    last.add(name);
  }
  let total = 0;
  for (const c of edges.values()) total += c;
  return total > 0 ? edges : null;
}

export class CodeBleuCgm implements Metric<string[]> {
  readonly name = 'CodeBLEU-CGM';
  readonly statsSize = MEAN_STATS_SIZE;
  readonly language: LanguageId = 'python';
  private readonly interner = new SubtreeInterner();
  private loaded = false;

  constructor(readonly spec = 'codebleu-cgm') {}

  async ready(): Promise<void> {
    await loadLanguage('python');
    this.loaded = true;
  }

  signature(nrefs: number | 'var'): string {
    return `nrefs:${nrefs}|lang:python|weights:0.1/0.1/0.4/0.4|dataflow:next-use-approx|impl:codegen-metrics-b630570|version:${VERSION}`;
  }

  /** The four parts for one pair (-1: cannot be computed) and the renormalised score, on the 0-1 scale. */
  parts(candidate: string, reference: string): { parts: number[]; score: number } {
    if (!this.loaded) throw new UsageError('codebleu-cgm: call and await metric.ready() before scoring (scoreSystems does it for you)');
    const refTokens = builtinTokens(reference);
    const candTokens = builtinTokens(candidate);
    const refTree = parseCode('python', reference);
    const candTree = parseCode('python', candidate);
    const refShapes = shapeCounts(refTree.root, this.interner);
    const candShapes = shapeCounts(candTree.root, this.interner);
    let common = 0;
    let refTotal = 0;
    for (const [k, c] of refShapes) {
      refTotal += c;
      common += Math.min(c, candShapes.get(k) ?? 0);
    }
    // The original's order of checks: reference must parse (else -1), then the candidate (else 0), then the
    // reference must have next-use edges (else -1), then the candidate (else 0).
    let dataflow: number;
    if (!parsesAsPython3(refTree)) dataflow = -1;
    else if (!parsesAsPython3(candTree)) dataflow = 0;
    else {
      const refEdges = nextUseEdges(refTree);
      const candEdges = nextUseEdges(candTree);
      if (!refEdges) dataflow = -1;
      else if (!candEdges) dataflow = 0;
      else {
        let matched = 0;
        let total = 0;
        for (const [k, c] of refEdges) {
          total += c;
          matched += Math.min(c, candEdges.get(k) ?? 0);
        }
        dataflow = matched / total;
      }
    }
    const parts = [nmtBleu(refTokens, candTokens), weightedBleu(refTokens, candTokens), common / refTotal, dataflow];
    let score = 0;
    let norm = 0;
    parts.forEach((p, i) => {
      if (p !== -1) {
        score += p * WEIGHTS[i];
        norm += WEIGHTS[i];
      }
    });
    return { parts, score: score / norm };
  }

  prepareReferences(refs: readonly string[]): string[] {
    return refs.slice();
  }

  segmentStatistics(hyp: string, refs: string[], out: Float64Array, offset: number): void {
    let best = 0;
    for (const ref of refs) best = Math.max(best, this.parts(hyp, ref).score);
    out[offset] = 100 * best;
    out[offset + 1] = 1;
  }

  scoreFromStatistics(stats: ArrayLike<number>): number {
    return meanScore(stats);
  }
}
