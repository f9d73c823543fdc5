#!/usr/bin/python3
"""Writes test/vectors/python-tokenize-astral.json: CPython 3.11's pure-Python tokenizer (token types and strings)
and codebleu 0.7.1's `remove_comments_and_docstrings` (its Python branch, restated below) on sources with characters
outside the BMP, which JavaScript strings hold as surrogate pairs.

    /usr/bin/python3 scripts/vectors-python-tokenize.py > test/vectors/python-tokenize-astral.json
"""
import io
import json
import sys
import tokenize

assert sys.version_info[:2] == (3, 11), 'the vectors are of CPython 3.11 (3.12 tokenizes in C and raises instead)'


def remove_comments_and_docstrings(source):
    # codebleu.parser.utils.remove_comments_and_docstrings, lang == "python"
    out, prev, last_line, last_col = '', tokenize.INDENT, -1, 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind, text, (start_line, start_col), (end_line, end_col) = tok[0], tok[1], tok[2], tok[3]
        if start_line > last_line:
            last_col = 0
        if start_col > last_col:
            out += ' ' * (start_col - last_col)
        if kind == tokenize.COMMENT:
            pass
        elif kind == tokenize.STRING:
            if prev != tokenize.INDENT and prev != tokenize.NEWLINE and start_col > 0:
                out += text
        else:
            out += text
        prev, last_col, last_line = kind, end_col, end_line
    return '\n'.join(x for x in out.split('\n') if x.strip() != '')


SOURCES = [
    'print(\U0001F600)\n',
    "x = 1 # \U0001F600 c\ny = '\U0001F600'  # z\n",
    'a\U0001F600b = 2  # c\n',
    "def f():\n    '''doc \U0001F600'''\n    return \U0001F600\U0001F600 + 1  # \U0001F600\n",
    "s = f('''\U0001F600\n\U0001F600''')  # x\nt = 2\n",
    '\U0001D465 = 1\n',  # MATHEMATICAL ITALIC SMALL X: a letter outside the BMP
    '\U0001F600',
]
cases = []
for source in SOURCES:
    tokens = [[tokenize.tok_name[t.type], t.string] for t in tokenize.generate_tokens(io.StringIO(source).readline)]
    cases.append({'source': source, 'tokens': tokens, 'removed': remove_comments_and_docstrings(source)})
json.dump({'python': sys.version.split()[0], 'cases': cases}, sys.stdout, ensure_ascii=False, indent=1)
print()
