"""Render a ``topk-bench report`` in headless Chromium and save a screenshot.

A check by eye that the self-contained HTML report displays as intended in a real
browser (figures decode, tables fit, verdict badges show). Needs Debian's ``chromium``
(``apt-get install -y chromium``)::

    python benchmarks/report_screenshot.py                         # quick --reduced, 10 runs
    python benchmarks/report_screenshot.py --results results/quick --png /tmp/quick.png

Without ``--results`` it first runs ``topk-bench run quick --reduced --runs 10`` into a
temporary directory (about 20 s on 2 cores).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def screenshot(html: Path, png: Path, width: int = 1200, height: int = 3000) -> Path:
    """Screenshot ``html`` with headless Chromium into ``png``."""
    exe = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    if exe is None:
        raise SystemExit("chromium not found: apt-get install -y chromium")
    subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            html.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return png


def main(argv: list[str] | None = None) -> int:
    """Write the report of a results directory (run one if none given) and screenshot it."""
    from topk_bench.cli import main as bench

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, help="a results directory (default: run one)")
    parser.add_argument("--png", type=Path, default=Path("/tmp/topk-report.png"))
    parser.add_argument("--height", type=int, default=3000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results
        if results is None:
            results = Path(tmp) / "quick"
            code = bench(["run", "quick", "--reduced", "--runs", "10", "--out", str(results),
                          "--no-progress", "--no-report"])  # fmt: skip
            if code:
                return code
        html = Path(tmp) / "report.html"
        if bench(["report", str(results), "--out", str(html)]):
            return 1
        screenshot(html, args.png, height=args.height)
    print(args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
