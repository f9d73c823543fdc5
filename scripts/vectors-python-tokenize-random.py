#!/usr/bin/python3
"""Writes test/vectors/python-tokenize-random.json: CPython 3.11's pure-Python tokenizer on 2,000 random sources
made of quotes, backslashes, string prefixes, comments, CR and LF (the corners of single-line and continued
strings), and five long lines of unended strings and CR runs, as token (type, string, start, end) lists or the message of the TokenError or IndentationError it raised.

    /usr/bin/python3 scripts/vectors-python-tokenize-random.py > test/vectors/python-tokenize-random.json
"""
import io
import json
import random
import sys
import tokenize

assert sys.version_info[:2] == (3, 11), 'the vectors are of CPython 3.11 (3.12 tokenizes in C and raises instead)'

random.seed(20261130)
PIECES = ["'", '"', '\\', 'b', 'r', 'x', ' ', '\n', '\r', '#', '(', ')', 'f', "'''", '"""', 'u', 'rb', '\t', 'R', 'B', 'ab']
cases = []
for k in range(2000):
    source = ''.join(random.choice(PIECES) for _ in range(random.randint(1, 60)))
    try:
        tokens = [[tokenize.tok_name[t.type], t.string, list(t.start), list(t.end)] for t in tokenize.generate_tokens(io.StringIO(source).readline)]
        cases.append({'source': source, 'tokens': tokens})
    except (tokenize.TokenError, IndentationError) as e:
        cases.append({'source': source, 'error': e.args[0]})
# Lines of many quotes of one kind inside a string that does not end (each once rescanned the line), and CR runs.
for source in ['"' + '\\"' * 400, "x = '" + "\\'" * 400 + '\n', "b'" + "\\'a'" * 300, '# c' + '\r' * 2000 + 'x', "u'\\\r'" * 200]:
    try:
        tokens = [[tokenize.tok_name[t.type], t.string, list(t.start), list(t.end)] for t in tokenize.generate_tokens(io.StringIO(source).readline)]
        cases.append({'source': source, 'tokens': tokens})
    except (tokenize.TokenError, IndentationError) as e:
        cases.append({'source': source, 'error': e.args[0]})
json.dump({'python': sys.version.split()[0], 'cases': cases}, sys.stdout, ensure_ascii=False, separators=(',', ':'))
print()
