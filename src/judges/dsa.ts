import { decompose, type CodeUnit } from '../code/decompose.js';
import { resolveLanguage } from '../code/languages.js';
import type { ChatMessage } from '../llm/types.js';
import { askStructured, promptHash, type Judge, type JudgeContext, type JudgeOutcome, type JudgeSample } from './judge.js';
import { extractJsonObject, parseScore } from './replies.js';
import { fenced, UNTRUSTED_NOTICE } from './untrusted.js';

/**
 * DSA-CQE (Xu et al. 2024), decompositional semantic analysis: each program is split along its syntax tree
 * (src/code/decompose.ts); every sub-code is analysed with the descriptions of the entities it uses but does not
 * define, retrieved from a Semantic Storage, and the analysis updates the storage ("dp: array of zeros" becomes
 * "best value per weight"). The reference's and the generated program's semantics are then compared into explicit
 * differences, and the differences are graded 0-4. Simplified DSA-CQE analyses each program in one step instead.
 *
 * One request per sub-code returns both its analysis and the storage updates (JSON), which halves the requests of
 * an analyse-then-update pair without changing what the next prompts see.
 */
const SYSTEM = `You are an expert program analyst. ${UNTRUSTED_NOTICE} Reply with one JSON object only.`;

export class SemanticStorage {
  private readonly entries = new Map<string, string>();

  get(names: readonly string[]): [string, string][] {
    return names.filter((n) => this.entries.has(n)).map((n) => [n, this.entries.get(n)!]);
  }

  update(changes: Record<string, string>): void {
    for (const [name, description] of Object.entries(changes)) if (name.trim() && description.trim()) this.entries.set(name.trim(), description.trim());
  }

  snapshot(): Record<string, string> {
    return Object.fromEntries(this.entries);
  }
}

function entityLines(entries: [string, string][]): string {
  return entries.length ? entries.map(([n, d]) => `- ${n}: ${d}`).join('\n') : '(none)';
}

export function unitMessages(unit: CodeUnit, known: [string, string][], language: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        `Analyse one part of a ${language} program: a ${unit.kind} unit (lines ${unit.startLine}-${unit.endLine}).`,
        '',
        'What earlier parts established about the entities it uses:',
        entityLines(known),
        '',
        'The part:',
        fenced(unit.code, language),
        '',
        'Reply with {"summary": "<what this part computes, in one or two sentences>", "entities": {"<name>": "<what the entity holds or does after this part>"}}, ' +
          `listing in "entities" only the variables, parameters, functions or classes this part defines or changes${unit.defines.length ? ` (such as ${unit.defines.join(', ')})` : ''}.`,
      ].join('\n'),
    },
  ];
}

export function programMessages(code: string, language: string, known: [string, string][], summaries: string[]): ChatMessage[] {
  const context = summaries.length ? ['', 'Analyses of its parts, inner parts first:', ...summaries.map((s, i) => `${i + 1}. ${s}`), '', 'Entities:', entityLines(known)] : [];
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        `Describe the semantics of this ${language} program: what it computes from its inputs, its outputs and side effects, and how it treats edge cases.`,
        ...context,
        '',
        'The program:',
        fenced(code, language),
        '',
        'Reply with {"semantics": "<a precise description, a few sentences>"}.',
      ].join('\n'),
    },
  ];
}

export function comparisonMessages(reference: string, generated: string, problem?: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        problem?.trim() ? `Problem:\n${problem.trim()}\n` : '',
        `Semantics of the reference program:\n${reference}`,
        '',
        `Semantics of the generated program:\n${generated}`,
        '',
        'List every behavioural difference of the generated program from the reference (missing or extra behaviour, different results, ' +
          'edge cases, errors). Ignore differences of naming or style. Reply with {"differences": ["<difference>", ...]} (an empty list when they behave the same).',
      ].join('\n'),
    },
  ];
}

export function scoringMessages(differences: string[], problem?: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        problem?.trim() ? `Problem:\n${problem.trim()}\n` : '',
        'Differences of a generated program from a correct reference program:',
        differences.length ? differences.map((d) => `- ${d}`).join('\n') : '(none)',
        '',
        'Grade the generated program\'s functional correctness from these differences: 4 = behaves as the reference, 3 = differs only in rare edge cases, ' +
          '2 = wrong in several cases, 1 = mostly wrong, 0 = unrelated or broken. Reply with {"score": <0-4>, "reason": "<one sentence>"}.',
      ].join('\n'),
    },
  ];
}

const readSummary = (reply: string) => {
  const json = extractJsonObject(reply);
  if (!json || typeof json.summary !== 'string') return null;
  const entities: Record<string, string> = {};
  if (json.entities && typeof json.entities === 'object') {
    for (const [k, v] of Object.entries(json.entities as Record<string, unknown>)) if (typeof v === 'string') entities[k] = v;
  }
  return { summary: json.summary, entities };
};
const readField = (field: string) => (reply: string) => {
  const json = extractJsonObject(reply);
  return json && typeof json[field] === 'string' && (json[field] as string).trim() ? (json[field] as string) : null;
};
const readDifferences = (reply: string) => {
  const json = extractJsonObject(reply);
  if (!json || !Array.isArray(json.differences)) return null;
  return json.differences.map((d) => (typeof d === 'string' ? d : JSON.stringify(d)));
};

export interface DsaOptions {
  /** `dsa` (decompositional) or `dsa-simple` (one-step analysis of each program). */
  simplified?: boolean;
  maxDepth?: number;
}

export class DsaJudge implements Judge {
  readonly method: string;
  readonly promptVersion: string;
  readonly settings: string;

  constructor(private readonly options: DsaOptions = {}) {
    this.method = options.simplified ? 'dsa-simple' : 'dsa';
    const unit: CodeUnit = { kind: 'for', nodeType: 'N', code: 'C', startLine: 1, endLine: 1, depth: 0, defines: ['x'], references: ['y'] };
    this.promptVersion = promptHash(unitMessages(unit, [['y', 'Y']], 'L'), programMessages('C', 'L', [], ['S']), comparisonMessages('R', 'G', 'P'), scoringMessages(['D'], 'P'));
    this.settings = options.simplified ? 'decompose:no' : `decompose:ast|depth:${options.maxDepth ?? 4}|calls:statements`;
  }

  /** The semantics of one program, with the decomposition trace. */
  async analyse(code: string, language: string, ctx: JudgeContext, replies: string[]): Promise<{ semantics: string; units: unknown[] }> {
    const storage = new SemanticStorage();
    const summaries: string[] = [];
    const units: unknown[] = [];
    if (!this.options.simplified) {
      let parts: CodeUnit[] = [];
      try {
        parts = await decompose(resolveLanguage(language), code, { maxDepth: this.options.maxDepth });
      } catch {
        parts = []; // an unknown language: analyse the program as a whole
      }
      for (const unit of parts) {
        const known = storage.get(unit.references.filter((r) => !unit.defines.includes(r)));
        const result = await askStructured(ctx, unitMessages(unit, known, language), readSummary, replies, { json: true });
        storage.update(result.entities);
        summaries.push(`${unit.kind} (lines ${unit.startLine}-${unit.endLine}): ${result.summary}`);
        units.push({ kind: unit.kind, lines: [unit.startLine, unit.endLine], code: unit.code, retrieved: Object.fromEntries(known), summary: result.summary, storage: storage.snapshot() });
      }
    }
    const semantics = await askStructured(ctx, programMessages(code, language, Object.entries(storage.snapshot()), summaries), readField('semantics'), replies, { json: true });
    return { semantics, units };
  }

  async judge(sample: JudgeSample, ctx: JudgeContext): Promise<JudgeOutcome> {
    const replies: string[] = [];
    const trace: Record<string, unknown> = { replies };
    try {
      if (sample.reference === undefined) throw new Error('DSA-CQE needs the reference code');
      const reference = await this.analyse(sample.reference, sample.language, ctx, replies);
      trace.reference = reference;
      const generated = await this.analyse(sample.code, sample.language, ctx, replies);
      trace.generated = generated;
      const differences = await askStructured(ctx, comparisonMessages(reference.semantics, generated.semantics, sample.problem), readDifferences, replies, { json: true });
      trace.differences = differences;
      const grade = await askStructured(ctx, scoringMessages(differences, sample.problem), (reply) => parseScore(reply, { max: 4 }), replies, { json: true });
      return { grade, trace };
    } catch (e) {
      return { grade: null, error: (e as Error).message, trace };
    }
  }
}
