import { decompose, type CodeUnit } from '../code/decompose.js';
import { InputError } from '../errors.js';
import { resolveLanguage } from '../code/languages.js';
import type { ChatMessage } from '../llm/types.js';
import { askGrade, askStructured, boundedString, GRADE_SCHEMA, objectSchema, promptHash, type Judge, type JudgeContext, type JudgeOutcome, type JudgeSample } from './judge.js';
import { extractJsonObject, readEntities } from './replies.js';
import { fenced, UNTRUSTED_NOTICE } from './untrusted.js';

/**
 * DSA-CQE (Xu et al. 2024), decompositional semantic analysis: each program is split along its syntax tree
 * (src/code/decompose.ts); every sub-code is analysed with the descriptions of the entities it uses but does not
 * define, retrieved from a Semantic Storage, and the analysis updates the storage ("dp: array of zeros" becomes
 * "best value per weight"). The reference's and the generated program's semantics are then compared into explicit
 * differences, and the differences are graded 0-4. Simplified DSA-CQE analyses each program in one step instead.
 *
 * As the paper describes it (`storageUpdate: 'separate'`, the default), the storage update is its own request after
 * each unit's analysis: the analysis says what the unit computes, the update what its entities hold afterwards.
 * `storageUpdate: 'merged'` asks for both in one request per unit, which saves a request per unit.
 *
 * Requests per sample, for U_r units in the reference and U_g in the generated program:
 *   separate: 2·U_r + 2·U_g + 4;   merged: U_r + U_g + 4;   dsa-simple: 4
 * (each program's semantics, the comparison and the grade are one request each; identical requests, such as the
 * reference's analysis for every system, come from the cache).
 *
 * Every request asks for a JSON schema (strict: entities are a list of {name, description} because strict schemas
 * allow no free-form maps); the readers also take the older {"<name>": "<description>"} form.
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

// Every string and array is bounded (see judge.ts): a unit's entities are the few it defines or changes; a program's
// semantics "a few sentences"; the differences of two programs a short list of one-sentence items.
const ENTITIES = {
  type: 'array',
  maxItems: 8,
  items: { type: 'object', properties: { name: boundedString(60), description: boundedString(200) }, required: ['name', 'description'], additionalProperties: false },
};
export const UNIT_SCHEMA = objectSchema('unit_analysis', { summary: boundedString(500), entities: ENTITIES });
export const UNIT_SUMMARY_SCHEMA = objectSchema('unit_analysis', { summary: boundedString(500) });
export const STORAGE_UPDATE_SCHEMA = objectSchema('storage_update', { entities: ENTITIES });
export const SEMANTICS_SCHEMA = objectSchema('program_semantics', { semantics: boundedString(1200) });
export const DIFFERENCES_SCHEMA = objectSchema('differences', { differences: { type: 'array', maxItems: 10, items: boundedString(250) } });

const ENTITIES_FORMAT = '[{"name": "<name>", "description": "<what the entity holds or does after this part>"}]';
const entitiesScope = (unit: CodeUnit) =>
  `only the variables, parameters, functions or classes this part defines or changes${unit.defines.length ? ` (such as ${unit.defines.join(', ')})` : ''}`;

export type StorageUpdate = 'separate' | 'merged';

function entityLines(entries: [string, string][]): string {
  return entries.length ? entries.map(([n, d]) => `- ${n}: ${d}`).join('\n') : '(none)';
}

/**
 * The analysis of one unit. `merged`: its summary and the storage update in one reply; `separate`: the summary
 * only, the update following in `storageUpdateMessages`.
 */
export function unitMessages(unit: CodeUnit, known: [string, string][], language: string, mode: StorageUpdate = 'merged'): ChatMessage[] {
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
        mode === 'merged'
          ? `Reply with {"summary": "<what this part computes, in one or two sentences>", "entities": ${ENTITIES_FORMAT}}, listing in "entities" ${entitiesScope(unit)}.`
          : 'Reply with {"summary": "<what this part computes, in one or two sentences>"}.',
      ].join('\n'),
    },
  ];
}

/** The semantic-storage update after a unit's analysis (DSA-CQE's own step). */
export function storageUpdateMessages(unit: CodeUnit, known: [string, string][], language: string, summary: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: [
        `Update the semantic storage after one part of a ${language} program: a ${unit.kind} unit (lines ${unit.startLine}-${unit.endLine}).`,
        '',
        'What the storage held about the entities it uses before this part:',
        entityLines(known),
        '',
        'The part:',
        fenced(unit.code, language),
        '',
        `What the part computes: ${summary}`,
        '',
        `Reply with {"entities": ${ENTITIES_FORMAT}}, listing ${entitiesScope(unit)}, described as they are after this part.`,
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
  return { summary: json.summary, entities: readEntities(json.entities) ?? {} };
};
const readUpdate = (reply: string) => {
  const json = extractJsonObject(reply);
  return json ? readEntities(json.entities) : null;
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
  /** dsa: the storage update as its own request after each unit's analysis (default) or in the same request. */
  storageUpdate?: StorageUpdate;
}

export class DsaJudge implements Judge {
  readonly method: string;
  readonly promptVersion: string;
  readonly settings: string;

  constructor(private readonly options: DsaOptions = {}) {
    this.method = options.simplified ? 'dsa-simple' : 'dsa';
    const unit: CodeUnit = { kind: 'for', nodeType: 'N', code: 'C', startLine: 1, endLine: 1, depth: 0, defines: ['x'], references: ['y'] };
    const mode = options.storageUpdate ?? 'separate';
    const unitPrompts = options.simplified ? [] : mode === 'merged' ? [unitMessages(unit, [['y', 'Y']], 'L', 'merged')] : [unitMessages(unit, [['y', 'Y']], 'L', 'separate'), storageUpdateMessages(unit, [['y', 'Y']], 'L', 'S')];
    const schemas = [UNIT_SCHEMA, UNIT_SUMMARY_SCHEMA, STORAGE_UPDATE_SCHEMA, SEMANTICS_SCHEMA, DIFFERENCES_SCHEMA, GRADE_SCHEMA];
    this.promptVersion = promptHash(...unitPrompts, programMessages('C', 'L', [], ['S']), comparisonMessages('R', 'G', 'P'), scoringMessages(['D'], 'P'), schemas);
    this.settings = options.simplified ? 'decompose:no' : `decompose:ast|depth:${options.maxDepth ?? 4}|calls:statements|storage:${mode}`;
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
        parts = []; // an unknown language, or a parse past its time limit: analyse the program as a whole
      }
      const separate = (this.options.storageUpdate ?? 'separate') === 'separate';
      for (const unit of parts) {
        const known = storage.get(unit.references.filter((r) => !unit.defines.includes(r)));
        const result = await askStructured(ctx, unitMessages(unit, known, language, separate ? 'separate' : 'merged'), readSummary, replies, {
          json: true,
          schema: separate ? UNIT_SUMMARY_SCHEMA : UNIT_SCHEMA,
        });
        // Separate: the update is its own request, seeing the unit, what the storage held and the analysis.
        const entities = separate
          ? await askStructured(ctx, storageUpdateMessages(unit, storage.get(unit.references), language, result.summary), readUpdate, replies, { json: true, schema: STORAGE_UPDATE_SCHEMA })
          : result.entities;
        storage.update(entities);
        summaries.push(`${unit.kind} (lines ${unit.startLine}-${unit.endLine}): ${result.summary}`);
        units.push({ kind: unit.kind, lines: [unit.startLine, unit.endLine], code: unit.code, retrieved: Object.fromEntries(known), summary: result.summary, update: entities, storage: storage.snapshot() });
      }
    }
    const semantics = await askStructured(ctx, programMessages(code, language, Object.entries(storage.snapshot()), summaries), readField('semantics'), replies, { json: true, schema: SEMANTICS_SCHEMA });
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
      const differences = await askStructured(ctx, comparisonMessages(reference.semantics, generated.semantics, sample.problem), readDifferences, replies, { json: true, schema: DIFFERENCES_SCHEMA });
      trace.differences = differences;
      const reading = await askGrade(ctx, scoringMessages(differences, sample.problem), replies, { json: true, schema: GRADE_SCHEMA });
      if (reading.distribution) trace.grade_distribution = reading.distribution;
      return { grade: reading.grade, textGrade: reading.text, gradeSource: reading.source, trace };
    } catch (e) {
      // A usage problem (a prompt the model's context cannot hold) stops the run; everything answered is cached.
      if (e instanceof InputError) throw e;
      return { grade: null, error: (e as Error).message, trace };
    }
  }
}
