/**
 * The Python side of the boundary, run inside the fork server (sandbox/python-server.ts): the plain-value codec,
 * the candidate's serving loop (`serve`: load the program, then answer calls of its functions) and the tests'
 * harness (`harness`: the problem's prompt, then the tests, with the candidate's functions as remote calls).
 * Values cross as JSON of tagged plain values (strings, finite floats and integers up to 1,000 bits bare); the harness
 * builds them with exactly the built-in types, so that nothing of the candidate's (an always-equal `__eq__`, a patched
 * builtin) takes part in the comparison. Each reply carries the CPU seconds the call took, for per-input time limits.
 */
export const PYTHON_BOUNDARY = String.raw`# ---- plain values across the boundary (the candidate's side and the harness's side share this code)
import base64 as _b64, json as _json, time as _time
_loads = _json.loads
_cpu = _time.process_time  # bound before any program runs: the CPU seconds of each call go back with its reply

class NotPlain(Exception):
    """A value that cannot cross the boundary: not None, bool, int, float, complex, str, bytes, bytearray, list,
    tuple, dict, set or frozenset (or a subclass of one, which crosses as its base value), or nested too deep."""

_MAX_DEPTH = 256

def _items(v, base):
    # the base type's own iteration: a subclass's __iter__ (or __eq__) never runs
    return base.__iter__(v)

def encode(v, depth=0):
    if depth > _MAX_DEPTH:
        raise NotPlain('a value nested deeper than %d levels' % _MAX_DEPTH)
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        # as a JSON number, exact both ways in Python and a third of the bytes (HumanEval+ returns lists of a million);
        # past ~300 digits in hex, which no digit limit of int() refuses
        return v if v.bit_length() <= 1000 else ['i', hex(v)]
    if t is float:
        # Python writes a finite float as its shortest repr and reads it back bit for bit; inf and nan are not JSON
        return v if v - v == 0.0 else ['f', v.hex()]
    if t is list:
        return ['l', [encode(x, depth + 1) for x in v]]
    if t is tuple:
        return ['t', [encode(x, depth + 1) for x in v]]
    if t is dict:
        return ['d', [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in v.items()]]
    if t is set:
        return ['s', [encode(x, depth + 1) for x in v]]
    if t is frozenset:
        return ['S', [encode(x, depth + 1) for x in v]]
    if t is bytes:
        return ['b', _b64.b64encode(v).decode('ascii')]
    if t is bytearray:
        return ['B', _b64.b64encode(bytes(v)).decode('ascii')]
    if t is complex:
        return ['c', v.real.hex(), v.imag.hex()]
    # subclasses (IntEnum, namedtuple, Counter, OrderedDict, a str with its own __eq__): their base value, read
    # through the base type's methods, so that nothing of the subclass decides what crosses
    if isinstance(v, bool):
        return bool.__bool__(v)
    if isinstance(v, int):
        return ['i', hex(int.__index__(v))]
    if isinstance(v, float):
        return ['f', float.hex(float.__float__(v))]
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, dict):
        return ['d', [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in dict.items(v)]]
    for base, tag in ((list, 'l'), (tuple, 't'), (set, 's'), (frozenset, 'S')):
        if isinstance(v, base):
            return [tag, [encode(x, depth + 1) for x in _items(v, base)]]
    if isinstance(v, bytes):
        return ['b', _b64.b64encode(bytes.__bytes__(v) if hasattr(bytes, '__bytes__') else bytes(memoryview(v))).decode('ascii')]
    if isinstance(v, complex):
        c = complex.__complex__(v) if hasattr(complex, '__complex__') else complex(v.real, v.imag)
        return ['c', c.real.hex(), c.imag.hex()]
    raise NotPlain('a value of type %s' % _type_name(v))

def _type_name(v):
    t = type(v)
    mod = getattr(t, '__module__', '')
    return t.__qualname__ if mod in ('builtins', '__main__', None, '') else '%s.%s' % (mod, t.__qualname__)

def decode(e, depth=0):
    """Builds the value with exactly the built-in types; anything malformed is NotPlain."""
    if depth > _MAX_DEPTH + 1:
        raise NotPlain('nested too deep')
    if e is None or e is True or e is False or type(e) is str or type(e) is int or type(e) is float:
        return e
    if type(e) is not list or not e or type(e[0]) is not str:
        raise NotPlain('malformed value')
    tag = e[0]
    try:
        if tag == 'i':
            return int(e[1], 16)
        if tag == 'f':
            return float.fromhex(e[1])
        if tag in ('l', 't', 's', 'S'):
            items = [decode(x, depth + 1) for x in e[1]]
            return items if tag == 'l' else tuple(items) if tag == 't' else set(items) if tag == 's' else frozenset(items)
        if tag == 'd':
            return {decode(k, depth + 1): decode(x, depth + 1) for k, x in e[1]}
        if tag == 'b':
            return _b64.b64decode(e[1].encode('ascii'), validate=True)
        if tag == 'B':
            return bytearray(_b64.b64decode(e[1].encode('ascii'), validate=True))
        if tag == 'c':
            return complex(float.fromhex(e[1]), float.fromhex(e[2]))
    except NotPlain:
        raise
    except Exception as x:
        raise NotPlain('malformed value (%s)' % type(x).__name__)
    raise NotPlain('malformed value')

# what a reply may take of the relay's 16 MiB line (DATA_LINE_CAP), with slack for the estimate below
_REPLY_BUDGET = 15000000

def _encoded_size(x, budget):
    # about the bytes encode() and dumps() make of x (an upper bound for numbers), without building them: counting
    # stops past budget, so a value of millions of items costs no memory
    todo, size = [x], 0
    while todo and size <= budget:
        v = todo.pop()
        t = type(v)
        if t is str:
            size += len(v) + 3 if v.isascii() else 6 * len(v) + 3
        elif t is int:
            size += v.bit_length() // 3 + 3
        elif t is float:
            size += 26
        elif t in (list, tuple, set, frozenset):
            size += 8 + len(v)
            todo.extend(v)
        elif t is dict:
            size += 8 + 2 * len(v)
            todo.extend(v.keys())
            todo.extend(v.values())
        else:
            size += 64
    return size

def dumps(obj, _dumps=_json.dumps):
    # bound at definition: a program that replaces json.dumps for its own ends does not break its replies
    return _dumps(obj, ensure_ascii=True, allow_nan=False, separators=(',', ':'))

_MUTABLE = (list, dict, set, bytearray)

class _Lines:
    """Reads JSON lines from a file descriptor (blocking), at most cap bytes a line."""
    def __init__(self, fd, cap):
        self.fd, self.cap, self.buf = fd, cap, b''

    def next(self):
        import os
        while True:
            nl = self.buf.find(b'\n')
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                return line
            if len(self.buf) > self.cap:
                raise EOFError('a line longer than %d bytes' % self.cap)
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError('closed')
            self.buf += chunk

def _send(fd, obj):
    import os
    data = (dumps(obj) + '\n').encode('ascii')
    while data:
        n = os.write(fd, data)
        data = data[n:]

# ---- the candidate's side: load the program, then serve calls of its functions with plain values

def serve(job, data_fd, namespace, run_program):
    """Runs the program (as __main__, as it would run alone), then answers calls until told to end. A call of a
    name the program does not define raises NameError, as the tests would have."""
    import os, sys, traceback
    token = job['token']
    not_none = job.get('returns') == 'not-none'
    run_program(namespace)  # SyntaxError, a top-level exception or an exit ends the process here
    sys.stdout.flush()
    _send(data_fd, {'t': token, 'ready': 1})
    lines = _Lines(data_fd, job['line_cap'])
    prefix = ('{"t":"%s",' % token).encode('ascii')
    while True:
        try:
            line = lines.next()
        except EOFError:
            break
        if not line.startswith(prefix):
            continue
        msg = _loads(line)
        if 'end' in msg:
            break
        seq = msg['seq']
        try:
            args = decode(msg['args'])
            kwargs = decode(msg['kwargs'])
            fn = namespace[msg['name']] if msg['name'] in namespace else None
            if fn is None:
                raise NameError("name '%s' is not defined" % msg['name'])
        except NameError as e:
            _send(data_fd, {'t': token, 'seq': seq, 'raise': ['NameError', str(e)]})
            continue
        started = _cpu()
        try:
            value = fn(*args, **kwargs)
        except Exception as e:
            tb = ''.join(traceback.format_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None))
            try:
                sys.stdout.flush()
                sys.stderr.write(tb)
                sys.stderr.flush()
            except Exception:
                pass  # a full disk or a closed stream: the reply still goes
            _send(data_fd, {'t': token, 'seq': seq, 'raise': [type(e).__name__, _safe_str(e), tb[-4000:]]})
            continue
        reply = {'t': token, 'seq': seq, 'cpu': _cpu() - started}
        if not_none and type(value) is not bool:
            value = value is not None  # a bool goes as it is: EvalPlus compares a returned bool itself
        try:
            reply['ok'] = encode(value)
        except NotPlain as e:
            reply = {'t': token, 'seq': seq, 'not_plain': str(e)}
        except RecursionError:
            reply = {'t': token, 'seq': seq, 'not_plain': 'a value nested too deep'}
        # arguments the call changed in place go back, so the tests see them changed (sorting a list given to it)
        changed = {}
        for i, (before, after) in enumerate(zip(msg['args'][1], args)):
            if type(after) in _MUTABLE:
                try:
                    now = encode(after)
                except (NotPlain, RecursionError):
                    continue
                if now != before:
                    changed[str(i)] = now
        if changed:
            reply['changed'] = changed
        try:
            sys.stdout.flush()
        except Exception:
            pass
        _send(data_fd, reply)

def _safe_str(e):
    try:
        return str(e)[:2000]
    except Exception:
        return '<unprintable>'

# ---- the harness's side: the tests, with the candidate's functions as remote calls

class Unsupported(BaseException):
    """The tests need something the boundary cannot carry (a function as an argument, the candidate object itself):
    the sample is run again with the tests in the candidate's process, marked as such."""

class CandidateGone(BaseException):
    """The candidate's process ended (or was ended) while the tests waited for it."""

class NotPlainResult(BaseException):
    """The candidate returned something that is not a plain value: a failure that the tests cannot catch."""

class CandidateError(Exception):
    """An exception of the candidate's that has no built-in counterpart here."""

class _Channel:
    def __init__(self, fd, token, cap):
        self.fd, self.token, self.seq, self.last_cpu = fd, token, 0, 0.0
        self.lines = _Lines(fd, cap)
        self.prefix = ('{"t":"%s",' % token).encode('ascii')

    def call(self, name, args, kwargs):
        try:
            enc_args = encode(list(args))
            enc_kwargs = encode(dict(kwargs))
        except (NotPlain, RecursionError) as e:
            raise Unsupported('the tests pass %s to the candidate' % e)
        self.seq += 1
        seq = self.seq
        _send(self.fd, {'t': self.token, 'seq': seq, 'name': name, 'args': enc_args, 'kwargs': enc_kwargs})
        while True:
            try:
                line = self.lines.next()
            except EOFError:
                raise CandidateGone()
            if not line.startswith(self.prefix):
                continue
            msg = _json.loads(line)
            if 'gone' in msg:
                raise CandidateGone()
            if msg.get('seq') != seq:
                continue
            break
        if 'not_plain' in msg:
            raise NotPlainResult('%s returned %s, which is not a plain value' % (name, str(msg['not_plain'])[:200]))
        if 'raise' in msg:
            kind, text = str(msg['raise'][0]), str(msg['raise'][1])
            import builtins
            cls = getattr(builtins, kind, None)
            if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == 'builtins':
                try:
                    err = cls(text)
                except Exception:
                    err = CandidateError('%s: %s' % (kind, text))
            else:
                err = CandidateError('%s: %s' % (kind, text))
            err.__codegauge_candidate__ = True
            raise err
        cpu = msg.get('cpu')
        self.last_cpu = float(cpu) if type(cpu) in (int, float) and cpu >= 0 else 0.0
        try:
            value = decode(msg['ok'])
            changed = {int(i): decode(v) for i, v in msg.get('changed', {}).items()}
        except (NotPlain, KeyError, ValueError, TypeError) as e:
            raise NotPlainResult('%s returned %s' % (name, e))
        for i, now in changed.items():
            if 0 <= i < len(args):
                _update_in_place(args[i], now)
        return value

def _update_in_place(target, now):
    t = type(target)
    if t is not type(now):
        return
    if t is list or t is bytearray:
        target[:] = now
    elif t is dict or t is set:
        target.clear()
        target.update(now)

class Remote:
    """The candidate's function "name", called across the boundary."""
    __slots__ = ('_name', '_channel')

    def __init__(self, name, channel):
        object.__setattr__(self, '_name', name)
        object.__setattr__(self, '_channel', channel)

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, '_channel').call(object.__getattribute__(self, '_name'), args, kwargs)

    def __getattribute__(self, attr):
        if attr in ('__class__', '__call__'):
            return object.__getattribute__(self, attr)
        raise Unsupported('the tests read %r of the candidate' % attr)

    def __setattr__(self, attr, value):
        raise Unsupported('the tests set %r on the candidate' % attr)

    def __repr__(self):
        return '<function %s>' % object.__getattribute__(self, '_name')

class _Globals(dict):
    """The tests' globals: a name they use that neither they nor the prompt define is the candidate's (MBPP-style
    tests call the solution's functions by name); built-in names stay built-in."""
    def __init__(self, channel, builtin_names):
        super().__init__()
        self._channel, self._builtins = channel, builtin_names

    def __missing__(self, name):
        if name in self._builtins or name.startswith('__'):
            raise KeyError(name)
        remote = Remote(name, self._channel)
        self[name] = remote
        return remote

def _must_cross(value, why):
    if _encoded_size(value, _REPLY_BUDGET) > _REPLY_BUDGET:
        raise Unsupported(why)

def harness(job, data_fd, report):
    """Runs the tests against the candidate across the boundary and reports: passed, failed (an assertion, or a
    value that is not plain), error (an exception of the tests or the candidate), gone, or unsupported."""
    import builtins, sys, traceback
    channel = _Channel(data_fd, job['token'], job['line_cap'])
    ns = _Globals(channel, set(dir(builtins)))
    ns['__name__'] = '__main__'
    ns['__builtins__'] = builtins
    # the CPU seconds the candidate's process spent in the last call (as it measured them: a program can only make
    # itself look faster to a test that limits per-call time, never make a wrong value right)
    ns['__codegauge_call_cpu__'] = lambda: channel.last_cpu
    # tests that find, from the problem's own data, that it cannot cross (a reference's answer larger than a reply can
    # be) ask for one process with this; never the candidate, who cannot reach it
    ns['__codegauge_must_cross__'] = _must_cross
    entry = job.get('entry')
    try:
        _run_prompt(job['prompt'], ns)
        for name in job.get('names', []):
            ns[name] = Remote(name, channel)
        exec(_compiled(job['tests'], 'tests.py'), ns)
        if job.get('call_check') and entry:
            ns['check'](ns[entry])
        report({'result': 'passed'})
    except Unsupported as e:
        report({'result': 'unsupported', 'why': str(e)})
    except CandidateGone:
        report({'result': 'gone'})
    except NotPlainResult as e:
        report({'result': 'failed', 'note': str(e)})
    except AssertionError as e:
        sys.stderr.write(_tests_traceback(e))
        report({'result': 'failed', 'error': _last_line(e)})
    except MemoryError as e:
        report({'result': 'memory', 'candidate': bool(getattr(e, '__codegauge_candidate__', False))})
    except BaseException as e:
        sys.stderr.write(_tests_traceback(e))
        report({'result': 'error', 'error': _last_line(e), 'candidate': bool(getattr(e, '__codegauge_candidate__', False))})

_CODE = {}

def _compiled(source, filename):
    # a harness that runs job after job compiles each problem's prompt and tests once (code objects are immutable);
    # the cache is emptied past 512 entries
    key = (source, filename)
    code = _CODE.get(key)
    if code is None:
        if len(_CODE) >= 512:
            _CODE.clear()
        code = _CODE[key] = compile(source, filename, 'exec')
    return code

def _run_prompt(prompt, ns):
    # the problem's own code first (helpers the tests call, such as poly): as it is, or with its last function given
    # a body (a prompt that ends at its signature); a prompt that does not run either way is left out, and names
    # the tests take from it are then the candidate's (its program holds the prompt too)
    lines = prompt.rstrip().split('\n')
    indent = len(lines[-1]) - len(lines[-1].lstrip()) + 4 if lines and lines[-1].rstrip().endswith(':') else None
    for source in (prompt, prompt.rstrip() + '\n' + ' ' * indent + 'pass\n' if indent is not None else None):
        if source is None:
            continue
        try:
            code = _compiled(source, 'prompt.py')
        except (SyntaxError, ValueError):
            continue
        try:
            exec(code, ns)
        except BaseException as e:
            raise Unsupported('the prompt does not run on its own (%s)' % type(e).__name__)
        return

def _tests_traceback(e):
    # the tests' frames only: the harness's own (the remote call machinery) say nothing about the sample
    import traceback
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename != '<string>']
    text = ''.join(traceback.format_list(frames)) if frames else ''
    return 'Traceback (most recent call last):\n' + text + ''.join(traceback.format_exception_only(type(e), e))

def _last_line(e):
    text = _safe_str(e)
    return ('%s: %s' % (type(e).__name__, text) if text else type(e).__name__)[:300]
`;
