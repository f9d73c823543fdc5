#!/usr/bin/env python3
"""Builds data/humaneval-js/humaneval-js.jsonl.gz, HumanEval in JavaScript in MultiPL-E's format.

Prompts: the JavaScript prompts ICE-Score recorded (data/ice-humaneval/humaneval_js_grade.json.gz, `intent`, MIT),
which are MultiPL-E's (nuprl/MultiPL-E) JavaScript prompts of the time. Tests: HumanEval's Python tests
(data/humaneval/HumanEval.jsonl.gz, MIT) translated the way MultiPL-E translates them: every
`assert candidate(ARGS) == EXPECTED` becomes `assert.deepEqual(candidate(ARGS),EXPECTED);`, with the values computed
in Python and written as JavaScript literals; loops without randomness are unrolled; asserts on variables of the test, on values computed by
other functions and random tests are left out; the two problems whose floating-point tests MultiPL-E rewrote to exact values (2, 4) use those
values. The three problems MultiPL-E leaves out (32, 38, 50) are left out. The data is trusted (HumanEval's own
tests), so it is evaluated in this process.

  python3 scripts/exec-build-humaneval-js.py
"""
import ast
import gzip
import json
import math
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
SKIP = {'32', '38', '50'}
STOP = ['\nfunction ', '\n/*', '\n//', '\nconsole.log']
# MultiPL-E's cleaned tests for the two problems whose HumanEval tests compare floats with a tolerance
OVERRIDES = {
    '2': [((3.5,), 0.5), ((1.25,), 0.25), ((123.0,), 0.0)],
    '4': [(([1.0, 2.0],), 0.5), (([1.0, 2.0, 3.0, 4.0],), 1.0), (([1.0, 2.0, 3.0, 4.0, 5.0],), 1.2)],
}


def js(v):
    if v is None:
        return 'undefined'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return 'Infinity' if v > 0 else '-Infinity'
        if math.isnan(v):
            return 'NaN'
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return '[' + ', '.join(js(x) for x in v) + ']'
    if isinstance(v, dict):
        return '{' + ', '.join(f'{json.dumps(str(k), ensure_ascii=False)}: {js(x)}' for k, x in v.items()) + '}'
    raise TypeError(f'cannot write {type(v).__name__} as JavaScript')


def unwrap_candidate(node):
    """candidate(...) possibly inside tuple()/list(): the call, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == 'candidate':
            return node
        if node.func.id in ('tuple', 'list') and len(node.args) == 1:
            return unwrap_candidate(node.args[0])
    return None


class Collect(ast.NodeTransformer):
    """Rewrites each translatable assert into _emit((args...), expected); drops the others."""

    def visit_Assert(self, node):
        t = node.test
        call, expected = None, None
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Eq, ast.Is)):
            call = unwrap_candidate(t.left)
            expected = t.comparators[0]
            if isinstance(expected, ast.Call) and isinstance(expected.func, ast.Name) and expected.func.id in ('tuple', 'list') and len(expected.args) == 1:
                expected = expected.args[0]
        elif unwrap_candidate(t) is not None:
            call, expected = unwrap_candidate(t), ast.Constant(True)
        elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and unwrap_candidate(t.operand) is not None:
            call, expected = unwrap_candidate(t.operand), ast.Constant(False)
        if call is None:
            return None
        emit = ast.Call(func=ast.Name('_emit', ast.Load()), args=[ast.Tuple(call.args, ast.Load()), expected], keywords=[])
        return ast.copy_location(ast.Expr(emit), node)


def translate(problem):
    tree = ast.parse(problem['test'])
    check = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'check')
    assigned = set()
    body = []
    for st in check.body:
        if isinstance(st, ast.Assert):
            names = {n.id for n in ast.walk(st.test) if isinstance(n, ast.Name)}
            if names & assigned:
                continue  # an assert on variables of the test (MultiPL-E leaves these out)
            calls = {n.func.id for n in ast.walk(st.test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            if calls - {'candidate', 'tuple', 'list'}:
                continue  # an expected value computed by another function (MultiPL-E leaves these out)
            body.append(st)
        elif isinstance(st, ast.For):
            if 'random' in ast.unparse(st):
                continue  # random tests are left out
            body.append(st)
        elif isinstance(st, ast.Assign):
            for target in st.targets:
                assigned |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    check.body = [Collect().visit(st) for st in body]
    check.body = [st for st in check.body if st is not None] or [ast.Pass()]
    ast.fix_missing_locations(tree)
    cases = []
    ns = {'_emit': lambda args, expected: cases.append((args, expected))}
    exec(compile(problem['prompt'] + problem['canonical_solution'], 'solution', 'exec'), ns)
    exec(compile(tree, 'test', 'exec'), ns)
    ns['check'](ns[problem['entry_point']])
    return cases


def main():
    he = {}
    with gzip.open(os.path.join(ROOT, 'data/humaneval/HumanEval.jsonl.gz'), 'rt') as f:
        for line in f:
            p = json.loads(line)
            he[p['task_id'].split('/')[1]] = p
    with gzip.open(os.path.join(ROOT, 'data/ice-humaneval/humaneval_js_grade.json.gz'), 'rt') as f:
        ice = {p['task_id']: p['intent'] for p in json.load(f)}
    rows = []
    for tid in sorted(he, key=int):
        if tid in SKIP:
            continue
        p = he[tid]
        cases = OVERRIDES.get(tid) or translate(p)
        if not cases:
            raise SystemExit(f'HumanEval/{tid}: no test translated')
        entry = p['entry_point']
        lines = [f'  assert.deepEqual(candidate({", ".join(js(a) for a in args)}),{js(expected)});' for args, expected in cases]
        tests = "const assert = require('node:assert');\n\n\nfunction test() {\n  let candidate = " + entry + ';\n' + '\n'.join(lines) + '\n}\n\ntest();'
        prompt = ice[tid]
        if not re.search(r'function\s+' + re.escape(entry) + r'\s*\(', prompt):
            raise SystemExit(f'HumanEval/{tid}: the prompt does not declare {entry}')
        rows.append({'name': f'HumanEval_{tid}_{entry}', 'language': 'js', 'prompt': prompt, 'tests': tests, 'stop_tokens': STOP})
    out = os.path.join(ROOT, 'data/humaneval-js/humaneval-js.jsonl.gz')
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # mtime=0: the same bytes on every build
    with open(out, 'wb') as raw, gzip.GzipFile(fileobj=raw, mode='wb', mtime=0, filename='') as f:
        f.write(''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in rows).encode('utf-8'))
    print(f'{len(rows)} problems -> {out}')


if __name__ == '__main__':
    main()
