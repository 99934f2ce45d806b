"""MkDocs hook: the agent and instance catalogs, generated at build time.

A page holding the marker ``<!-- agent-catalog -->`` gets the table of every registered
agent and one section per agent; ``<!-- instance-catalog -->`` gets the instance
catalog. Everything comes from the running code, so the pages cannot drift from it:

* agents: :func:`agents.available`, :func:`agents.agent_class` and the class itself
  (its docstring's first line and ``Paper:`` section, ``settings``, ``k_values``,
  ``distributions``, the constructor's signature, ``__module__``/``__qualname__`` for the
  link to the class's API entry). No module path is written here.
* instances: :func:`bandit_envs.instances.available` and
  :func:`bandit_envs.instances.catalog`;
* metrics (``<!-- metrics -->``): ``topk_bench.episodes.METRICS``;
* the ladder of RL tasks (``<!-- rl-ladder -->``): ``agents.learned.families.LADDER``
  (each task's family, documented spaces, what makes it hard and its reference agents);
* the hyper-parameter search spaces of ``rl-baselines`` (``<!-- rl-tuning-space -->``):
  ``topk_bench.experiments.rl_tuning.SPACES``; the searches its shipped config's tuned variants come
  from (``<!-- rl-tuning-searches -->``): ``topk_bench.experiments.rl_tuning.shipped_records``.

The link to an agent's API entry is an *optional* autorefs reference: a link when the
class is documented in the API reference, the class name as plain code otherwise.
"""

from __future__ import annotations

import html
import inspect
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AGENT_MARKER = "<!-- agent-catalog -->"
INSTANCE_MARKER = "<!-- instance-catalog -->"
METRICS_MARKER = "<!-- metrics -->"
LADDER_MARKER = "<!-- rl-ladder -->"
TUNING_MARKER = "<!-- rl-tuning-space -->"
SEARCHES_MARKER = "<!-- rl-tuning-searches -->"

_ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")
_SETTINGS = (("fixed_budget", "fixed budget"), ("fixed_confidence", "fixed confidence"))


def _import_path() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _md(text: str) -> str:
    """Docstring text as Markdown: Sphinx roles become code, ``|`` is escaped for tables."""
    return _ROLE.sub(lambda m: f"``{m[1]}``", text)


def _cell(text: str) -> str:
    return _md(text).replace("|", "\\|")


def _section(doc: str, title: str) -> str:
    """The indented block under ``title:`` in a Google-style docstring, as one paragraph."""
    lines = doc.splitlines()
    try:
        start = lines.index(f"{title}:")
    except ValueError:
        return ""
    block = []
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        block.append(line.strip())
    return " ".join(part for part in block if part)


def _parameters(cls: type) -> list[inspect.Parameter]:
    """Constructor parameters, following ``**kwargs`` up the MRO to the ``__init__`` it feeds."""
    params: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None or klass is object:
            continue
        forwards = False
        for p in list(inspect.signature(init).parameters.values())[1:]:
            if p.kind is p.VAR_KEYWORD:
                forwards = True
            elif p.kind is not p.VAR_POSITIONAL:
                params.setdefault(p.name, p)
        if not forwards:
            break
    return list(params.values())


def _default(p: inspect.Parameter) -> str:
    return "<required>" if p.default is p.empty else repr(p.default)


def _anchor(name: str) -> str:
    return "agent-" + name.replace("_", "-")


def _class_ref(cls: type) -> str:
    ident = html.escape(f"{cls.__module__}.{cls.__qualname__}", quote=True)
    return f'<autoref identifier="{ident}" optional><code>{cls.__qualname__}</code></autoref>'


def _settings(cls: type) -> str:
    have = getattr(cls, "settings", frozenset())
    return ", ".join(label for key, label in _SETTINGS if key in have) or "-"


def _k_values(cls: type) -> str:
    ks = getattr(cls, "k_values", None)
    return "any" if ks is None else ", ".join(f"k = {k}" for k in sorted(ks))


def _distributions(cls: type) -> str:
    ds = getattr(cls, "distributions", None)
    return "any" if ds is None else ", ".join(sorted(ds))


def agent_catalog() -> str:
    """Markdown: a summary table of every registered agent, then one section per agent."""
    _import_path()
    import agents

    names = agents.available()
    out = [
        f"{len(names)} registered agents (`agents.available()`).",
        "",
        "| name | algorithm | settings | k | rewards |",
        "| --- | --- | --- | --- | --- |",
    ]
    classes = {name: agents.agent_class(name) for name in names}
    for name, cls in classes.items():
        first = (inspect.getdoc(cls) or "").split("\n\n", 1)[0].replace("\n", " ")
        out.append(
            f"| [`{name}`](#{_anchor(name)}) | {_cell(first)} | {_settings(cls)} "
            f"| {_k_values(cls)} | {_distributions(cls)} |"
        )
    out.append("")
    for name, cls in classes.items():
        doc = inspect.getdoc(cls) or ""
        first = doc.split("\n\n", 1)[0].replace("\n", " ")
        paper = _section(doc, "Paper")
        out += [f"### `{name}` {{ #{_anchor(name)} }}", "", _md(first), ""]
        if paper:
            out += [f"**Paper.** {_md(paper)}", ""]
        params = ", ".join(f"`{p.name}={_default(p)}`" for p in _parameters(cls)) or "none"
        out += [
            f"- **Class:** {_class_ref(cls)} &middot; **settings:** {_settings(cls)} "
            f"&middot; **k:** {_k_values(cls)} &middot; **rewards:** {_distributions(cls)}",
            f'- **Parameters** (`agents.make("{name}", **params)`): {params}',
            "",
        ]
    return "\n".join(out)


def instance_catalog() -> str:
    """Markdown: one row per catalog instance."""
    _import_path()
    from bandit_envs import instances

    entries = instances.catalog()
    out = [
        f"{len(entries)} named instances (`bandit_envs.instances.available()`).",
        "",
        "| name | n_arms | k | rewards | parameters | means | source |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in instances.available():
        e = entries[name]
        n = "from the data file" if e.n_arms is None else f"{e.n_arms:,}"
        params = ", ".join(f"`{key}={value!r}`" for key, value in e.params.items()) or "-"
        drawn = " (drawn per episode)" if e.random and "per episode" not in e.description else ""
        out.append(
            f"| `{name}` | {n} | {e.k} | {e.distribution} | {params} "
            f"| {_cell(e.description)}{drawn} | {_cell(e.reference)} |"
        )
    return "\n".join(out)


def metrics_table() -> str:
    """Markdown: the benchmark's metrics and their meaning."""
    _import_path()
    from topk_bench.episodes import BINARY_METRICS, METRICS

    out = ["| metric | meaning |", "| --- | --- |"]
    for name, meaning in METRICS.items():
        kind = " (0/1 per episode: its mean is a rate)" if name in BINARY_METRICS else ""
        out.append(f"| `{name}` | {_cell(meaning)}{kind} |")
    return "\n".join(out)


def _family_args(kwargs: Any) -> str:
    """A family's ``gym.make`` kwargs but the shared prior, as code."""
    shown = {k: v for k, v in kwargs.items() if k not in ("instance", "instance_params")}
    return ", ".join(f"`{key}={value!r}`" for key, value in shown.items())


def ladder_table() -> str:
    """Markdown: one row per preset of every ladder task (its form, spaces, difficulty)."""
    _import_path()
    from agents.learned.families import LADDER, PRESETS, reference_agents, reference_label

    out = [
        "| task | env id and arguments | action space | observation space "
        "| what makes it hard | score | reference agents |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, task in LADDER.items():
        refs = ", ".join(
            f"`{reference_label(agent, params)}`" for agent, params in reference_agents(task)
        )
        for preset, (action, observation) in task.spaces.items():
            env_id, kwargs = PRESETS[preset]
            first = preset == name
            family = _family_args(kwargs if first else {"invalid_action": kwargs["invalid_action"]})
            label = f"`{preset}`" if first else f"`{preset}` (the same task, pull by pull)"
            out.append(
                f"| {label} | `{env_id}`: {family} | `{action}` | `{observation}` "
                f"| {_cell(task.hard) if first else 'the same; a masked policy plays it exactly'} "
                f"| `{task.score}` | {refs if first else '-'} |"
            )
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if AGENT_MARKER in markdown:
        markdown = markdown.replace(AGENT_MARKER, agent_catalog())
    if INSTANCE_MARKER in markdown:
        markdown = markdown.replace(INSTANCE_MARKER, instance_catalog())
    if METRICS_MARKER in markdown:
        markdown = markdown.replace(METRICS_MARKER, metrics_table())
    if LADDER_MARKER in markdown:
        markdown = markdown.replace(LADDER_MARKER, ladder_table())
    if TUNING_MARKER in markdown:
        _import_path()
        from topk_bench.experiments.rl_tuning import space_table

        markdown = markdown.replace(TUNING_MARKER, space_table())
    if SEARCHES_MARKER in markdown:
        markdown = markdown.replace(SEARCHES_MARKER, searches_text())
    return markdown


def searches_text() -> str:
    """Markdown: the table of the shipped searches, or a sentence when none is shipped."""
    _import_path()
    from topk_bench.experiments.rl_tuning import search_table, shipped_records

    records = shipped_records()
    if not records:
        return "No search is shipped: the shipped config trains the default hyper-parameters only."
    return search_table(records)
