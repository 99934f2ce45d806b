"""Every shipped experiment runs in its reduced (smoke-test) mode."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from topk_bench.config import load, read_config, shipped
from topk_bench.report import write_report
from topk_bench.run import run_experiment
from topk_bench.store import read_results

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA_FILES = {
    "zhou2014-rte": "rte_workers.csv",
    "shahrampour2017-captions": "caption_559_random.csv",
}


@pytest.mark.parametrize("name", sorted(shipped()))
def test_shipped_experiment_runs_reduced(name, tmp_path):
    raw, _ = read_config(name)
    data = None
    if raw.get("data", {}).get("required"):
        data = DATA / DATA_FILES.get(name, "missing.csv")
        if not data.exists():
            pytest.skip(f"{name} needs its data table ({data} not found)")
    skipped: list[str] = []
    exp = load(name, reduced=True, data=data, runs=1, warn=skipped.append)
    for message in skipped:
        warnings.warn(message, stacklevel=1)  # agents not written yet: shown, not failed
    report = run_experiment(exp, tmp_path / name, jobs=1, progress=False)
    df = read_results(tmp_path / name)
    assert report.ran == len(df) == len(exp.pairs())
    for metric in exp.metrics:
        assert df[metric].notna().all(), metric
    fixed_budget = [p.label for p in exp.points if p.setting == "fixed_budget"]
    budgets = {p.label: p.env_kwargs.get("budget") for p in exp.points}
    for row in df[df["point"].isin(fixed_budget)].itertuples():
        if budgets[row.point] is not None:
            assert row.pulls <= budgets[row.point]
    # the report (figures, and compare's paired tables against the baseline) works on every
    # shipped experiment's results
    html = write_report(tmp_path / name, n_resamples=100).read_text(encoding="utf-8")
    assert exp.name in html and "<img" in html
    if len(exp.agents) > 1:
        assert "Comparison with the baseline" in html
