"""topk-bench compare and report: paired tests, aggregates, claims, the HTML report."""

from __future__ import annotations

import json
import math
import re
from io import StringIO

import numpy as np
import pandas as pd
import pytest

from topk_bench import compare as cmp
from topk_bench.claims import judge_claim
from topk_bench.cli import main
from topk_bench.config import load
from topk_bench.episodes import ROW_COLUMNS
from topk_bench.report import build_report
from topk_bench.schema import ConfigError
from topk_bench.store import ResultStore, read_results
from topk_bench.summary import t_quantile
from topk_bench.tables import interval, pvalue

# ------------------------------------------------------------------ synthetic data

AGENTS = ("uniform", "same", "better", "worse")
SHIFT = {"uniform": 0.0, "same": 0.0, "better": -0.5, "worse": 0.5}


def synthetic(points: int = 3, runs: int = 30, seed: int = 0) -> pd.DataFrame:
    """Rows whose answers are known: 'same' equals the baseline on every episode,
    'better' is 0.5 lower (+ small noise), 'worse' 0.5 higher; misidentified: 'better'
    never errs where uniform does, 'worse' always errs."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(points):
        for r in range(runs):
            base = 1.0 + rng.exponential(1.0)
            miss = float(rng.random() < 0.5)
            for agent in AGENTS:
                noise = 0.0 if agent in ("uniform", "same") else 0.05 * rng.normal()
                value = base + SHIFT[agent] + noise
                m = {"uniform": miss, "same": miss, "better": 0.0, "worse": 1.0}[agent]
                rows.append(_row(p, r, agent, value, m))
    return pd.DataFrame(rows)


def _row(p: int, r: int, agent: str, regret: float, miss: float) -> dict:
    row = {c: None for c in ROW_COLUMNS}
    row.update(
        experiment="synthetic",
        point=f"P k={p + 1}",
        panel="P",
        x=str(p + 1),
        x_value=float(p + 1),
        agent=agent,
        agent_name=agent,
        params="{}",
        run=r,
        seed=1000 * p + r,
        agent_seed=7,
        aggregate_regret=regret,
        misidentified=miss,
        precision=1.0 - miss,
        fnr=miss,
        failure=math.nan,
        max_pulls_per_arm=1.0,
        reward=-regret,
        pulls=100,
        batches=100,
        terminated=True,
        truncated=False,
        wall_time=0.001,
        recommendation="0 1",
    )
    return row


# ------------------------------------------------------------------ unit level


def test_holm_matches_hand_computation():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max(0.06, 0.04)
    got = cmp.holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(got, [0.03, 0.06, 0.06, 0.02])
    got = cmp.holm([0.5, math.nan, 0.4])  # NaN is not part of the family
    np.testing.assert_allclose(got, [0.8, math.nan, 0.8])


def test_paired_t_on_a_known_shift():
    rng = np.random.default_rng(3)
    b = rng.exponential(size=40)
    a = b - 0.5 + 0.1 * rng.normal(size=40)
    res = cmp.paired_test(a, b, binary=False)
    d = a - b
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert res["test"] == "t" and res["n"] == 40
    assert res["diff"] == pytest.approx(d.mean())
    half = t_quantile(39) * se
    assert res["ci_low"] == pytest.approx(d.mean() - half, rel=1e-3)
    assert res["ci_high"] == pytest.approx(d.mean() + half, rel=1e-3)
    assert res["ci_low"] < -0.5 < res["ci_high"] < 0
    assert res["p_value"] < 1e-10


def test_paired_identical_and_constant_shift():
    b = np.array([0.1, 0.5, 0.2, 0.9])
    res = cmp.paired_test(b, b.copy(), binary=False)
    assert (res["diff"], res["p_value"], res["ci_low"], res["ci_high"]) == (0, 1, 0, 0)
    res = cmp.paired_test(b + 1, b, binary=False)  # t undefined: exact sign test
    assert res["test"] == "sign" and res["p_value"] == pytest.approx(2 * 0.5**4)
    nan = cmp.paired_test([math.nan], [1.0], binary=False)
    assert nan["n"] == 0 and math.isnan(nan["p_value"])


def test_exact_mcnemar():
    # 8 pairs (A=1, B=0), 1 pair (A=0, B=1), 11 concordant: p = 2 P(Bin(9, 1/2) <= 1)
    a = np.array([1] * 8 + [0] * 1 + [1] * 5 + [0] * 6, dtype=float)
    b = np.array([0] * 8 + [1] * 1 + [1] * 5 + [0] * 6, dtype=float)
    res = cmp.paired_test(a, b, binary=True)
    assert res["test"] == "mcnemar"
    assert res["p_value"] == pytest.approx(2 * (1 + 9) / 2**9)
    assert res["diff"] == pytest.approx(7 / 20)
    assert 0 < res["ci_low"] < 7 / 20 < res["ci_high"] <= 9 / 20
    with pytest.raises(cmp.CompareError, match="0.5"):
        cmp.paired_test([0.5, 1], [0, 1], binary=True)


def test_paired_table_known_answers():
    df = synthetic()
    for metric in ("aggregate_regret", "misidentified"):
        t = cmp.paired_table(df, metric, "uniform", agent_order=AGENTS)
        assert len(t) == 3 * 3
        outcome = t.groupby("agent")["outcome"].agg(set).to_dict()
        assert outcome == {"same": {"tie"}, "better": {"win"}, "worse": {"loss"}}
        assert set(t["test"]) == ({"mcnemar"} if metric == "misidentified" else {"t"})
        same = t[t["agent"] == "same"]
        assert (same["diff"] == 0).all() and (same["p_holm"] == 1).all()
        better = t[t["agent"] == "better"]
        if metric == "aggregate_regret":
            assert ((better["ci_low"] < -0.5) & (better["ci_high"] > -0.5)).all()
    # higher is better for precision: 'better' (never errs) wins there too
    t = cmp.paired_table(df, "precision", "uniform")
    assert set(t[t["agent"] == "better"]["outcome"]) == {"win"}
    w = cmp.wtl_table(cmp.paired_table(df, "aggregate_regret", "uniform"), AGENTS)
    got = {r.agent: (r.wins, r.ties, r.losses) for r in w.itertuples()}
    assert got == {"same": (0, 3, 0), "better": (3, 0, 0), "worse": (0, 0, 3)}


def test_holm_family_makes_weak_effects_ties():
    """One small effect among many comparisons: significant alone, not after Holm."""
    rng = np.random.default_rng(5)
    rows = []
    for p in range(10):
        for r in range(30):
            base = rng.normal(5, 1)
            rows.append(_row(p, r, "uniform", base, 0.0))
            bump = 0.6 if p == 0 else 0.0
            rows.append(_row(p, r, "x", base + rng.normal(bump, 1.0), 0.0))
    t = cmp.paired_table(pd.DataFrame(rows), "aggregate_regret", "uniform")
    assert (t["p_holm"] >= t["p_value"]).all()
    assert t["p_holm"].max() <= 1
    raw_sig = t["p_value"] < 0.05
    holm_sig = t["p_holm"] < 0.05
    assert holm_sig.sum() <= raw_sig.sum()


def test_aggregates_known_answers():
    df = synthetic()
    agg = cmp.aggregate_table(df, "aggregate_regret", "uniform", agent_order=AGENTS,
                              n_resamples=300)  # fmt: skip
    row = agg.set_index("agent")
    assert math.isnan(row.loc["uniform", "poi"])
    # identical episodes: IQM equal to the baseline's, P(improvement) exactly 1/2
    assert row.loc["same", "iqm"] == pytest.approx(row.loc["uniform", "iqm"])
    assert (row.loc["same", "poi"], row.loc["same", "poi_low"]) == (0.5, 0.5)
    assert row.loc["better", "poi"] == 1.0 and row.loc["worse", "poi"] == 0.0
    assert row.loc["better", "iqm_high"] < row.loc["uniform", "iqm_low"]
    assert row.loc["worse", "iqm_low"] > row.loc["uniform", "iqm_high"]
    for agent in AGENTS:
        assert row.loc[agent, "iqm_low"] <= row.loc[agent, "iqm"] <= row.loc[agent, "iqm_high"]
    # deterministic for a fixed seed
    again = cmp.aggregate_table(df, "aggregate_regret", "uniform", agent_order=AGENTS,
                                n_resamples=300)  # fmt: skip
    pd.testing.assert_frame_equal(agg, again)


def test_performance_profiles_match_direct_count():
    df = synthetic()
    taus = [0.5, 1.0, 1.5]
    prof = cmp.performance_profiles(df, "aggregate_regret", "uniform", taus=taus,
                                    n_resamples=200)  # fmt: skip
    means = df[df["agent"] == "uniform"].groupby("point")["aggregate_regret"].mean()
    score = df["aggregate_regret"] / df["point"].map(means)
    for agent in AGENTS:
        mine = prof[prof["agent"] == agent]
        direct = [(score[df["agent"] == agent] <= t).mean() for t in taus]
        np.testing.assert_allclose(mine["fraction"], direct)
        assert (mine["low"] <= mine["fraction"] + 1e-12).all()
        assert (mine["fraction"] <= mine["high"] + 1e-12).all()
    same, base = (prof[prof["agent"] == a]["fraction"].to_numpy() for a in ("same", "uniform"))
    np.testing.assert_array_equal(same, base)


def test_profiles_stay_numeric_when_a_metric_has_none():
    """A 0/1 metric whose baseline never errs has no profile; the others' columns stay float.

    (Concatenating the empty frame made every column object-typed and the report's plot
    failed on it: seen on delta-calibration's reduced results.)
    """
    df = synthetic()
    df.loc[df["agent"] == "uniform", "misidentified"] = 0.0
    assert len(cmp.performance_profiles(df, "misidentified", "uniform", n_resamples=100)) == 0
    comp = cmp.compare(df, ["misidentified", "aggregate_regret"], "uniform", n_resamples=100)
    assert set(comp.profiles["metric"]) == {"aggregate_regret"}
    for column in ("tau", "fraction", "low", "high"):
        assert comp.profiles[column].dtype == np.float64, column


def test_bad_input_names_value_and_rule():
    df = synthetic(points=1, runs=5)
    with pytest.raises(cmp.CompareError, match=r"baseline 'nobody'.*agents: uniform"):
        cmp.compare(df, ["aggregate_regret"], "nobody")
    with pytest.raises(cmp.CompareError, match="unknown metric 'regret'"):
        cmp.compare(df, ["regret"], "uniform")
    with pytest.raises(cmp.CompareError, match=r"alpha must lie in \(0, 1\), got 2"):
        cmp.paired_table(df, "aggregate_regret", "uniform", alpha=2)
    with pytest.raises(cmp.CompareError, match="resamples must be an integer >= 100, got 5"):
        cmp.aggregate_table(df, "aggregate_regret", "uniform", n_resamples=5)
    unpaired = df.copy()
    unpaired.loc[(unpaired["agent"] == "better") & (unpaired["run"] == 3), "seed"] = 99
    with pytest.raises(cmp.CompareError, match=r"point 'P k=1' run 3: .*different environment"):
        cmp.paired_table(unpaired, "aggregate_regret", "uniform")


# ------------------------------------------------------------------ claims


def _claim(**over):
    claim = {
        "text": "t",
        "source": "",
        "metric": "aggregate_regret",
        "agents": ["better"],
        "relation": "lower",
        "than": ["uniform"],
        "panels": [],
        "points": [],
        "x": [],
        "fraction": 1.0,
        "alpha": 0.05,
    }
    claim.update(over)
    return claim


def test_claim_verdicts():
    df = synthetic()
    assert judge_claim(df, _claim()).verdict == "holds"
    assert judge_claim(df, _claim(agents=["worse"])).verdict == "does not hold"
    assert judge_claim(df, _claim(agents=["same"])).verdict == "inconclusive"
    assert judge_claim(df, _claim(agents=["worse"], relation="higher")).verdict == "holds"
    assert judge_claim(df, _claim(agents=["ghost"])).verdict == "not judged"
    r = judge_claim(df, _claim(agents=["better", "worse"], than=["uniform"], x=["2"]))
    assert len(r.comparisons) == 2 and (r.supporting, r.contradicting) == (1, 1)
    assert r.verdict == "does not hold"
    half = judge_claim(df, _claim(agents=["better", "same"], fraction=0.5))
    assert half.verdict == "holds" and half.supporting == 3


CLAIMS_CONFIG = """
name = "claims-test"
metrics = ["aggregate_regret", "misidentified"]
runs = 12
x = "k"
env = { n_arms = 12, budget = 180, instance = "zhou2014-two-level" }
[[agents]]
name = "uniform"
[[agents]]
name = "sar"
label = "SAR"
[[agents]]
name = "optmai"
label = "OptMAI"
params = { beta = 0.8 }
[[sweeps]]
panel = "two-level"
vary = { k = [2, 3] }
x = "k"
[[claims]]
text = "uniform sampling performs the worst"
source = "zhou2014 Sec. 6.1"
metric = "aggregate_regret"
agents = ["uniform"]
relation = "higher"
than = ["SAR", "OptMAI"]
panels = ["two-level"]
[[claims]]
text = "SAR beats OptMAI at k = 3"
metric = "misidentified"
agents = ["SAR"]
relation = "lower"
than = ["OptMAI"]
x = [3]
"""


@pytest.mark.parametrize(
    "change, match",
    [
        ('than = ["SAR", "OptMAI"]', r"claims\[0\]\.than: 'Nobody' is not an agent label"),
        ('relation = "higher"', r"claims\[0\]\.relation: must be 'lower' or 'higher', got 'worse'"),
        ('panels = ["two-level"]', r"claims\[0\]\.panels: 'nowhere' is not a panel"),
        ("x = [3]", r"claims\[1\]\.x: '7' is not an x value"),
        ('metric = "misidentified"', r"claims\[1\]\.metric: unknown metric 'errors'"),
    ],
)
def test_bad_claims_are_config_errors(tmp_path, change, match):
    bad = {
        'than = ["SAR", "OptMAI"]': 'than = ["Nobody"]',
        'relation = "higher"': 'relation = "worse"',
        'panels = ["two-level"]': 'panels = ["nowhere"]',
        "x = [3]": "x = [7]",
        'metric = "misidentified"': 'metric = "errors"',
    }[change]
    path = tmp_path / "c.toml"
    path.write_text(CLAIMS_CONFIG.replace(change, bad, 1))
    with pytest.raises(ConfigError, match=match):
        load(path)


def test_shipped_claims_load_in_both_modes():
    for name, n in (("quick", 3), ("zhou2014-fig1", 4), ("shahrampour2017-fig2", 5)):
        for reduced in (False, True):
            exp = load(name, reduced=reduced)
            assert len(exp.claims) == n
            assert exp.describe()["claims"] == [dict(c) for c in exp.claims]


# ------------------------------------------------------------------ CLI, real run


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    (root / "c.toml").write_text(CLAIMS_CONFIG)
    out = root / "out"
    argv = ["run", str(root / "c.toml"), "--out", str(out), "--jobs", "1", "--no-progress",
            "--no-report"]  # fmt: skip
    assert main(argv) == 0
    return out


def test_cli_compare_text_csv_json(real_run, capsys):
    assert main(["compare", str(real_run), "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert "baseline 'uniform'" in out
    assert "aggregate_regret (lower is better): 4 comparisons with uniform" in out
    assert "wins / ties / losses against uniform" in out and "IQM score" in out

    args = ["compare", str(real_run), "--baseline", "SAR", "--metric", "aggregate_regret"]
    assert main([*args, "--format", "csv", "--resamples", "200"]) == 0
    table = pd.read_csv(StringIO(capsys.readouterr().out))
    assert len(table) == 2 * 2 and set(table["baseline"]) == {"SAR"}
    # the differences are per-run pairs of the stored rows
    df = read_results(real_run)
    for r in table.itertuples():
        a = df[(df["point"] == r.point) & (df["agent"] == r.agent)].set_index("run")
        b = df[(df["point"] == r.point) & (df["agent"] == "SAR")].set_index("run")
        assert r.diff == pytest.approx((a["aggregate_regret"] - b["aggregate_regret"]).mean())
        assert r.n == 12

    assert main([*args, "--format", "json", "--resamples", "200"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"] == "SAR" and data["metrics"] == ["aggregate_regret"]
    assert {r["agent"] for r in data["aggregate"]} == {"uniform", "SAR", "OptMAI"}
    assert len(data["performance_profiles"]) > 0 and len(data["wins_ties_losses"]) == 2


@pytest.mark.parametrize("width", [100, 60])
def test_cli_compare_fits_the_terminal(real_run, width, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["compare", str(real_run), "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= width
    comp = cmp.compare_dir(real_run, n_resamples=200)
    unwrapped = cmp.format_comparison(comp, width=10**6)
    assert max(len(line) for line in unwrapped.splitlines()) > width  # the layout was narrowed
    for r in comp.paired.itertuples():  # every figure, rounded alike
        assert interval(r.diff, r.ci_low, r.ci_high) in out and pvalue(r.p_holm) in out
    for r in comp.aggregate.itertuples():
        assert interval(r.iqm, r.iqm_low, r.iqm_high) in out


def test_cli_compare_bad_arguments(real_run, capsys):
    assert main(["compare", str(real_run), "--baseline", "LUCB"]) == 2
    err = capsys.readouterr().err
    assert "baseline 'LUCB' is not an agent" in err
    assert all(a in err.split("agents:")[1] for a in ("uniform", "SAR", "OptMAI"))
    assert main(["compare", str(real_run), "--metric", "regret"]) == 2
    assert "'regret'" in capsys.readouterr().err
    assert main(["compare", str(real_run), "--resamples", "3"]) == 2
    assert "got 3" in capsys.readouterr().err


def test_cli_report_html(real_run, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(real_run), "--out", str(out), "--resamples", "200"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    text = out.read_text()
    for anchor in ("claims", "results", "comparison", "run", "config"):
        assert f'id="{anchor}"' in text
    # self-contained: figures inline, no external resources
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 2 + 2  # two metrics + two performance profiles
    import base64

    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    assert not re.search(r'(src|href)="(http|/|\.\./)', text)
    # both claims got a verdict, with the paper's words
    verdicts = re.findall(r'class="verdict v-[a-z-]+">([a-z ]+)<', text)
    assert len(verdicts) == 2
    assert set(verdicts) <= {"holds", "does not hold", "inconclusive", "not judged"}
    assert "uniform sampling performs the worst" in text and "zhou2014 Sec. 6.1" in text
    # run facts: CPU time, seeds recomputed and equal, versions, config
    assert "CPU time" in text and "numpy" in text and "scipy" in text
    assert ">NO<" not in text and "Base seed 0" in text
    assert "claims-test" in text and "[[claims]]" in text


def test_report_marks_known_claims(tmp_path):
    """A synthetic results directory: each verdict where the data put it."""
    df = synthetic(points=2, runs=25)
    store = ResultStore(tmp_path)
    store.write(df.to_dict("records"))
    claims = [
        _claim(text="better is lower"),
        _claim(text="worse is lower", agents=["worse"]),
        _claim(text="same is lower", agents=["same"]),
        _claim(text="ghost is lower", agents=["ghost"]),
    ]
    store.merge_manifest(
        {
            "name": "synthetic",
            "metrics": ["aggregate_regret"],
            "runs": 25,
            "x_label": "k",
            "reduced": False,
            "points": [
                {"label": f"P k={p + 1}", "panel": "P", "x": str(p + 1), "agents": list(AGENTS)}
                for p in range(2)
            ],
            "agents": [{"label": a, "name": a, "params": {}} for a in AGENTS],
            "claims": claims,
        },
        0,
    )
    text = build_report(tmp_path, n_resamples=200)
    rows = re.findall(r"&ldquo;(.*?)&rdquo;.*?class=\"verdict v-[a-z-]+\">([a-z ]+)<", text)
    assert dict(rows) == {
        "better is lower": "holds",
        "worse is lower": "does not hold",
        "same is lower": "inconclusive",
        "ghost is lower": "not judged",
    }
    assert "missing from the results: ghost" in text


@pytest.mark.parametrize("command", ["compare", "report"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--baseline" in out and "--resamples" in out
    assert ("--metric" in out and "--format" in out) if command == "compare" else "--out" in out


# ------------------------------------------------------------------ rounding, titles, figures


def test_a_zero_difference_prints_as_zero_not_as_its_residue():
    """Differences of +-0.1 around the baseline: their mean is a floating-point residue."""
    df = synthetic(points=1, runs=30)
    base = df[df["agent"] == "uniform"]
    mirror = base.assign(agent="mirror", agent_name="mirror")
    signs = np.where(base["run"].to_numpy() % 2 == 0, 0.1, -0.1)
    mirror["aggregate_regret"] = base["aggregate_regret"].to_numpy() + signs
    comp = cmp.compare(pd.concat([base, mirror]), ["aggregate_regret"], "uniform", n_resamples=200)
    row = comp.paired.iloc[0]
    assert 0 < abs(row["diff"]) < 1e-15  # the residue the CSV keeps
    text = cmp.format_comparison(comp, width=100)
    assert f"  {interval(0.0, row['ci_low'], row['ci_high'])}  " in text
    assert interval(0.0, row["ci_low"], row["ci_high"]) == "0 [-0.0380, 0.0380]"
    assert "e-17" not in text and "e-16" not in text and "e-18" not in text


def _synthetic_dir(path, claims=None, name="synthetic", source=None) -> None:
    store = ResultStore(path)
    store.write(synthetic(points=2, runs=25).to_dict("records"))
    manifest = {
        "name": name,
        "metrics": ["aggregate_regret"],
        "runs": 25,
        "x_label": "k",
        "reduced": False,
        "points": [
            {"label": f"P k={p + 1}", "panel": "P", "x": str(p + 1), "agents": list(AGENTS)}
            for p in range(2)
        ],
        "agents": [{"label": a, "name": a, "params": {}} for a in AGENTS],
        "claims": claims or [],
    }
    if source:
        manifest["source"] = source
    store.merge_manifest(manifest, 0)


def test_report_has_no_claims_section_without_claims(tmp_path):
    _synthetic_dir(tmp_path)
    text = build_report(tmp_path, n_resamples=200)
    assert 'id="claims"' not in text and 'href="#claims"' not in text
    assert "claims" not in text.split("<nav>")[1].split("</nav>")[0].lower()
    assert 'id="results"' in text


def test_report_titles_a_users_claims_neutrally(tmp_path):
    _synthetic_dir(tmp_path, claims=[_claim(text="better is lower", source="my notes")])
    text = build_report(tmp_path, n_resamples=200)
    assert '<h2 id="claims">Claims</h2>' in text and '<a href="#claims">Claims</a>' in text
    assert "paper" not in text.split('<h2 id="results"')[0].split("<nav>")[1].lower()


def test_shipped_experiments_title_their_claims_after_the_papers(tmp_path):
    from topk_bench.config import shipped
    from topk_bench.report import claims_title

    def title(name: str, source: str | None = None) -> str:
        exp = load(name)
        manifest = {"name": name, "source": source or str(shipped()[name])}
        return claims_title(manifest, [dict(c) for c in exp.claims])

    assert title("zhou2014-fig1") == "The paper's claims"
    assert title("quick") == "The papers' claims"  # zhou2014 and shahrampour2017
    copy = tmp_path / "quick.toml"
    copy.write_text(shipped()["quick"].read_text())
    assert title("quick", str(copy)) == "Claims"  # a user's copy is a user's config


def test_report_rounds_like_the_terminal(tmp_path):
    """The IQM, P(improvement), differences and p-values as `topk-bench compare` prints them."""
    _synthetic_dir(tmp_path)
    text = build_report(tmp_path, n_resamples=200)
    comp = cmp.compare_dir(tmp_path, n_resamples=200)
    for r in comp.aggregate.itertuples():
        assert f">{interval(r.iqm, r.iqm_low, r.iqm_high)}<" in text
        if not math.isnan(r.poi):
            assert f">{interval(r.poi, r.poi_low, r.poi_high)}<" in text
    for r in comp.paired.itertuples():
        assert f">{interval(r.diff, r.ci_low, r.ci_high)}<" in text
        assert f">{pvalue(r.p_holm)}<" in text


def test_the_profiles_legend_leaves_the_title_and_the_axes_free(tmp_path):
    from topk_bench.plot import _plt
    from topk_bench.report import profile_figure

    _synthetic_dir(tmp_path)
    fig = profile_figure(cmp.compare_dir(tmp_path, n_resamples=200), "aggregate_regret")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    legend = fig.legends[0].get_window_extent(renderer)
    title = ax.title.get_window_extent(renderer)
    axes = ax.get_tightbbox(renderer)
    assert not legend.overlaps(title) and not legend.overlaps(axes)
    assert fig.bbox.contains(legend.x0, legend.y0) and fig.bbox.contains(legend.x1, legend.y1)
    assert legend.y1 <= axes.y0  # below the axes
    _plt().close(fig)
