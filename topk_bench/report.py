"""``topk-bench report``: one self-contained HTML file for a results directory.

The file needs nothing beside it (figures are base64 PNGs, the style sheet is inline)
and holds, in order: the claims the experiment's config states, with their verdicts from
the data (:mod:`topk_bench.claims`; titled "The paper's claims" for a shipped experiment,
"Claims" for another config, and left out when the config states none), the figures and
summary tables (means with 95% CIs, :mod:`topk_bench.summary`), the comparison with a
baseline agent (:mod:`topk_bench.compare`), the run (episodes, CPU time, seeds, package
versions) and the experiment's config (the manifest, and the config file when it is
still there). Figures in the tables are rounded as the terminal's
(:mod:`topk_bench.tables`: 3 significant digits, p-values 2).

Where each agent's class came from (module, file and its SHA-256, distribution and
version, or a local module) is the run's, recorded in the manifest; the other package
versions are those of the Python that writes the report.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from topk_bench.compare import HIGHER_IS_BETTER, CompareError, Comparison, compare
from topk_bench.tables import interval, pvalue, sig

__all__ = ["build_report", "describe_source", "warmup_flags", "write_report"]

PACKAGES = (
    "topk-bandit-envs",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "gymnasium",
    "matplotlib",
    "stable-baselines3",
    "torch",
    "ray",
)

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0;
       color: #1d2430; background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #dde2ea; padding-bottom: 4px; margin-top: 2em; }
h3 { margin-top: 1.6em; }
p.meta { color: #5a6577; margin-top: 0; }
nav ul { columns: 2; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.86em; }
th, td { border: 1px solid #d5dae3; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.win td.outcome { color: #11683a; font-weight: 600; }
tr.loss td.outcome { color: #a4161a; font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; }
img.figure { max-width: 100%; height: auto; border: 1px solid #e3e6ec; margin: 0.5em 0; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600;
           white-space: nowrap; }
.v-holds { background: #d3f2de; color: #11683a; }
.v-does-not-hold { background: #f9d6d5; color: #a4161a; }
.v-inconclusive { background: #fdf0c9; color: #7a5a00; }
.v-not-judged { background: #e4e7ec; color: #4a5567; }
pre { background: #f3f5f8; padding: 10px; overflow-x: auto; font-size: 0.8em;
      max-height: 480px; }
details { margin: 0.4em 0 1em; }
summary { cursor: pointer; color: #244b8f; }
.note { color: #5a6577; font-size: 0.9em; }
"""


_DIFF = "diff [95% CI]"


def _e(value: Any) -> str:
    return html.escape(str(value))


def _num(v: Any) -> str:
    """A real number as the terminal tables print it (:func:`topk_bench.tables.sig`)."""
    return sig(v) if isinstance(v, float) else ("-" if v is None else str(v))


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    numeric: Sequence[int] = (),
    row_classes: Sequence[str] | None = None,
) -> str:
    """An HTML table; cells are escaped unless they are already markup (``_Html``)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cells = []
        for j, cell in enumerate(row):
            text = cell.markup if isinstance(cell, _Html) else _e(cell)
            cls = ' class="num"' if j in numeric else ""
            if isinstance(cell, _Html) and cell.cls:
                cls = f' class="{cell.cls}"'
            cells.append(f"<td{cls}>{text}</td>")
        rc = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        body.append(f"<tr{rc}>{''.join(cells)}</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


class _Html:
    """A table cell that is already HTML."""

    def __init__(self, markup: str, cls: str = "") -> None:
        self.markup = markup
        self.cls = cls


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="figure" alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _verdict(v: str) -> _Html:
    return _Html(f'<span class="verdict v-{v.replace(" ", "-")}">{_e(v)}</span>')


def _versions() -> list[tuple[str, str]]:
    from importlib import metadata

    out = [("python", sys.version.split()[0]), ("platform", platform.platform())]
    for name in PACKAGES:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, "not installed"))
    return out


def _package_of(source: Mapping[str, Any]) -> str:
    """``"dist 1.0"`` (``editable`` if so), or ``"local module"``."""
    if source.get("distribution"):
        editable = " (editable install)" if source.get("editable") else ""
        return f"{source['distribution']} {source.get('version')}{editable}"
    return "local module (no installed distribution)"


def describe_source(source: Mapping[str, Any]) -> str:
    """One line: an agent's class and where it came from (a manifest's ``source``)."""
    where = [str(source.get("origin", "?"))]
    if source.get("entry_point_of"):
        where[0] += f" of {source['entry_point_of']}"
    where.append(_package_of(source))
    if source.get("model"):
        where.append(f"model {source['model']}")
    if source.get("file"):
        where.append(str(source["file"]))
    return f"{source.get('class', '?')} ({'; '.join(where)})"


# ---------------------------------------------------------------------- sections


def _claims_from(manifest: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], str]:
    """The claims of the manifest, else of the config it names (older results)."""
    if "claims" in manifest:
        return list(manifest.get("claims") or []), ""
    from topk_bench.claims import check_claims
    from topk_bench.config import read_config, shipped

    source = manifest.get("source") or ""
    for candidate in (source, manifest.get("name", "")):
        if not isinstance(candidate, str) or not candidate:
            continue
        if not (os.path.isfile(candidate) or candidate in shipped()):
            continue
        try:
            cfg, _ = read_config(candidate)
            if not cfg.get("claims"):
                return [], ""
            labels = [a["label"] for a in manifest.get("agents", [])]
            points = manifest.get("points", [])
            claims = check_claims(
                cfg["claims"],
                labels,
                [p["label"] for p in points],
                [p["panel"] for p in points],
                [p["x"] for p in points],
            )
            return list(claims), f"claims read from {candidate} (the manifest has none)"
        except Exception as err:  # a config that changed since the run
            return [], f"the claims of {candidate} cannot be checked against these results: {err}"
    return [], ""


def _is_shipped(manifest: Mapping[str, Any]) -> bool:
    """Whether the results are of a shipped experiment (its config file, not a copy)."""
    from topk_bench.config import shipped

    source, path = manifest.get("source"), shipped().get(str(manifest.get("name", "")))
    if not isinstance(source, str) or not source or path is None:
        return False
    try:
        return os.path.samefile(source, path)
    except OSError:
        return False


def claims_title(manifest: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> str:
    """The claims section's title: "The paper's claims" (or "papers'") for a shipped
    experiment whose claims all name their source paper, else "Claims"."""
    papers = {str(c.get("source") or "").split(" ")[0] for c in claims}
    if not claims or "" in papers or not _is_shipped(manifest):
        return "Claims"
    return "The paper's claims" if len(papers) == 1 else "The papers' claims"


def _claims_section(
    df: Any, manifest: Mapping[str, Any], point_order: Sequence[str]
) -> tuple[str, str] | None:
    """The claims section, ``(title, html)``; None when the experiment states no claims."""
    from topk_bench.claims import judge_claims

    claims, note = _claims_from(manifest)
    if not claims and not note:
        return None
    title = claims_title(manifest, claims)
    parts = [f'<h2 id="claims">{_e(title)}</h2>']
    if note:
        parts.append(f'<p class="note">{_e(note)}</p>')
    if not claims:
        return title, "\n".join(parts)
    results = judge_claims(df, claims, point_order)
    parts.append(
        "<p>Each claim is a set of paired comparisons (paired t-test; exact McNemar for 0/1 "
        "metrics), Holm-adjusted within the claim. <b>holds</b>: enough comparisons are "
        "significant in the claimed direction; <b>does not hold</b>: too many are significant "
        "the other way for it to hold; <b>inconclusive</b>: neither (too few runs to tell); "
        "<b>not judged</b>: no data for it here.</p>"
    )
    rows = []
    for r in results:
        c = r.claim
        where = []
        if c["panels"]:
            where.append("panels " + "; ".join(c["panels"]))
        if c["points"]:
            where.append("points " + "; ".join(c["points"]))
        if c["x"]:
            where.append("x in {" + ", ".join(c["x"]) + "}")
        test = (
            f"{', '.join(c['agents'])}: {c['metric']} {c['relation']} than "
            f"{', '.join(c['than'])}" + (f" ({'; '.join(where)})" if where else " (all points)")
        )
        quote = f"&ldquo;{_e(c['text'])}&rdquo;" + (
            f'<br><span class="note">{_e(c["source"])}</span>' if c["source"] else ""
        )
        rows.append([_Html(quote), test, _verdict(r.verdict), r.detail])
    parts.append(_table(["claim", "checked as", "verdict", "evidence"], rows))
    for i, r in enumerate(results):
        if not len(r.comparisons):
            continue
        crow = [
            [
                x.point,
                x.agent,
                x.than,
                x.n,
                _num(x.mean),
                _num(x.than_mean),
                interval(x.diff, x.ci_low, x.ci_high),
                pvalue(x.p_holm),
                x.verdict,
            ]
            for x in r.comparisons.itertuples()
        ]
        parts.append(
            f"<details><summary>Claim {i + 1}: the {len(crow)} comparisons</summary>"
            + _table(
                ["point", "agent", "than", "n", "mean", "than mean", _DIFF, "p (Holm)", ""],
                crow,
                numeric=(3, 4, 5, 6, 7),
            )
            + "</details>"
        )
    return title, "\n".join(parts)


def _figures_section(df: Any, manifest: Mapping[str, Any], summary: Any) -> str:
    from topk_bench.plot import plot_summary

    plot = manifest.get("plot") or {}
    parts = ['<h2 id="results">Results: means with 95% confidence intervals</h2>']
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = plot_summary(
            summary,
            tmp,
            title=manifest.get("name", ""),
            x_label=plot.get("xlabel") or manifest.get("x_label", "x"),
            kind=plot.get("kind", "auto"),
            logx=bool(plot.get("logx", False)),
            logy=plot.get("logy", ()),
            agent_names={a["label"]: a["name"] for a in manifest.get("agents", [])},
        )
        pngs = {p.stem: p.read_bytes() for p in paths}
    x_label = manifest.get("x_label", "x")
    for metric, mdf in summary.groupby("metric", sort=False):
        parts.append(f"<h3>{_e(metric)}</h3>")
        if metric in pngs:
            parts.append(_img(pngs[metric], f"{metric}: mean and 95% CI per agent and point"))
        agents = list(dict.fromkeys(mdf["agent"]))
        rows = []
        for _point, pdf in mdf.groupby("point", sort=False):
            cells = {r.agent: interval(r.mean, r.ci_low, r.ci_high) for r in pdf.itertuples()}
            first = pdf.iloc[0]
            rows.append([first["panel"], first["x"], *(cells.get(a, "") for a in agents),
                         "/".join(map(str, sorted(set(pdf["n"]))))])  # fmt: skip
        parts.append(
            f"<details><summary>table: {_e(metric)}, mean [95% CI] per point</summary>"
            + _table(["panel", x_label, *agents, "n"], rows, numeric=range(2, len(agents) + 2))
            + "</details>"
        )
    return "\n".join(parts)


def profile_figure(comp: Comparison, metric: str) -> Any:
    """The performance profiles of ``metric`` as a matplotlib figure (None without
    profiles): one line per agent with its bootstrap band, the legend below the axes."""
    from topk_bench.plot import _plt

    prof = comp.profiles[comp.profiles["metric"] == metric]
    if not len(prof):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for agent, adf in prof.groupby("agent", sort=False):
        line = ax.plot(adf["tau"], adf["fraction"], label=agent, lw=1.6)[0]
        ax.fill_between(adf["tau"], adf["low"], adf["high"], color=line.get_color(), alpha=0.18,
                        lw=0)  # fmt: skip
    cmp = ">=" if metric in HIGHER_IS_BETTER else "<="
    ax.set_xlabel(f"tau ({metric} / {comp.baseline}'s mean at the point)")
    ax.set_ylabel(f"fraction of episodes with score {cmp} tau")
    ax.set_ylim(-0.02, 1.02)
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.grid(alpha=0.3)
    ax.set_title(f"performance profiles: {metric} (stratified bootstrap 95% CI)", fontsize=10)
    agents = prof["agent"].nunique()
    rows = math.ceil(agents / 4)  # at most 4 entries a row, the rows about as full
    fig.legend(fontsize=7, loc="outside lower center", ncols=math.ceil(agents / rows))
    return fig


def _profile_png(comp: Comparison, metric: str) -> bytes | None:
    fig = profile_figure(comp, metric)
    if fig is None:
        return None
    from topk_bench.plot import _plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    _plt().close(fig)
    return buf.getvalue()


def _comparison_section(comp: Comparison) -> str:
    parts = [
        f'<h2 id="comparison">Comparison with the baseline: {_e(comp.baseline)}</h2>',
        "<p>Episodes are paired: all agents at the same (point, run) play the same instance "
        "and rewards. Per point: mean difference agent &minus; baseline with a 95% CI, "
        "paired t-test (exact McNemar for 0/1 metrics), p-values Holm-adjusted over all "
        f"comparisons of a metric, alpha = {comp.alpha}. Over all points: interquartile mean "
        "(IQM) of the scores normalized by the baseline's mean at each point, the probability "
        "that the agent does better than the baseline on the same episode (ties count 1/2), "
        "and performance profiles, each with a stratified-bootstrap 95% CI "
        "(<code>scipy.stats.bootstrap</code>, runs resampled within each point). Same as "
        "<code>topk-bench compare</code>.</p>",
    ]
    for metric in comp.metrics:
        better = "higher" if metric in HIGHER_IS_BETTER else "lower"
        parts.append(f"<h3>{_e(metric)} ({better} is better)</h3>")
        agg = comp.aggregate[comp.aggregate["metric"] == metric]
        wtl = comp.wtl[comp.wtl["metric"] == metric].set_index("agent")
        rows = []
        for r in agg.itertuples():
            w = wtl.loc[r.agent] if r.agent in wtl.index else None
            rows.append(
                [
                    r.agent,
                    "baseline" if w is None else f"{w.wins} / {w.ties} / {w.losses}",
                    f"{r.points_normalized}/{r.points}",
                    interval(r.iqm, r.iqm_low, r.iqm_high),
                    interval(r.poi, r.poi_low, r.poi_high),
                ]
            )
        parts.append(
            _table(
                ["agent", "wins / ties / losses", "points", "IQM score [95% CI]", "P(improvement)"],
                rows,
                numeric=(1, 2, 3, 4),
            )
        )
        png = _profile_png(comp, metric)
        if png:
            parts.append(_img(png, f"performance profiles of {metric}"))
        mdf = comp.paired[comp.paired["metric"] == metric]
        prow = [
            [
                r.panel,
                r.x,
                r.agent,
                r.n,
                _num(r.mean),
                _num(r.baseline_mean),
                interval(r.diff, r.ci_low, r.ci_high),
                r.test,
                pvalue(r.p_holm),
                _Html(_e(r.outcome), "outcome"),
            ]
            for r in mdf.itertuples()
        ]
        parts.append(
            f"<details><summary>per point: {len(prow)} paired comparisons with "
            f"{_e(comp.baseline)}</summary>"
            + _table(
                [
                    "panel",
                    comp.x_label,
                    "agent",
                    "n",
                    "mean",
                    "baseline",
                    _DIFF,
                    "test",
                    "p (Holm)",
                    "result",
                ],  # fmt: skip
                prow,
                numeric=(3, 4, 5, 6, 8),
                row_classes=list(mdf["outcome"]),
            )
            + "</details>"
        )
    parts += [f'<p class="note">{_e(n)}</p>' for n in comp.notes]
    return "\n".join(parts)


def warmup_flags(df: Any) -> Any:
    """Which rows of a results frame are warm-up episodes (the first an agent plays in a
    worker process); all ``False`` for results written before the ``warmup`` column."""
    if "warmup" in df.columns:
        return df["warmup"].fillna(False).astype(bool)
    return df["wall_time"] != df["wall_time"]  # all False


def _cpu_time_table(df: Any, manifest: Mapping[str, Any]) -> str:
    """Play time per agent, with the first episode of an agent in a process kept apart.

    That episode also compiles the agent's code (or loads it from numba's cache), which
    can take seconds where an episode takes a millisecond; results written before the
    ``warmup`` column existed show every episode as play time.
    """
    timed = df.assign(_warmup=warmup_flags(df))
    order = [a["label"] for a in manifest.get("agents", []) if a["label"] in set(df["agent"])]
    order += [a for a in df["agent"].unique() if a not in order]
    rows = []
    for agent in order:
        group = timed[timed["agent"] == agent]
        play = group.loc[~group["_warmup"], "wall_time"]
        first = group.loc[group["_warmup"], "wall_time"]
        rows.append([agent, len(group), len(play), f"{play.sum():.2f}",
                     f"{1000 * play.mean():.2f}" if len(play) else "-", len(first),
                     f"{first.sum():.2f}"])  # fmt: skip
    play_all = timed.loc[~timed["_warmup"], "wall_time"]
    first_all = timed.loc[timed["_warmup"], "wall_time"]
    rows.append(["total", len(df), len(play_all), f"{play_all.sum():.2f}", "",
                 len(first_all), f"{first_all.sum():.2f}"])  # fmt: skip
    return (
        "<h3>CPU time</h3><p>The time of each episode in its worker process (one episode at a "
        "time per process, so about its CPU time); scheduling and writing are not included. "
        "The first episode an agent plays in a worker process is its warm-up: it also compiles "
        "the agent's code or loads it from numba's cache, so it is counted apart (warm-up "
        "seconds, one such episode per agent and process) and play time is that of the "
        "other, warm episodes.</p>"
        + _table(
            [
                "agent",
                "episodes",
                "warm episodes",
                "play seconds",
                "ms per warm episode",
                "warm-up episodes",
                "warm-up seconds",
            ],
            rows,
            numeric=(1, 2, 3, 4, 5, 6),
        )
    )


def _run_section(df: Any, manifest: Mapping[str, Any]) -> str:
    from topk_bench.seeds import env_seed

    parts = ['<h2 id="run">The run</h2>']
    base_seed = int(manifest.get("base_seed", 0) or 0)
    runs = df.groupby(["point", "agent"]).size()
    parts.append(
        f"<p>{len(df)} episodes, {df['point'].nunique()} points, {df['agent'].nunique()} agents, "
        + (f"{runs.min()}" if runs.min() == runs.max() else f"{runs.min()}&ndash;{runs.max()}")
        + " runs per (point, agent); "
        f"config runs = {_e(manifest.get('runs'))}"
        f"{' (reduced mode)' if manifest.get('reduced') else ''}.</p>"
    )
    parts.append(_cpu_time_table(df, manifest))
    name = manifest.get("name", "")
    seeds = df[df["run"] == df["run"].min()].drop_duplicates("point").set_index("point")["seed"]
    prow = []
    for p in manifest.get("points", []) or [{"label": q} for q in df["point"].unique()]:
        label = p["label"]
        stored = seeds.get(label)
        expected = env_seed(name, p.get("seed_label", label), int(df["run"].min()), base_seed)
        prow.append([label, "-" if stored is None else int(stored), expected,
                     "yes" if stored is None or int(stored) == expected else "NO"])  # fmt: skip
    parts.append(
        f"<h3>Seeds</h3><p>Base seed {base_seed}. Environment seed of run r at point P: "
        "<code>topk_bench.seeds.env_seed(experiment, P, r, base_seed)</code> (shared by all "
        "agents: paired episodes); agent seed: <code>agent_seed(experiment, P, r, agent, "
        "base_seed)</code>. Every row stores both (<code>seed</code>, <code>agent_seed</code>). "
        "Run 0 at each point, stored against recomputed:</p>"
        + "<details><summary>seed table</summary>"
        + _table(["point", "stored env seed", "recomputed", "equal"], prow, numeric=(1, 2))
        + "</details>"
    )
    parts.append(_agents_table(manifest))
    parts.append(
        "<h3>Software</h3><p>Versions of the Python that wrote this report (the results "
        "record only the agents' classes, above).</p>" + _table(["package", "version"], _versions())
    )
    return "\n".join(parts)


def _agents_table(manifest: Mapping[str, Any]) -> str:
    """Where each agent's class came from, as the run recorded it (manifest ``source``)."""
    rows = []
    for a in manifest.get("agents", []):
        src = a.get("source")
        if not src:
            rows.append([a["label"], a["name"], "-", "not recorded", "-", "-", "-"])
            continue
        origin = str(src.get("origin", "-"))
        if src.get("entry_point_of"):
            origin += f" of {src['entry_point_of']}"
        file = str(src.get("file") or "-")
        if src.get("model"):
            file += f" (model {src['model']})"
        sha = src.get("sha256") or "-"
        rows.append([a["label"], a["name"], src.get("class", "-"), origin, _package_of(src),
                     file, sha[:16]])  # fmt: skip
    return (
        "<h3>Agents</h3><p>Where each agent's class came from when the run was started: its "
        "module's file (with the first 16 hex digits of its SHA-256), and the installed "
        "distribution with its version, or a local module.</p>"
        + _table(["agent", "name", "class", "from", "package", "file", "sha256"], rows)
    )


def _config_section(manifest: Mapping[str, Any]) -> str:
    parts = ['<h2 id="config">The experiment\'s config</h2>']
    source = manifest.get("source") or ""
    # manifests written before a fix in config.load may hold a list here: not a path
    if isinstance(source, str) and source and os.path.isfile(source):
        text = Path(source).read_text(encoding="utf-8")
        parts.append(
            f"<p>Config file <code>{_e(source)}</code> (as it is now):</p><pre>{_e(text)}</pre>"
        )
    parts.append(
        "<details><summary>manifest.json (what ran: points with their env kwargs, agents "
        "with their parameters)</summary>"
        f"<pre>{_e(json.dumps(manifest, indent=1, default=str))}</pre></details>"
    )
    return "\n".join(parts)


# -------------------------------------------------------------------------- main


def build_report(
    root: str | os.PathLike[str],
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
) -> str:
    """The HTML text of the report of results directory ``root``."""
    from topk_bench.store import ResultStore, read_results
    from topk_bench.summary import summarize

    manifest = ResultStore(root).manifest() or {}
    df = read_results(root)
    if len(df) == 0:
        raise CompareError(f"{root}: the results directory holds no episode yet")
    metrics = list(manifest.get("metrics") or ["aggregate_regret"])
    point_order = [p["label"] for p in manifest.get("points", [])]
    agent_order = [a["label"] for a in manifest.get("agents", [])]
    summary = summarize(df, metrics, point_order, agent_order)
    name = manifest.get("name", Path(root).name)
    claims = _claims_section(df, manifest, point_order)
    sections = [claims[1]] if claims else []
    sections.append(_figures_section(df, manifest, summary))
    if df["agent"].nunique() > 1:
        comp = compare(
            df,
            metrics,
            baseline,
            alpha=alpha,
            point_order=point_order,
            agent_order=agent_order,
            n_resamples=n_resamples,
            name=name,
            x_label=manifest.get("x_label", "x"),
        )
        sections.append(_comparison_section(comp))
    else:
        sections.append('<h2 id="comparison">Comparison</h2><p>Only one agent: nothing to '
                        "compare.</p>")  # fmt: skip
    sections += [_run_section(df, manifest), _config_section(manifest)]
    title = f"{name}{' (reduced)' if manifest.get('reduced') else ''}"
    nav = "".join(
        f'<li><a href="#{a}">{_e(t)}</a></li>'
        for a, t in (
            *([("claims", claims[0])] if claims else []),
            ("results", "Results"),
            ("comparison", "Comparison with the baseline"),
            ("run", "The run: CPU time, seeds, software"),
            ("config", "The config"),
        )
    )
    meta = (
        f"{_e(manifest.get('reference', ''))}<br>results: <code>{_e(os.path.abspath(root))}"
        f"</code>, {len(df)} episodes; report written {time.strftime('%Y-%m-%d %H:%M:%S')}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}: topk-bench report</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head><body><main>"
        f'<h1>{_e(title)}</h1><p class="meta">{meta}</p>'
        f"<p>{_e(manifest.get('description', ''))}</p>"
        f"<nav><ul>{nav}</ul></nav>\n" + "\n".join(sections) + "\n</main></body></html>\n"
    )


def write_report(
    root: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> Path:
    """Write :func:`build_report` to ``out`` (default ``DIR/report.html``); return the path."""
    text = build_report(root, **kwargs)
    path = Path(out) if out else Path(root) / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
