"""Arithmetic and unit conversions without a model ('12 * 7', 'how many minutes are there in
three and a half hours', '1 GB 等于多少 MB'). Exact, shown with the rule used, and only when
the whole message is one: a question that names anything else goes to the documents.

Units and number words are lexicons (ingest/lexicon/units.txt, number_values.txt).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass

from graph import text as tx
from ingest import lexicon


@dataclass(frozen=True)
class Computed:
    answer: str  # '210 minutes'
    working: str  # '3.5 hours × 60 = 210 minutes'


@dataclass(frozen=True)
class _Unit:
    quantity: str
    size: float  # in the quantity's base unit


def _lexicons() -> tuple[dict[str, _Unit], dict[str, set[str]], dict[str, float]]:
    units: dict[str, _Unit] = {}
    marks: dict[str, set[str]] = {}
    for key, fields in lexicon.table("units"):
        if key.startswith("@"):
            marks[key[1:]] = {f.casefold() for f in fields}
        else:
            for name in fields[1:]:
                units[name.casefold()] = _Unit(key, float(fields[0]))
    values = {word.casefold(): float(value) for word, (value, *_) in lexicon.table("number_values")}
    return units, marks, values


_UNITS, _MARKS, _VALUES = _lexicons()


def number_word(word: str) -> float | None:
    """The value of a number word ('three', '十'; number_values.txt), None for other words."""
    return _VALUES.get(word.casefold())


def base_unit(word: str) -> tuple[str, float] | None:
    """(quantity, size in its base unit) of a unit's name ('metres' -> ('length', 1.0))."""
    unit = _UNITS.get(word.casefold())
    return (unit.quantity, unit.size) if unit else None


_UNIT_NAMES = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_EN_RE = re.compile(
    rf"^(?:how many|how much)\s+(?P<to>{_UNIT_NAMES})\s+(?:are there |is there |are |is |make |in )?"
    rf"(?:in|make up|equal)?\s*(?P<amount>[\w.,\- ]+?)\s+(?P<from>{_UNIT_NAMES})$"
    rf"|^(?:convert |what is |what's )?(?P<amount2>[\w.,\- ]+?)\s+(?P<from2>{_UNIT_NAMES})\s+"
    rf"(?:to|in|into|in terms of)\s+(?P<to2>{_UNIT_NAMES})$",
    re.IGNORECASE,
)
_ZH_RE = re.compile(
    rf"(?P<amount>[\d.,]+|[零一二两三四五六七八九十百千半个]+)\s*(?P<from>{_UNIT_NAMES})\s*"
    rf"(?:等于|是|合|有|换算成|换算为|折合|折算成)(?:多少|几)\s*(?:个)?\s*(?P<to>{_UNIT_NAMES})",
    re.IGNORECASE,
)


def is_measure(word: str) -> bool:
    """Whether a word names a unit of measure ('days', '小时'): 'how many days' asks a
    quantity, not a count of rows or entries."""
    return word.casefold() in _UNITS


_ARITHMETIC_RE = re.compile(r"^[\d\s+\-*/().^%×÷,]+$")
_ARITHMETIC_LEAD_RE = re.compile(
    r"^(?:what is|what's|calculate|compute|计算|算一下)\s*|\s*(?:=\s*\?*|等于多少|等于几|是多少)$",
    re.IGNORECASE,
)
_MAX_POWER = 64


def compute(question: str) -> Computed | None:
    """The result when the whole message is arithmetic or a unit conversion, else None."""
    q = tx.normalize_space(question).strip().rstrip("?？。.!！ ")
    if not q or len(q) > 200:
        return None
    return _arithmetic(q) or _conversion(q)


def _arithmetic(q: str) -> Computed | None:
    expr = _ARITHMETIC_LEAD_RE.sub("", q).strip()
    if not _ARITHMETIC_RE.match(expr) or not re.search(r"\d\s*[+\-*/^%×÷]\s*[\d(]", expr):
        return None
    python = expr.replace("×", "*").replace("÷", "/").replace("^", "**").replace(",", "")
    try:
        value = _eval(ast.parse(python, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return Computed(_number(value), f"{expr} = {_number(value)}")


_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_POWER:
            raise ValueError("power too large")
        return float(_OPS[type(node.op)](left, right))
    raise ValueError("not arithmetic")


def _conversion(q: str) -> Computed | None:
    m = _EN_RE.match(q)
    if m:
        amount_text = m.group("amount") or m.group("amount2")
        src, dst = m.group("from") or m.group("from2"), m.group("to") or m.group("to2")
        rest = ""
    else:
        m = _ZH_RE.search(q)
        if not m:
            return None
        amount_text, src, dst = m.group("amount"), m.group("from"), m.group("to")
        rest = q[: m.start()] + " " + q[m.end() :]
    amount = amount_of(amount_text)
    a, b = _UNITS.get(src.casefold()), _UNITS.get(dst.casefold())
    if amount is None or a is None or b is None or a.quantity != b.quantity:
        return None
    allowed = set().union(*_MARKS.values())
    if any(t.casefold() not in allowed for t in tx.tokenize(rest)):
        return None  # the message asks about something else too: the documents may say
    decimal = any(w in q.casefold() for w in _MARKS.get("decimal", ()))
    size_a, size_b = _size(a, decimal), _size(b, decimal)
    value = amount * size_a / size_b
    factor = size_a / size_b
    step = f"× {_number(factor)}" if factor >= 1 else f"÷ {_number(1 / factor)}"
    rule = ""
    if a.quantity == "data" and a.size != b.size:
        zh = tx.has_cjk(q)
        rule = {(False, True): " (decimal, 1000)", (False, False): " (binary, 1024)",
                (True, True): "（十进制，1000）", (True, False): "（二进制，1024）"}[(zh, decimal)]  # fmt: skip
    answer = f"{_number(value)} {dst}"
    return Computed(answer, f"{_number(amount)} {src} {step} = {answer}{rule}")


def _size(unit: _Unit, decimal: bool) -> float:
    if unit.quantity != "data" or not decimal:
        return unit.size
    return 1000.0 ** round(math.log(unit.size, 1024))


def amount_of(text: str) -> float | None:
    """'3.5', '1,000', 'three and a half', 'a half', '两个半', '十二' as a number; None if
    any word of it is not a number."""
    text = text.strip().casefold()
    if re.fullmatch(r"\d[\d,]*(?:\.\d+)?|\.\d+", text):
        return float(text.replace(",", ""))
    words = (
        [c for c in text if c not in "个 "]
        if tx.has_cjk(text)
        else [w for w in re.split(r"[\s-]+", text) if w and w != "and"]
    )
    total, current = 0.0, 0.0
    for i, word in enumerate(words):
        if word in ("a", "an") and words[i + 1 : i + 2] == ["half"]:
            continue  # 'three and a half': the article belongs to 'half'
        value = _VALUES.get(word)
        if value is None:
            return None
        if value == 0.5:
            current += 0.5
        elif value in (10, 100, 1000) and (
            current or word in ("hundred", "thousand") or tx.has_cjk(word)
        ):
            current = (current or 1) * value
            if value >= 100:
                total, current = total + current, 0.0
        else:
            current += value
    result = total + current
    return result if words else None


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}".replace(",", "") if abs(value) < 10000 else f"{int(value):,}"
    return f"{value:.6g}"
