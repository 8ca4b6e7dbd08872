"""Fit the token estimator's coefficients against the real tokenizers.

For each family (cl100k -> cl100k_base, o200k -> o200k_base, qwen -> Qwen3 tokenizer.json)
it counts the calibration half of the corpus (see ``_token_corpus.py``: zh, en, code and
mixed zh/en pieces of at least 200 characters) with the real tokenizer, and fits the
estimator's 15 feature coefficients by weighted non-negative least squares: rows are
weighted by 1 / tokens^2 (so the fit minimises squared *relative* error) and by
1 / pieces-of-that-language (so each language mix weighs the same). Non-negative
coefficients keep the estimate subadditive. The common-ideograph set is derived from
cl100k_base: the ideographs in U+4E00-U+9FFF it encodes as a single token.

Prints the block to paste between ``# CALIBRATION-BEGIN`` and ``# CALIBRATION-END`` in
``src/precis/tokens/_estimate.py`` (``--write`` replaces it there), plus the held-out mean
error per language. Pure Python (no numpy), deterministic.

    python bench/calibrate_estimator.py [--data ../shared/data] [--write] [--json OUT]
"""

from __future__ import annotations

import datetime
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from precis.tokens import TokenCounter
from precis.tokens._estimate import FEATURES, TextFeatures

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, require_data, write_json
from _token_corpus import (
    LANGS,
    MIN_PIECE_CHARS,
    build_corpus,
    error_stats,
    mixed_pieces,
    real_counters,
)

MODULE = ROOT / "src" / "precis" / "tokens" / "_estimate.py"
BLOCK = re.compile(r"# CALIBRATION-BEGIN\n.*?# CALIBRATION-END\n", re.S)


# --- linear algebra on small dense matrices (15 x 15) -----------------------------------


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve ``a x = b`` by Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] if abs(m[i][i]) >= 1e-12 else 0.0 for i in range(n)]


def nnls_normal(gram: list[list[float]], rhs: list[float], tol: float = 1e-10) -> list[float]:
    """Lawson-Hanson NNLS on the normal equations: min 1/2 x'Gx - b'x subject to x >= 0."""
    n = len(rhs)
    x = [0.0] * n
    passive: list[int] = []

    def gradient() -> list[float]:
        return [rhs[i] - sum(gram[i][j] * x[j] for j in range(n)) for i in range(n)]

    for _ in range(10 * n):
        w = gradient()
        candidates = [j for j in range(n) if j not in passive and w[j] > tol]
        if not candidates:
            break
        passive.append(max(candidates, key=lambda j: w[j]))
        while True:
            sub = solve([[gram[i][j] for j in passive] for i in passive], [rhs[i] for i in passive])
            z = [0.0] * n
            for i, value in zip(passive, sub):
                z[i] = value
            if all(z[i] > tol for i in passive):
                x = z
                break
            alpha = min(
                x[i] / (x[i] - z[i]) for i in passive if z[i] <= tol and x[i] - z[i] > 0
            ) if any(z[i] <= tol and x[i] - z[i] > 0 for i in passive) else 0.0
            x = [xi + alpha * (zi - xi) for xi, zi in zip(x, z)]
            passive = [i for i in passive if x[i] > tol]
    return x


def fit(
    rows: Sequence[Sequence[int]], truths: Sequence[int], weights: Sequence[float]
) -> list[float]:
    """Weighted NNLS: the coefficients minimising sum(w * (row . x - truth)^2), x >= 0."""
    n = len(rows[0])
    gram = [[0.0] * n for _ in range(n)]
    rhs = [0.0] * n
    for row, y, w in zip(rows, truths, weights):
        for i in range(n):
            if row[i]:
                wi = w * row[i]
                rhs[i] += wi * y
                g = gram[i]
                for j in range(n):
                    g[j] += wi * row[j]
    return nnls_normal(gram, rhs)


# --- calibration ----------------------------------------------------------------------------


def common_han(cl100k: TokenCounter) -> str:
    """Ideographs in U+4E00-U+9FFF that cl100k_base encodes as one token."""
    chars = [chr(cp) for cp in range(0x4E00, 0xA000)]
    return "".join(c for c, n in zip(chars, cl100k.count_batch(chars)) if n == 1)


def estimate(coefficients: Sequence[float], features: Sequence[int]) -> int:
    value = sum(c * f for c, f in zip(coefficients, features))
    return max(1, int(value + 0.5))


def render(common: str, coefficients: dict[str, list[float]], data: Path) -> str:
    today = datetime.date.today().isoformat()
    lines = [
        "# CALIBRATION-BEGIN",
        f"# Produced by `python bench/calibrate_estimator.py` on {today}: weighted non-negative",
        "# least squares against cl100k_base, o200k_base and the Qwen3 tokenizer.json, on the",
        "# calibration half of the zh / en / code / mixed corpus built from ../shared/data (see",
        "# bench/_token_corpus.py). COMMON_HAN: the ideographs cl100k_base encodes as one token.",
        "COMMON_HAN = (",
    ]
    for start in range(0, len(common), 40):
        lines.append(f'    "{common[start:start + 40]}"')
    lines.append(")")
    lines.append("# Coefficients in the order of FEATURES:")
    for start in range(0, len(FEATURES), 6):
        lines.append("#   " + ", ".join(FEATURES[start:start + 6]))
    lines.append("COEFFICIENTS: dict[str, tuple[float, ...]] = {")
    for family, values in coefficients.items():
        lines.append(f'    "{family}": (')
        for start in range(0, len(values), 6):
            chunk = ", ".join(f"{v:.4f}" for v in values[start:start + 6])
            lines.append(f"        {chunk},")
        lines.append("    ),")
    lines.append("}")
    lines.append("# CALIBRATION-END")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--write", action="store_true",
                   help=f"replace the calibration block in {MODULE.relative_to(ROOT)}")
    args = p.parse_args()
    require_data(args.data, "tokenizers")
    require_data(args.data, "transcripts")

    corpus = build_corpus(args.data)
    pieces = [p for p in corpus.pieces + mixed_pieces(corpus.pieces)
              if len(p.text) >= MIN_PIECE_CHARS]
    counters = real_counters(args.data)
    common = common_han(counters["cl100k"])
    features = TextFeatures(common)
    rows = [features(p.text) for p in pieces]
    texts = [p.text for p in pieces]

    calibration = [i for i, p in enumerate(pieces) if not p.heldout]
    heldout = [i for i, p in enumerate(pieces) if p.heldout]
    per_lang = Counter(pieces[i].lang for i in calibration)
    print(f"{len(calibration)} calibration pieces ({dict(per_lang)}), "
          f"{len(heldout)} held out; {len(common)} common ideographs")

    coefficients: dict[str, list[float]] = {}
    report = []
    for family, counter in counters.items():
        truths = counter.count_batch(texts)
        weights = [1 / (truths[i] ** 2 * per_lang[pieces[i].lang]) for i in calibration]
        coef = fit([rows[i] for i in calibration], [truths[i] for i in calibration], weights)
        coefficients[family] = coef
        for lang in LANGS:
            idx = [i for i in heldout if pieces[i].lang == lang]
            stats = error_stats([estimate(coef, rows[i]) for i in idx], [truths[i] for i in idx])
            report.append([family, lang, stats["n"], f"{stats['mean']:.1f}%",
                           f"{stats['worst']:.1f}%", f"{stats['bias']:+.1f}%"])

    block = render(common, coefficients, args.data)
    print()
    print(block)
    print_table(["family", "lang", "n", "mean err", "worst", "bias"], report,
                title="held-out error (pieces >= 200 chars)")
    if args.write:
        source = MODULE.read_text(encoding="utf-8")
        if not BLOCK.search(source):
            sys.exit(f"no CALIBRATION-BEGIN/END block in {MODULE}")
        MODULE.write_text(BLOCK.sub(lambda _: block, source, count=1), encoding="utf-8")
        print(f"wrote {MODULE}")
    write_json(args.json, {
        "features": list(FEATURES),
        "common_han": common,
        "coefficients": coefficients,
        "heldout": [dict(zip(["family", "lang", "n", "mean", "worst", "bias"], r))
                    for r in report],
    })


if __name__ == "__main__":
    main()
