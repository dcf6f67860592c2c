"""What Python 3 makes of ktlua's expressions (spec/fuzz_spec.lua's Python
fuzzer): python_expr.py < CASES > RESULTS, one case a line.

A case is "NAME=VALUE;...|TEXT": names bound to "i:123" (an integer) or
"f:0x1.8p+1" (a float, C99's hex, or inf, -inf, nan), then the expression.
Its result is one line:

  i 123           an integer (True and False are 1 and 0, as in ktlua)
  f HEX REPR      a float: float.hex(), then repr() for people
  e CLASS         an error: overflow (an integer beyond 64 bits, where
                  ktlua stops: Python's have no bound), zero (a division or
                  modulo by zero), zeropow (0 to a negative power), complex
                  (a negative number to a fractional power), toolarge (a
                  float power beyond the floats), sqrt (of a negative
                  number), nonint (floor or ceil of inf or nan)
  x WHY           the case is no test: Python does not read it (a syntax
                  error), or the oracle disagrees with Python's own eval()

The text is parsed by Python's parser (so precedence is Python's) and
evaluated node by node with Python's operators, in Python's order, short
circuits included, so that the first integer beyond 64 bits is seen where
it arises, even where a later step would bring it back (ktlua cannot hold
it). Where no such integer arises, eval() of the text must give the same
value: that checks this evaluator against Python itself. ktlua's
departures that are documented (doc/python.md) are modelled: pow() is
math.pow (always a float), floor, ceil and sqrt are math's.
"""
import ast
import math
import operator
import sys

MIN, MAX = -(1 << 63), (1 << 63) - 1


class Stop(Exception):
    """An error ktlua must give too; args[0] is its class."""


def fit(v):
    if isinstance(v, int) and not isinstance(v, bool) and not MIN <= v <= MAX:
        raise Stop("overflow")
    return v


def power(x, y, fn):
    """x ** y (fn = operator.pow) or pow(x, y) (fn = math.pow)."""
    if fn is operator.pow and type(x) is int and type(y) is int and y >= 64 and abs(x) >= 2:
        raise Stop("overflow")  # at least 2**64: not computed
    finite = math.isfinite(x) and math.isfinite(y)
    if finite and x == 0 and y < 0:
        raise Stop("zeropow")
    if finite and x < 0 and y != math.floor(y):
        raise Stop("complex")  # Python's complex power, or its OverflowError
    try:
        r = fn(x, y)
    except OverflowError:
        raise Stop("toolarge")
    except ValueError:  # math.pow of a negative number to a fractional power
        raise Stop("complex")
    if isinstance(r, complex):
        raise Stop("complex")
    return fit(r)


def to_int(f, fn):
    if isinstance(f, float) and not math.isfinite(f):
        raise Stop("nonint")
    return fit(fn(f))


def square_root(x):
    if x < 0:
        raise Stop("sqrt")
    return math.sqrt(x)


BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
CALLS = {
    "min": min, "max": max, "abs": lambda x: fit(abs(x)),
    "floor": lambda x: to_int(x, math.floor), "ceil": lambda x: to_int(x, math.ceil),
    "sqrt": square_root, "pow": lambda x, y: power(x, y, math.pow),
}
# What eval() is given for the same names.
EVAL_CALLS = {"min": min, "max": max, "abs": abs, "floor": math.floor, "ceil": math.ceil,
              "sqrt": math.sqrt, "pow": math.pow}


class Walker:
    def __init__(self, names):
        self.names = names
        self.nan_in = False  # 'in' met a NaN: eval() may find it by identity

    def binary(self, n):
        a, b = self.walk(n.left), self.walk(n.right)
        if isinstance(n.op, ast.Pow):
            return power(a, b, operator.pow)
        try:
            return fit(BINARY[type(n.op)](a, b))
        except ZeroDivisionError:
            raise Stop("zero")

    def compare(self, n):
        left = self.walk(n.left)
        for op, right in zip(n.ops, n.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                items = [self.walk(e) for e in right.elts]  # Python builds the list first
                self.nan_in |= any(v != v for v in items + [left])
                found = any(left == v for v in items)
                ok = found if isinstance(op, ast.In) else not found
                value = None
            else:
                value = self.walk(right)
                ok = COMPARE[type(op)](left, value)
            if not ok:
                return False
            left = value
        return True

    def boolean(self, n):
        v = None
        for e in n.values:
            v = self.walk(e)
            if isinstance(n.op, ast.And) != bool(v):  # and stops at a false one, or at a true one
                return v
        return v

    def walk(self, n):
        if isinstance(n, ast.Constant):
            return fit(n.value)
        if isinstance(n, ast.Name):
            return self.names[n.id]
        if isinstance(n, ast.UnaryOp):
            v = self.walk(n.operand)
            if isinstance(n.op, ast.Not):
                return not v
            if isinstance(n.op, ast.USub):
                return fit(-v)
        if isinstance(n, ast.BinOp):
            return self.binary(n)
        if isinstance(n, ast.BoolOp):
            return self.boolean(n)
        if isinstance(n, ast.Compare):
            return self.compare(n)
        if isinstance(n, ast.IfExp):
            return self.walk(n.body) if self.walk(n.test) else self.walk(n.orelse)
        if isinstance(n, ast.Call):
            args = [self.walk(a) for a in n.args]
            return CALLS[n.func.id](*args)
        raise TypeError("no such node in ktlua's subset: " + ast.dump(n))


def literals_fit(tree):
    """ktlua reads an integer literal beyond 64 bits as an error."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and type(n.value) is int and not MIN <= n.value <= MAX:
            return False
    return True


def value(names, text):
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        return ("x", "Python does not read it: %s" % e.msg), None
    if not literals_fit(tree):
        return ("e", "overflow"), None
    w = Walker(names)
    try:
        v = w.walk(tree.body)
    except Stop as s:
        return ("e", s.args[0]), (w, tree)
    return ("v", v), (w, tree)


def same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


def check_with_eval(names, result, walked):
    """Python's own eval() of the text, where no integer left 64 bits."""
    w, tree = walked
    kind, v = result
    if kind == "e" and v in ("overflow", "complex") or w.nan_in:
        return None  # Python goes on with a big integer or a complex number
    env = dict(EVAL_CALLS)
    env.update(names)
    try:
        got = eval(compile(tree, "<case>", "eval"), {"__builtins__": {}}, env)
    except (ArithmeticError, ValueError):
        return None if kind == "e" else "eval() raises where the oracle gives a value"
    if kind == "e":
        return "eval() gives %r where the oracle raises" % (got,)
    if not same(got, v):
        return "eval() gives %r, the oracle %r" % (got, v)
    return None


def number(text):
    kind, _, v = text.partition(":")
    if kind == "i":
        return int(v)
    if v in ("inf", "-inf", "nan", "-nan"):
        return float(v.replace("-nan", "nan"))
    return float.fromhex(v)


def line_of(case):
    head, _, text = case.partition("|")
    names = {}
    for binding in filter(None, head.split(";")):
        name, _, v = binding.partition("=")
        names[name] = number(v)
    result, walked = value(names, text)
    if walked:
        why = check_with_eval(names, result, walked)
        if why:
            return "x the oracle disagrees with Python: " + why
    kind, v = result
    if kind != "v":
        return "%s %s" % (kind, v)
    if isinstance(v, bool) or isinstance(v, int):
        return "i %d" % v
    return "f %s %r" % (v.hex(), v)


def main():
    out = []
    for case in sys.stdin.read().split("\n"):
        if case:
            out.append(line_of(case))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
