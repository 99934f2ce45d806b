"""Jiang, Li, Qiao (2017) Fig. 1: samples vs number of arms N for best-K identification.

Setup (jiang2017 Sec. 5.1): Gaussian rewards with variance 1/4, confidence level
``nu = 0.01``; instances "1-sparse" (``jiang2017-1-sparse``: K arms at 1/2, the rest 0) and
"0.3-exponential" (``jiang2017-exponential``, alpha = 0.3); K = 2 or K = N/2; the
algorithms LUCB, lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB, each lil' one in its
"faithful" (proven error bound <= nu) and "heuristic" (eps = 0, delta = nu) version.
LUCB has no heuristic version in the paper; its faithful numbers are repeated in the
heuristic panels for reference.

Every algorithm runs on the same seeds (same instance draw and arm order per seed).
The table gives the mean number of samples (with its standard error) and the
misidentifications; then the paper's qualitative claims are checked on the numbers:

1. K = 2: lil'RandLUCB draws the fewest samples of the five, "especially on instances
   with many arms" (its advantage over the runner-up grows with N);
2. K = N/2: lil'RandLUCB beats LUCB and lil'CLUCB and is close to LUCB++, which
   coincides with lil'LUCB (identically so in the heuristic version);
3. no algorithm misidentifies (footnote 7).

The paper gives no N values or run counts in the text; the default here is short
(N in 10, 30, 100; 3 runs). ``--n-arms 10,100,1000 --runs 20 --workers 2`` is closer
to the figure.

Usage::

    python benchmarks/jiang2017_fig1.py [--n-arms 10,30,100] [--runs 3] [--workers 1]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from multiprocessing import Pool

import gymnasium as gym

import agents
import bandit_envs  # noqa: F401  (registers the environments)

INSTANCES = {"1-sparse": "jiang2017-1-sparse", "0.3-exponential": "jiang2017-exponential"}
KS = ("2", "N/2")
VARIANTS = ("faithful", "heuristic")
ALGOS = ("lucb", "lil_lucb", "lucb_pp", "lil_rand_lucb", "lil_clucb")
SHORT = {
    "lucb": "LUCB",
    "lil_lucb": "lil'LUCB",
    "lucb_pp": "LUCB++",
    "lil_rand_lucb": "lil'RandLUCB",
    "lil_clucb": "lil'CLUCB",
}
NU = 0.01
#: setting ids "<instance>/<K>/<variant>", as data
SETTINGS = tuple(
    {"id": f"{inst}/K={k}/{v}", "instance": inst, "k": k, "variant": v}
    for inst, k, v in itertools.product(INSTANCES, KS, VARIANTS)
)


def k_of(k: str, n: int) -> int:
    return 2 if k == "2" else n // 2


def run_one(job: tuple[str, int, int, str, str, int]) -> tuple[tuple, int, bool]:
    """One episode: (key, samples, misidentified)."""
    instance, n, k, algo, variant, seed = job
    env = gym.make(
        "TopK-Batch-v0",
        instance=INSTANCES[instance],
        n_arms=n,
        k=k,
        batch_size=1,
        setting="fixed_confidence",
        answer="agent",
    )
    params = {"delta": NU} if algo == "lucb" else {"delta": NU, "variant": variant}
    res = agents.run_episode(env, agents.make(algo, **params), seed=seed)
    return (instance, n, k, algo, variant), res.pulls, res.misidentified


def mean_se(xs: list[int]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def _claims_k2(inst: str, variant: str, rows: list[tuple[int, dict]]) -> list[tuple]:
    """Claim 1 on the K = 2 rows ``[(N, {algo: mean samples})]``."""
    margins = [
        min(v for a, v in r.items() if a != "lil_rand_lucb") / r["lil_rand_lucb"] for _, r in rows
    ]
    big, last = rows[-1]
    return [
        (
            f"K=2 {inst} {variant}: lil'RandLUCB draws the fewest samples (N={big})",
            min(last, key=last.get) == "lil_rand_lucb",
            "runner-up / lil'RandLUCB = "
            + ", ".join(f"{m:.2f}" for m in margins)
            + f" at N = {[n for n, _ in rows]}",
        ),
        (f"K=2 {inst} {variant}: its advantage grows with N", margins[-1] > margins[0], ""),
    ]


def _claims_half(inst: str, variant: str, rows: list[tuple[int, dict]]) -> list[tuple]:
    """Claim 2 on the K = N/2 rows."""
    big, last = rows[-1]
    close = [r["lil_rand_lucb"] / r["lucb_pp"] for _, r in rows]
    same = [r["lucb_pp"] / r["lil_lucb"] for _, r in rows]
    out = [
        (
            f"K=N/2 {inst} {variant}: lil'RandLUCB < LUCB (every N) and < lil'CLUCB (N={big})",
            all(r["lil_rand_lucb"] < r["lucb"] for _, r in rows)
            and last["lil_rand_lucb"] < last["lil_clucb"],
            "lil'CLUCB / lil'RandLUCB = "
            + ", ".join(f"{r['lil_clucb'] / r['lil_rand_lucb']:.2f}" for _, r in rows),
        ),
        (
            f"K=N/2 {inst} {variant}: lil'RandLUCB ~ LUCB++ (ratio in [0.8, 1.2], every N)",
            all(0.8 <= c <= 1.2 for c in close),
            "ratio " + ", ".join(f"{c:.2f}" for c in close),
        ),
    ]
    if variant == "heuristic":
        out.append(
            (
                f"K=N/2 {inst} heuristic: LUCB++ coincides with lil'LUCB (identical runs)",
                all(abs(x - 1.0) < 1e-12 for x in same),
                "",
            )
        )
    else:
        out.append(
            (
                f"K=N/2 {inst} faithful: LUCB++ ~ lil'LUCB (their faithful deltas differ)",
                all(abs(x - 1.0) < 0.15 for x in same),
                "LUCB++ / lil'LUCB = " + ", ".join(f"{x:.2f}" for x in same),
            )
        )
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description="jiang2017 Fig. 1: samples vs number of arms")
    ap.add_argument("--n-arms", default="10,30,100", help="comma-separated N values")
    ap.add_argument("--runs", type=int, default=3, help="seeds per point")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument(
        "--instances", default=",".join(INSTANCES), help="subset of " + ",".join(INSTANCES)
    )
    ap.add_argument("--ks", default=",".join(KS), help="subset of " + ",".join(KS))
    args = ap.parse_args(argv)
    ns = [int(x) for x in args.n_arms.split(",")]
    insts = args.instances.split(",")
    ks = args.ks.split(",")

    jobs = []
    for inst, kk, n in itertools.product(insts, ks, ns):
        k = k_of(kk, n)
        if not 1 <= k < n:
            continue
        for algo in ALGOS:
            for variant in ("faithful",) if algo == "lucb" else VARIANTS:
                jobs.extend((inst, n, k, algo, variant, seed) for seed in range(args.runs))
    start = time.perf_counter()
    results: dict[tuple, list[int]] = {}
    errors: dict[tuple, int] = {}
    if args.workers > 1:
        with Pool(args.workers) as pool:
            out = pool.map(run_one, jobs, chunksize=1)
    else:
        out = [run_one(j) for j in jobs]
    for key, pulls, wrong in out:
        results.setdefault(key, []).append(pulls)
        errors[key] = errors.get(key, 0) + int(wrong)
    elapsed = time.perf_counter() - start

    def get(inst, n, k, algo, variant):
        v = "faithful" if algo == "lucb" else variant
        return results.get((inst, n, k, algo, v))

    print(f"jiang2017 Fig. 1 reproduction: nu = {NU}, {args.runs} runs per point, {elapsed:.0f} s")
    summary: dict[str, dict] = {}
    for inst, kk, variant in itertools.product(insts, ks, VARIANTS):
        print(f"\n== {inst}, K = {kk}, {variant} ==   mean samples (standard error); * = fewest")
        print(
            f"{'N':>6s} "
            + " ".join(
                f"{SHORT[a] + (' (f)' if a == 'lucb' and variant == 'heuristic' else ''):>20s}"
                for a in ALGOS
            )
        )
        for n in ns:
            k = k_of(kk, n)
            row = {}
            for algo in ALGOS:
                xs = get(inst, n, k, algo, variant)
                if xs:
                    row[algo] = mean_se(xs)
            if not row:
                continue
            best = min(row, key=lambda a: row[a][0])
            cells = []
            for algo in ALGOS:
                if algo not in row:
                    cells.append(f"{'-':>20s}")
                    continue
                m, se = row[algo]
                cells.append(f"{m:12.0f} ({se:5.0f}){'*' if algo == best else ' '}")
            print(f"{n:6d} " + " ".join(cells))
            summary[f"{inst}/K={kk}/{variant}/N={n}"] = {a: row[a][0] for a in row}

    wrong = {key: e for key, e in errors.items() if e}
    print(
        "\n== qualitative claims of jiang2017 Sec. 5.1 (checked at the largest N unless noted) =="
    )
    checks = []
    for inst, variant in itertools.product(insts, VARIANTS):
        rows = [(n, summary.get(f"{inst}/K=2/{variant}/N={n}")) for n in ns]
        rows = [(n, r) for n, r in rows if r]
        if rows:
            checks.extend(_claims_k2(inst, variant, rows))
        rows = [(n, summary.get(f"{inst}/K=N/2/{variant}/N={n}")) for n in ns]
        rows = [(n, r) for n, r in rows if r]
        if rows:
            checks.extend(_claims_half(inst, variant, rows))
    checks.append(
        ("no misidentification (footnote 7)", not wrong, f"errors: {wrong}" if wrong else "")
    )
    for text, ok, detail in checks:
        print(f"  [{'agree' if ok else 'DIFFER'}] {text}" + (f"   ({detail})" if detail else ""))
    return {"summary": summary, "errors": errors, "checks": checks}


if __name__ == "__main__":
    main(sys.argv[1:])
