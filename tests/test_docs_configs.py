"""The derived experiment configs of the results pages (docs/figures/*/*.toml) load.

Load only, nothing runs. A figure's directory may hold several configs with the same
experiment name (e.g. ``config.toml`` plus ``config-lucb.toml`` for one expensive agent
with fewer runs) that are run into one results directory; the runner merges them only if
their shared points and agents agree, which is checked here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from topk_bench.config import load, read_config, shipped

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
CONFIGS = sorted(FIGURES.glob("*/*.toml"))
DATA = ROOT.parent / "shared" / "data"
# Data tables of the real-data experiments, by figure directory (= shipped experiment name).
DATA_FILES = {
    "zhou2014-rte": "rte_workers.csv",
    "shahrampour2017-captions": "caption_559_random.csv",
}


def _data_for(path: Path) -> Path | None:
    raw, _ = read_config(path)
    if not raw.get("data", {}).get("required"):
        return None
    data = DATA / DATA_FILES.get(path.parent.name, "missing.csv")
    if not data.exists():
        pytest.skip(f"{path} needs its data table ({data} not found)")
    return data


def _id(path: Path) -> str:
    return str(path.relative_to(FIGURES))


def test_every_figure_directory_has_a_config():
    dirs = [d for d in FIGURES.iterdir() if d.is_dir()] if FIGURES.exists() else []
    for d in dirs:
        if list(d.glob("*.toml")):
            assert (d / "config.toml").exists(), f"{d}: extra configs but no config.toml"


@pytest.mark.parametrize("path", CONFIGS, ids=_id)
def test_derived_config_loads(path):
    data = _data_for(path)
    exp = load(path, data=data)
    assert exp.points and exp.agents and exp.runs >= 1
    # a derived config must not reuse a shipped experiment's name (nor its seeds)
    assert exp.name not in shipped(), f"{path}: name {exp.name!r} is a shipped experiment's"
    assert exp.description.strip(), f"{path}: say how it differs from the shipped config"
    raw, _ = read_config(path)
    if "reduced" in raw:
        assert load(path, reduced=True, data=data).points


@pytest.mark.parametrize(
    "directory",
    sorted({p.parent for p in CONFIGS if len(list(p.parent.glob("*.toml"))) > 1}),
    ids=lambda d: d.name,
)
def test_configs_of_one_figure_merge(directory):
    """Configs run into one results directory: same name, same env per point label, same agents."""
    exps = [load(p, data=_data_for(p)) for p in sorted(directory.glob("*.toml"))]
    assert len({e.name for e in exps}) == 1, [e.name for e in exps]
    points: dict[str, tuple] = {}
    agents: dict[str, tuple] = {}
    for exp in exps:
        for p in exp.points:
            key = (p.env_id, sorted(p.env_kwargs.items(), key=lambda kv: kv[0]))
            assert points.setdefault(p.label, key) == key, f"point {p.label!r} differs"
        for a in exp.agents:
            key = (a.name, sorted(a.params.items()))
            assert agents.setdefault(a.label, key) == key, f"agent {a.label!r} differs"
