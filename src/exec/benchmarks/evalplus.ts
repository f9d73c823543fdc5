import { InputError } from '../../errors.js';
import type { Problem } from './types.js';
import { rawField } from './rows.js';

/** EvalPlus' per-input time limit, max(EVALPLUS_MIN_LIMIT_S, EVALPLUS_LIMIT_FACTOR x the reference's time) (its defaults). */
export const EVALPLUS_MIN_LIMIT_S = 4;
export const EVALPLUS_LIMIT_FACTOR = 4;
/**
 * EvalPlus caps each of a sample's two runs (base inputs, plus inputs) at 60 s; the sample runs both in one, with the
 * reference's outputs computed alongside (EvalPlus computes them beforehand), so it gets both caps and 60 s more:
 * 180 s (or --timeout, if longer). A per-input limit ends a slow sample long before.
 */
export const EVALPLUS_SAMPLE_TIMEOUT_MS = 180_000;
/** EvalPlus' address-space limit of a sample (EVALPLUS_MAX_MEMORY_BYTES' default): some canonical solutions need it. */
export const EVALPLUS_MEMORY_MB = 4096;
/** MBPP+ tasks whose expected value is only "not None" (EvalPlus' MBPP_OUTPUT_NOT_NONE_TASKS). */
const NOT_NONE = ['check_str', 'text_match_three', 'text_starta_endb'];

/**
 * EvalPlus' HumanEval+ and MBPP+ (Liu et al. 2023, evalplus/humanevalplus_release, mbppplus_release) as published:
 * `task_id, prompt, canonical_solution, entry_point, base_input, plus_input, atol` per line. A sample passes only if
 * it passes every base input and every plus input, as EvalPlus counts "plus". The expected outputs are not in the
 * file: EvalPlus computes them by running the canonical solution on each input, and so does the harness here, in its
 * own process (the candidate is called across the boundary with the same input, deep-copied). What EvalPlus' own
 * `evaluate` does is followed: its time limit per input (4 s, or 4x the reference's time; CPU seconds here), its 60 s
 * cap on each of the base and plus runs (one 180 s limit here, the reference's time included), its 4 GB, MBPP+'s
 * per-task conversion of JSON inputs (tuples, sets, complex numbers), its comparison (exact, else
 * `np.allclose(rtol=1e-07)` within `atol` for floats, 1e-6 when the file gives 0), its set-equal and not-None tasks,
 * `find_zero` checked by the polynomial, and the special oracles of `are_equivalent`, `sum_div`, `surface_Area` and
 * `digit_distance_nums`. The inputs reach Python as the file's own JSON text: integers past 2^53 and bare Infinity
 * stay what they are.
 */
export function isEvalPlusRow(row: Record<string, unknown>): boolean {
  return 'base_input' in row && 'plus_input' in row && 'entry_point' in row;
}

const str = (row: Record<string, unknown>, name: string, path: string, line: number): string => {
  const v = row[name];
  if (typeof v !== 'string') throw new InputError(`field "${name}" must be a string`, path, line);
  return v;
};

export function evalplusProblem(row: Record<string, unknown>, raw: string | undefined, path: string, line: number, key: (id: string) => string): Problem & { plus: { base: number; plus: number; atol: number } } {
  const taskId = String(row.task_id ?? '');
  if (!taskId) throw new InputError('missing field "task_id"', path, line);
  const entry = str(row, 'entry_point', path, line);
  const prompt = str(row, 'prompt', path, line);
  const canonical = str(row, 'canonical_solution', path, line);
  // MBPP+ v0.2.0 writes "no plus inputs" as {} (Mbpp/793)
  const none = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
  const base = Array.isArray(row.base_input) ? row.base_input.length : none(row.base_input) ? 0 : NaN;
  const plus = Array.isArray(row.plus_input) ? row.plus_input.length : none(row.plus_input) ? 0 : NaN;
  if (!Number.isFinite(base) || !Number.isFinite(plus)) throw new InputError('fields "base_input" and "plus_input" must be lists of argument lists', path, line);
  const atol = row.atol === undefined || row.atol === null ? 0 : Number(row.atol);
  if (!Number.isFinite(atol) || atol < 0) throw new InputError('field "atol" must be a number >= 0', path, line);
  // the inputs as written (JSON text Python reads), else as JavaScript read them
  const baseText = base === 0 ? '[]' : ((raw && rawField(raw, 'base_input')) ?? JSON.stringify(row.base_input));
  const plusText = plus === 0 ? '[]' : ((raw && rawField(raw, 'plus_input')) ?? JSON.stringify(row.plus_input));
  return {
    taskId,
    key: key(taskId),
    language: 'python',
    format: 'human-eval',
    line,
    prompt,
    tests: evalplusTests(taskId, entry, atol, baseText, plusText, prompt + canonical),
    entryPoint: entry,
    canonicalSolution: canonical,
    plus: { base, plus, atol },
    timeoutMs: EVALPLUS_SAMPLE_TIMEOUT_MS,
    memoryMb: EVALPLUS_MEMORY_MB,
    ...(taskId.startsWith('Mbpp/') && NOT_NONE.includes(entry) ? { returns: 'not-none' as const } : {}),
  };
}

/** A Python string literal of `text` (a JSON string literal is one). */
const py = (text: string) => JSON.stringify(text);

/**
 * The tests of an EvalPlus task: `check(candidate)` over every base and plus input, comparing with the canonical
 * solution's output on the same input. Written as Python, so that it runs as every other human-eval test does
 * (split at the boundary, in one process, or in pyodide).
 */
export function evalplusTests(taskId: string, entry: string, atol: number, baseText: string, plusText: string, reference: string): string {
  return String.raw`import copy as _cg_copy, json as _cg_json, math as _cg_math, time as _cg_time

# codegauge: EvalPlus' base and plus inputs of ${taskId}, the canonical solution's outputs as the expected ones
_CG_TASK = ${py(taskId)}
_CG_ENTRY = ${py(entry)}
_CG_ATOL = ${atol === 0 ? '0.0' : String(atol)}
# EvalPlus' time limit of each input: max(4 s, 4x the reference's time) (its defaults), counted in CPU seconds here,
# so that a busy machine does not turn a pass into a timeout
_CG_MIN_LIMIT = ${EVALPLUS_MIN_LIMIT_S.toFixed(1)}
_CG_LIMIT_FACTOR = ${EVALPLUS_LIMIT_FACTOR.toFixed(1)}
_CG_BASE_INPUTS = _cg_json.loads(${py(baseText)})
_CG_INPUTS = _CG_BASE_INPUTS + _cg_json.loads(${py(plusText)})
_CG_REFERENCE = ${py(reference)}

_CG_MBPP = _CG_TASK.startswith('Mbpp/')
_CG_NUMBER = int(_CG_TASK.split('/')[-1]) if _CG_TASK.split('/')[-1].isdigit() else -1
_CG_SET_EQ = {'similar_elements', 'find_char_long', 'common_in_nested_lists', 'extract_singly', 'larg_nnum', 'intersection_array', 'find_dissimilar', 'Diff'}
_CG_NOT_NONE = {${NOT_NONE.map((n) => `'${n}'`).join(', ')}}


def _cg_deep_tuple(x):
    return tuple(_cg_deep_tuple(i) for i in x) if isinstance(x, list) else x


def _cg_deserialize(args):
    # MBPP+'s JSON has no tuples, sets or complex numbers: its inputs are converted per task, as EvalPlus does
    if not _CG_MBPP:
        return args
    n = _CG_NUMBER
    a = list(args)
    if n in (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630, 726, 740, 744, 809):
        a = [tuple(x) if isinstance(x, list) else x for x in a]
    elif n in (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780):
        a = [[tuple(i) if isinstance(i, list) else i for i in x] if isinstance(x, list) else x for x in a]
    elif n in (75, 413, 444, 753):
        a[0] = [tuple(i) if isinstance(i, list) else i for i in a[0]]
    elif n in (106, 750):
        a[1] = tuple(a[1])
    elif n == 115:
        a[0] = [set(i) if isinstance(i, list) and i else {} for i in a[0]]
    elif n == 124:
        a = [float(a[0]), complex(*a[1]) if isinstance(a[1], list) else complex(a[1])]
    elif n in (250, 307, 405, 446, 617, 720, 763, 808):
        a[0] = tuple(a[0])
    elif n in (259, 401, 445):
        a = [tuple(tuple(i) if isinstance(i, list) else i for i in x) if isinstance(x, list) else x for x in a]
    elif n == 278:
        a = [tuple(tuple(i) if isinstance(i, list) else i for i in x) if isinstance(x, list) else x for x in a]
    elif n == 722:
        a[0] = {k: tuple(v) if isinstance(v, list) else v for k, v in a[0].items()}
    elif n == 252:
        a[0] = complex(*a[0]) if isinstance(a[0], list) else complex(a[0])
    elif n in (580, 615, 791):
        a = [_cg_deep_tuple(x) for x in a]
    return a


def _cg_floats(x):
    return isinstance(x, float) or (isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(i, float) for i in x))


def _cg_flat(x):
    if isinstance(x, (list, tuple)):
        out = []
        for i in x:
            out.extend(_cg_flat(i))
        return out
    return [x]


def _cg_allclose(out, exp, atol):
    # NumPy's allclose(out, exp, rtol=1e-07, atol=atol): |out - exp| <= atol + rtol * |exp|, element by element
    a, b = _cg_flat(out), _cg_flat(exp)
    if len(a) != len(b) and len(a) != 1 and len(b) != 1:
        return False
    if len(a) == 1:
        a = a * len(b)
    if len(b) == 1:
        b = b * len(a)
    for x, y in zip(a, b):
        if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
            return False
        if _cg_math.isnan(x) or _cg_math.isnan(y):
            return False
        if _cg_math.isinf(x) or _cg_math.isinf(y):
            if x != y:
                return False
            continue
        if abs(x - y) > atol + 1e-07 * abs(y):
            return False
    return True


def _cg_surface_area(base_edge, height):
    # EvalPlus' oracle of Mbpp/581 (height as the perpendicular distance from the base to the apex)
    slant = _cg_math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 4 * (base_edge * slant) / 2)


def _cg_digit_distance(num1, num2):
    # EvalPlus' oracle of Mbpp/558 (the shorter number padded with zeros)
    a, b = str(num1), str(num2)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width)))


def _cg_same(out, exp, args, reference_ns):
    if _CG_MBPP and _CG_ENTRY in _CG_NOT_NONE:
        expected = exp is not None
        return out == expected if isinstance(out, bool) else expected == (out is not None)
    if _CG_ENTRY == 'find_zero' and not _CG_MBPP:
        return abs(reference_ns['poly'](*args[:1], out)) <= (_CG_ATOL or 1e-6)
    try:
        exact = out == exp
        if _CG_MBPP and _CG_ENTRY in _CG_SET_EQ:
            exact = set(out) == set(exp)
    except Exception:
        exact = False
    if exact is True:
        return True
    if _CG_MBPP and _CG_ENTRY == 'surface_Area':
        try:
            if abs(out - _cg_surface_area(*args)) <= _CG_ATOL:
                return True
        except Exception:
            pass
    if _CG_MBPP and _CG_ENTRY == 'digit_distance_nums':
        try:
            if out == _cg_digit_distance(*args):
                return True
        except Exception:
            pass
    if _CG_MBPP and _CG_ENTRY == 'are_equivalent':
        return True
    if _CG_MBPP and _CG_ENTRY == 'sum_div' and out == 0:
        return True
    atol = _CG_ATOL
    if atol == 0 and _cg_floats(exp):
        atol = 1e-6
    if atol != 0:
        if type(out) is not type(exp):
            return False
        if isinstance(exp, (list, tuple)) and len(out) != len(exp):
            return False
        return _cg_allclose(out, exp, atol)
    return False


# the function under test before check() below is defined: Mbpp/56's is itself named check
_cg_candidate = globals().get(_CG_ENTRY)


def check(candidate):
    if candidate is check and _cg_candidate is not None:
        candidate = _cg_candidate
    # across the boundary: an input whose right answer is larger than a reply can be (Mbpp/255 has one of 1.7 million
    # tuples) makes the whole task run in one process, decided by the reference's answer, never by the candidate's
    must_cross = globals().get('__codegauge_must_cross__')
    reference_ns = {'__name__': 'evalplus_reference'}
    exec(compile(_CG_REFERENCE, 'reference.py', 'exec'), reference_ns)
    reference = reference_ns[_CG_ENTRY]
    # across the boundary the candidate's process measures its own CPU seconds per call; in one process, this one does
    call_cpu = globals().get('__codegauge_call_cpu__')
    for i, raw in enumerate(_CG_INPUTS):
        args = _cg_deserialize(raw)
        given = _cg_copy.deepcopy(args)
        started = _cg_time.process_time()
        exp = reference(*given)
        limit = max(_CG_MIN_LIMIT, _CG_LIMIT_FACTOR * (_cg_time.process_time() - started))
        if must_cross is not None:
            must_cross(exp, 'input %d: the right answer is larger than a reply across the boundary can be' % (i + 1))
        given = _cg_copy.deepcopy(args)
        started = _cg_time.process_time()
        out = candidate(*given)
        spent = call_cpu() if call_cpu is not None else _cg_time.process_time() - started
        where = 'input %d of %d (%s)' % (i + 1, len(_CG_INPUTS), 'base' if i < len(_CG_BASE_INPUTS) else 'plus')
        assert spent <= limit, "%s: took %.2f s of CPU, over EvalPlus' limit of %.2f s (4 s, or 4x the reference's time)" % (where, spent, limit)
        assert _cg_same(out, exp, args, reference_ns), '%s: expected %r, got %r' % (where, exp, out)
`;
}
