#!/usr/bin/python3
"""Writes test/vectors/codebleu-dataflow-depth.json: codebleu 0.7.1's scores around the depth at which CPython's
recursion limit (1000) empties its data-flow graph, for a chain of `+` and for nested calls (Python code).
calc_codebleu is called from this script's top level, as a user script would.

    PYTHONPATH=/tmp/refs/site /usr/bin/python3 scripts/vectors-dataflow-depth.py > test/vectors/codebleu-dataflow-depth.json
(codebleu and py-tree-sitter set up as in bench/README.md)
"""
import json
import logging
import sys

from codebleu import calc_codebleu

logging.disable(logging.WARNING)  # codebleu warns when a reference has no data flow


def chain(n):
    return 'x = ' + ' + '.join('a%d' % i for i in range(n)) + ';\n'


def calls(m):
    return 'y = ' + 'f(' * m + 'x' + ')' * m + '\n'


cases = []
for shape, make, sizes, tail in [('chain', chain, [990, 991, 1500], 'y = x;\n'), ('calls', calls, [494, 495], 'z = y\n')]:
    for n in sizes:
        hyp = make(n)
        ref = hyp + tail
        r = calc_codebleu([ref], [hyp], 'python')
        cases.append({'shape': shape, 'size': n, 'dataflow_match_score': r['dataflow_match_score'], 'codebleu': r['codebleu']})
json.dump({'python': sys.version.split()[0], 'cases': cases}, sys.stdout, indent=1)
print()
