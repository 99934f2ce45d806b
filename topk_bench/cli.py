"""``topk-bench``: list, check, run, plot and summarise benchmark experiments.

Examples::

    topk-bench list
    topk-bench run quick                      # about a minute on 2 cores
    topk-bench run zhou2014-fig1 --reduced --jobs 2
    topk-bench run zhou2014-rte --data rte_workers.csv --runs 20
    topk-bench run my_config.toml --backend ray --address auto
    topk-bench summary results/quick
    topk-bench plot results/quick
    topk-bench compare results/quick --baseline uniform --metric aggregate_regret
    topk-bench report results/quick           # results/quick/report.html

An agent of a config is a name ``topk-bench list`` shows (built-in, registered with
``agents.register``, or declared by an installed distribution in the entry-point group
``topk_bandit_envs.agents``), an import path ``package.module:Class`` (any agent class
on the Python path: ``PYTHONPATH=. topk-bench run mine.toml`` for a module next to the
config), or a saved model ``ppo:PATH``. ``check`` imports every agent and says where
its class comes from; the run's manifest and report record it.

The text tables of ``run``, ``summary`` and ``compare`` (and the tables of ``report``)
give figures to 3 significant digits and p-values to 2, and fit the terminal's width
(``COLUMNS``; 100 when the output is not a terminal) by splitting a wide table into
narrower ones; ``DIR/summary.csv`` and ``compare --format csv|json`` keep full precision.
``summary`` (and ``run`` after its episodes) prints, per metric and panel, one table of
``mean ± half-width`` of the 95% CI with the agents as rows and the points as columns.

Exit status: 0 success, 1 failure while running, 2 bad config or arguments,
130 interrupted (finished episodes are saved; rerun the same command to resume).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from topk_bench.config import Experiment

__all__ = ["main"]


def _warn(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr)


def _default_out(name: str, reduced: bool) -> Path:
    return Path("results") / (f"{name}-reduced" if reduced else name)


def _cmd_list(args: argparse.Namespace) -> int:
    import agents
    from agents import registry
    from bandit_envs import instances
    from topk_bench.config import read_config, shipped

    show_all = not (args.agents or args.instances or args.experiments)
    if show_all or args.agents:
        print("Agents (available now; where each comes from in parentheses):")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # shadowed entry points
            names = agents.available()
        for name in names:
            origin = registry.agent_origin(name)
            if origin == "entry point":
                origin = f"entry point of {registry.agent_source(name)['entry_point_of']}"
            try:
                cls = agents.agent_class(name)
            except (ImportError, TypeError) as err:
                print(f"  {name:<16} ({origin}) cannot be used: {err}")
                continue
            settings = ", ".join(sorted(getattr(cls, "settings", ("any setting",))))
            print(f"  {name:<16} {cls.__module__}.{cls.__qualname__}  [{settings}]  ({origin})")
        print("  ppo:PATH / a2c:PATH / dqn:PATH  a saved stable-baselines3 model")
        print("  module:Class     an agent class imported from sys.path (e.g. myalgo:MyAgent)")
        print()
    if show_all or args.instances:
        print("Instances:")
        for name, entry in instances.catalog().items():
            n = entry.n_arms if entry.n_arms is not None else "file"
            print(f"  {name:<28} n={n!s:<7} k={entry.k:<4} {entry.reference}")
        print()
    if show_all or args.experiments:
        print("Shipped experiments (topk-bench run NAME [--reduced]):")
        for name, path in shipped().items():
            cfg, _ = read_config(path)
            data = cfg.get("data")
            needs = "  [--data PATH required]" if data and data.get("required") else ""
            print(f"  {name:<26} runs={cfg.get('runs')!s:<5} {cfg.get('reference', '')}{needs}")
    return 0


def _load(args: argparse.Namespace):
    from topk_bench.config import load

    return load(args.experiment, reduced=args.reduced, data=args.data, runs=args.runs, warn=_warn)


def _fewer(exp: Experiment) -> str:
    """`` (fewer for LABEL: N, ...)`` for agents that play fewer runs, else ``""``."""
    few = [f"{a.label}: {exp.runs_of(a)}" for a in exp.agents if exp.runs_of(a) < exp.runs]
    return f" (fewer for {', '.join(few)})" if few else ""


def _episode_count(exp: Experiment) -> str:
    """The episodes to run: a product when it is one (``14 points x 6 agents x 80 runs =
    6720 episodes``), else the count with what makes it no product."""
    n_points, n_agents, n = len(exp.points), len(exp.agents), exp.episodes()
    few = [f"{a.label}: {exp.runs_of(a)}" for a in exp.agents if exp.runs_of(a) < exp.runs]
    subset = len(exp.pairs()) < n_points * n_agents
    if not (few or subset):
        return f"{n_points} points x {n_agents} agents x {exp.runs} runs = {n} episodes"
    notes = ["some points play a subset of the agents"] if subset else []
    if few:
        notes.append(f"fewer runs for {', '.join(few)}")
    return (
        f"{n} episodes ({n_points} points, {n_agents} agents, {exp.runs} runs; {'; '.join(notes)})"
    )


def _cmd_check(args: argparse.Namespace) -> int:
    exp = _load(args)
    pairs = exp.pairs()
    print(
        f"{exp.name}: {len(exp.points)} points, {len(exp.agents)} agents, "
        f"{len(pairs)} (point, agent) pairs, "
        f"{exp.runs} runs{_fewer(exp)} -> {exp.episodes()} episodes"
    )
    from topk_bench.report import describe_source

    for a in exp.agents:
        print(f"  agent {a.label}: {describe_source(a.source) if a.source else a.name}")
    for p in exp.points:
        kw = ", ".join(f"{k}={v}" for k, v in p.env_kwargs.items())
        print(
            f"  {p.label}  [{p.setting}] agents: {', '.join(p.agents) or '(none)'}\n"
            f"      {p.env_id}({kw})"
        )
    return 0


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    """SIGTERM (e.g. from a batch scheduler) stops the run like Ctrl-C: finished rows are kept."""
    raise KeyboardInterrupt(f"signal {signum}")


def _store_warnings_to_stderr() -> None:
    """Inside ``warnings.catch_warnings()``: print StoreWarnings as ``warning: ...`` lines."""
    from topk_bench.store import StoreWarning

    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, StoreWarning):
            _warn(str(message))
        else:
            default(message, category, filename, lineno, file, line)

    warnings.simplefilter("always", StoreWarning)
    warnings.showwarning = show


def _cmd_run(args: argparse.Namespace) -> int:
    from topk_bench.run import run_experiment

    exp = _load(args)
    out = Path(args.out) if args.out else _default_out(exp.name, exp.reduced)
    if args.retrain and exp.fitted_by:
        from topk_bench.config import load
        from topk_bench.run import FITTED, refit_config

        print(
            f"{exp.name}: fitting its parameters anew ({exp.fitted_by}) -> {out / FITTED}",
            file=sys.stderr,
        )
        cfg = refit_config(exp, out)
        exp = load(cfg, reduced=args.reduced, data=args.data, runs=args.runs, warn=_warn)
    backend = args.backend
    print(
        f"{exp.name}{' (reduced)' if exp.reduced else ''}: {_episode_count(exp)} -> {out}",
        file=sys.stderr,
    )
    previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        with warnings.catch_warnings():
            _store_warnings_to_stderr()
            report = run_experiment(
                exp,
                out,
                jobs=args.jobs,
                backend=backend,
                address=args.address,
                base_seed=args.seed,
                chunk_size=args.chunk_size,
                progress=not args.no_progress,
                flush_interval=args.flush_interval,
                retrain=args.retrain,
            )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: finished episodes are saved in {out}; run the same command to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(
        f"ran {report.ran} episodes ({report.already_done} were already done) in "
        f"{report.wall_time:.1f} s ({report.episodes_per_second:.1f} episodes/s)",
        file=sys.stderr,
    )
    if not args.no_report:
        from topk_bench.plot import plot_dir
        from topk_bench.summary import summarize_dir

        print(summarize_dir(out))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            paths = plot_dir(out)
        from topk_bench.tables import wrap

        figures = f"; figures in {paths[0].parent}: {', '.join(p.name for p in paths)}"
        print(wrap(f"\nwrote {out / 'summary.csv'}{figures if paths else ''}"), file=sys.stderr)
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from topk_bench.summary import summarize_dir

    print(summarize_dir(args.dir, metrics=args.metrics))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from topk_bench.plot import plot_dir

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in plot_dir(args.dir, metrics=args.metrics):
            print(path)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from topk_bench.compare import CompareError, compare_dir, format_comparison

    try:
        comp = compare_dir(
            args.dir,
            metrics=args.metrics,
            baseline=args.baseline,
            alpha=args.alpha,
            n_resamples=args.resamples,
            seed=args.seed,
        )
    except CompareError as err:
        print(f"topk-bench compare: {err}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(comp.to_json())
    elif args.format == "csv":
        print(comp.paired.to_csv(index=False), end="")
    else:
        print(format_comparison(comp))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from topk_bench.compare import CompareError
    from topk_bench.report import write_report

    try:
        path = write_report(
            args.dir,
            args.out,
            baseline=args.baseline,
            alpha=args.alpha,
            n_resamples=args.resamples,
        )
    except CompareError as err:
        print(f"topk-bench report: {err}", file=sys.stderr)
        return 2
    print(path)
    return 0


def _compare_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="a results directory written by 'topk-bench run'")
    p.add_argument(
        "--baseline", metavar="AGENT", help="agent label to compare with; default: uniform/first"
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument(
        "--resamples", type=int, default=2000, metavar="B", help="bootstrap resamples (2000)"
    )


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        from agents.learned.cli import add_train_arguments, check_train_args, train_from_args
    except ImportError as err:
        print(
            f"topk-bench train needs stable-baselines3: pip install 'topk-bandit-envs[rl]' ({err})",
            file=sys.stderr,
        )
        return 1
    parser = argparse.ArgumentParser(
        prog="topk-bench train",
        description="Train PPO (or A2C, DQN, RecurrentPPO, MaskablePPO) on a TopK family, save "
        "it, and compare it with scripted agents (--compare; the same as examples/train_ppo.py).",
    )
    add_train_arguments(parser)
    options = parser.parse_args(args.rest)
    try:
        check_train_args(options)
    except ValueError as err:
        print(f"topk-bench train: {err}", file=sys.stderr)
        return 2
    train_from_args(options)
    return 0


def _experiment_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "experiment",
        metavar="EXPERIMENT",
        help="a shipped experiment name (see 'topk-bench list') or a TOML/YAML config file",
    )
    p.add_argument(
        "--reduced",
        action="store_true",
        help="smoke-test mode: the config's fewer runs and smaller instances/budgets",
    )
    p.add_argument(
        "--data",
        metavar="PATH",
        help="data table for real-data experiments (formats of the instance loaders)",
    )
    p.add_argument(
        "--runs", type=int, metavar="N", help="episodes per (point, agent); default: the config's"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="topk-bench",
        description="Benchmark top-k arm identification agents on the papers' experiments.",
        epilog="Run 'topk-bench COMMAND --help' for the options of a command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "list",
        help="list agents, instances and shipped experiments",
        description="List the available agents, the instance catalog and the shipped experiments.",
    )
    p.add_argument("--agents", action="store_true", help="only agents")
    p.add_argument("--instances", action="store_true", help="only instances")
    p.add_argument("--experiments", action="store_true", help="only experiments")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser(
        "check",
        help="validate an experiment config and show its points",
        description="Load and validate a config (nothing runs); print its points and agents.",
    )
    _experiment_args(p)
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser(
        "run",
        help="run an experiment (resumable)",
        description="Run every episode of an experiment that the output directory lacks, "
        "then print the summary table and write the figures. Rerunning the same command resumes; "
        "results do not depend on --jobs or --backend.",
    )
    _experiment_args(p)
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="J",
        help="worker processes (Ray: tasks in flight); default: all cores; 1 runs in-process",
    )
    p.add_argument(
        "--backend",
        choices=("process", "ray"),
        default="process",
        help="'process' (default: a process pool on this machine) or 'ray'",
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster address (e.g. 'auto'); default: start a local Ray instance",
    )
    p.add_argument(
        "--out", "-o", metavar="DIR", help="results directory; default results/EXPERIMENT[-reduced]"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="base seed mixed into every episode seed (default 0)",
    )
    p.add_argument(
        "--chunk-size", type=int, metavar="C", help="episodes per task (default: automatic)"
    )
    p.add_argument(
        "--flush-interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="write finished rows at least this often (default 1; 0: after every chunk)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-report", action="store_true", help="do not print the summary or write figures"
    )
    p.add_argument(
        "--retrain",
        action="store_true",
        help="train the experiment's [[train]] models even when shipped ones match, and "
        "refit the parameters of an experiment generated from fitted ones (fitted_by; "
        "written to OUT/fitted.json) (default: play the shipped models and parameters of "
        "topk_bench/pretrained)",
    )
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "train",
        add_help=False,
        help="train a stable-baselines3 policy ('topk-bench train --help' for its options)",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=_cmd_train)

    for name, func, text in (
        (
            "summary",
            _cmd_summary,
            "print each metric's mean with a 95%% confidence interval per agent and point "
            "(a table per panel, agents against points), to 3 significant digits and the "
            "terminal's width (also written to DIR/summary.csv, at full precision)",
        ),
        ("plot", _cmd_plot, "write one PNG per metric to DIR/figures/"),
    ):
        p = sub.add_parser(
            name,
            help=text.split(" (")[0],
            description=(text[0].upper() + text[1:] + ".").replace("%%", "%"),
        )
        p.add_argument("dir", metavar="DIR", help="a results directory written by 'topk-bench run'")
        p.add_argument(
            "--metrics", nargs="+", metavar="M", help="metrics to show; default: the experiment's"
        )
        p.set_defaults(func=func)

    p = sub.add_parser(
        "compare",
        help="paired tests against a baseline agent, per point and over all points",
        description="Per point: each agent's paired difference to the baseline with a 95%% CI, "
        "Holm-adjusted p-values (paired t; exact McNemar for 0/1 metrics) and win/tie/loss; "
        "over all points: IQM of baseline-normalized scores, probability of improvement and "
        "performance profiles with stratified-bootstrap 95%% CIs (see topk_bench/compare.py).",
    )
    _compare_args(p)
    p.add_argument(
        "--metric",
        "--metrics",
        dest="metrics",
        nargs="+",
        metavar="M",
        help="metrics to compare; default: the experiment's",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--format",
        choices=("text", "csv", "json"),
        default="text",
        help="text tables (default; 3 significant digits, the terminal's width), the "
        "per-point table as CSV, or everything as JSON (both at full precision)",
    )
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "report",
        help="write one self-contained HTML report of a results directory",
        description="Write one HTML file (figures embedded): the claims the config states, "
        "judged from the data, summary tables, the comparison of 'topk-bench compare', the "
        "config, seeds, package versions and CPU time.",
    )
    _compare_args(p)
    p.add_argument("--out", "-o", metavar="FILE", help="output file; default DIR/report.html")
    p.set_defaults(func=_cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``topk-bench`` console script."""
    from topk_bench.backends import BackendError
    from topk_bench.schema import ConfigError
    from topk_bench.store import StoreError

    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["train"]:  # its options belong to agents.learned.cli's parser
        return _cmd_train(argparse.Namespace(rest=argv[1:]))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ConfigError as err:
        print(f"topk-bench: config error: {err}", file=sys.stderr)
        return 2
    except (StoreError, BackendError) as err:
        print(f"topk-bench: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `topk-bench check NAME | head`: the reader left
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the exit-time flush cannot fail
        return 1
    except RuntimeError as err:  # an episode failed: the message names it and its seeds
        print(f"topk-bench: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
