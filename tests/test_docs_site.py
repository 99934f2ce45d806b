"""The documentation site: it builds in strict mode, its links resolve, its pages render.

The site is built once per module (``mkdocs build --strict`` into a temporary directory;
a broken reference, nav entry or snippet fails the build). Then

* every ``href``/``src`` of every built page that points inside the site resolves to a
  file of the built site, and every ``#anchor`` to an ``id`` of the target page;
* every page has exactly one title (``<h1>``), and every image is a PNG/SVG file;
* the figure script of ``learned-stopping`` parses the tables of its page;
* the code the tutorials copy from ``examples/`` (so that their Markdown reads on GitHub
  too, where snippet includes do not render) is the files' current text;
* the generated catalogs list every registered agent, catalog instance and shipped
  experiment;
* the main pages load in headless Chromium (served over HTTP, as a user would see them):
  the title is there, the theme's header and navigation rendered, every image decoded,
  and the console shows no uncaught error. Skipped only if ``chromium`` is not installed
  (``apt-get install -y chromium``).
"""

from __future__ import annotations

import functools
import html
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocstrings_handlers.python")

# one worker: the site (the module-scoped fixture, a 20 s build) is built once, not by both
pytestmark = pytest.mark.xdist_group("docs-site")

ROOT = Path(__file__).resolve().parents[1]
#: Pages opened in the browser: home, a spec page, both generated catalogs, two tutorials,
#: three experiment pages with figures, the performance page and an API page.
MAIN_PAGES = (
    "index.html",
    "environments.html",
    "agent-catalog.html",
    "instances.html",
    "tutorials/reproduce-paper-figure.html",
    "tutorials/benchmark-your-own-algorithm.html",
    "experiments/quick.html",
    "experiments/chen2017.html",
    "experiments/learned-stopping.html",
    "performance.html",
    "api/agents.html",
)


class _Page(HTMLParser):
    """The links, image sources, ids and first ``<h1>`` text of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.images: list[str] = []
        self.ids: set[str] = set()
        self.h1: str | None = None
        self.h1_count = 0
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag in ("a", "link") and a.get("href"):
            self.links.append(a["href"])
        if tag in ("img", "script", "source") and a.get("src"):
            (self.images if tag == "img" else self.links).append(a["src"])
        if tag == "h1":
            self.h1_count += 1
        if tag == "h1" and self.h1 is None:
            self._in_h1 = True
            self.h1 = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.h1 = (self.h1 or "") + data


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - start
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    print(f"site built in {seconds:.1f} s")
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _target(site: Path, page: Path, url: str) -> tuple[Path, str] | None:
    """The file and fragment an internal URL of ``page`` points at (``None``: external)."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith(("mailto:", "data:", "javascript:")):
        return None
    path = unquote(parts.path)
    if not path:
        return page, parts.fragment
    target = (site / path.lstrip("/")) if path.startswith("/") else (page.parent / path)
    target = target.resolve()
    if target.is_dir():
        target = target / "index.html"
    return target, parts.fragment


def test_every_internal_link_and_anchor_resolves(site: Path) -> None:
    ids = {p.resolve(): _parse(p).ids for p in _pages(site)}
    broken = []
    checked = 0
    for page in _pages(site):
        parsed = _parse(page)
        for url in parsed.links + parsed.images:
            hit = _target(site, page, url)
            if hit is None:
                continue
            target, fragment = hit
            checked += 1
            where = f"{page.relative_to(site)}: {url}"
            if not target.is_relative_to(site.resolve()) or not target.is_file():
                broken.append(f"{where} (no file {target})")
            elif fragment and target.suffix == ".html" and unquote(fragment) not in ids[target]:
                broken.append(f"{where} (no id {fragment!r} in {target.relative_to(site)})")
    assert checked > 1000, f"only {checked} internal links found: is the site complete?"
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_every_page_has_one_title(site: Path) -> None:
    # A Markdown line that starts with "#" by accident (e.g. "#8679") becomes a second h1.
    counts = {str(p.relative_to(site)): _parse(p).h1_count for p in _pages(site)}
    assert {page: n for page, n in counts.items() if n != 1} == {}


def test_every_image_is_a_real_image(site: Path) -> None:
    images = set()
    for page in _pages(site):
        for src in _parse(page).images:
            hit = _target(site, page, src)
            if hit is not None and hit[0].is_file():
                images.add(hit[0])
    assert len(images) >= 20, sorted(images)
    for path in images:
        head = path.read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n" or path.suffix == ".svg", f"{path} is not a PNG"


def test_catalogs_list_every_agent_instance_experiment_and_ladder_task(site: Path) -> None:
    import agents
    from bandit_envs import instances
    from topk_bench.config import shipped

    catalog = _parse(site / "agent-catalog.html")
    missing = [n for n in agents.available() if f"agent-{n.replace('_', '-')}" not in catalog.ids]
    assert not missing, f"agent catalog lacks {missing}"

    text = (site / "instances.html").read_text(encoding="utf-8")
    missing = [n for n in instances.available() if f"<code>{n}</code>" not in text]
    assert not missing, f"instance catalog lacks {missing}"

    from agents.learned.families import LADDER

    text = (site / "ladder.html").read_text(encoding="utf-8")
    presets = [preset for task in LADDER.values() for preset in task.spaces]
    missing = [p for p in presets if f"<code>{p}</code>" not in text]
    assert not missing, f"the ladder table lacks {missing}"

    pages = " ".join(p.read_text(encoding="utf-8") for p in (site / "experiments").glob("*.html"))
    missing = [n for n in shipped() if n not in pages]
    assert not missing, f"no experiment page names {missing}"

    # the generated tables of rl-baselines: the search spaces and the shipped searches
    from topk_bench.experiments.rl_tuning import shipped_records

    text = (site / "experiments" / "rl-baselines.html").read_text(encoding="utf-8")
    assert "rl-tuning-space" not in text and "rl-tuning-searches" not in text
    assert "<code>lstm_hidden_size</code>" in text
    searches = shipped_records()
    assert ("No search is shipped" in text) == (not searches)
    assert all(f"<td>{r['algo']}</td>" in text for r in searches)


#: A code block copied from files: ``<!-- copy of FILE[:SECTION] ... -->`` on the line
#: before it (or before its ``<!-- fmt: off -->``). SECTION is the text between the file's
#: ``--8<-- [start:SECTION]`` and ``--8<-- [end:SECTION]`` lines (pymdownx.snippets'
#: markers); without it, the whole file.
_COPY = re.compile(
    r"^<!-- copy of (?P<refs>[^()>]+?)(?: \([^)]*\))? -->\n(?:<!--[^\n]*-->\n)?"
    r"```[a-z]*\n(?P<body>.*?)\n?```$",
    re.M | re.S,
)


def _copied(ref: str) -> str:
    name, _, section = ref.partition(":")
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    if not section:
        return "\n".join(line for line in lines if "--8<-- [" not in line)
    marks = [line.strip() for line in lines]
    start = marks.index(f"# --8<-- [start:{section}]")
    end = marks.index(f"# --8<-- [end:{section}]")
    return "\n".join(lines[start + 1 : end])


@pytest.mark.parametrize(
    "page", sorted(p.name for p in (ROOT / "docs" / "tutorials").glob("*.md")), ids=str
)
def test_tutorial_code_copies_are_the_example_files(page: str) -> None:
    text = (ROOT / "docs" / "tutorials" / page).read_text(encoding="utf-8")
    assert "--8<--" not in text, f"{page}: a snippet include shows as a bare line on GitHub"
    copies = list(_COPY.finditer(text))
    assert text.count("<!-- copy of ") == len(copies), f"{page}: a copy marker not before a block"
    for m in copies:
        expected = "\n".join(_copied(ref) for ref in m["refs"].split())
        assert m["body"] == expected, f"{page}: the copy of {m['refs']} differs from the file"


def test_learned_stopping_figure_reads_the_page(tmp_path: Path) -> None:
    """The figure of learned-stopping is drawn from the tables of its page; they parse."""
    import importlib.util

    path = ROOT / "benchmarks" / "learned_stopping_figure.py"
    spec = importlib.util.spec_from_file_location("learned_stopping_figure", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    points = module.read_page()
    assert [(label, delta) for label, delta, _ in points] == [
        ("k = 1, delta = 0.05", 0.05),
        ("k = 1, delta = 0.1", 0.1),
        ("k = 3, delta = 0.05", 0.05),
        ("k = 3, delta = 0.1", 0.1),
    ]
    for label, delta, rows in points:
        assert sum(a.startswith("learned stop") for a in rows) == 3, label
        assert all(module.family(a, delta) in module.STYLES for a in rows), sorted(rows)
        assert all(r["error_lo"] <= r["error"] <= r["error_hi"] for r in rows.values())
    out = tmp_path / "figure.png"
    module.draw(points, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_jun2016_table1_figure_reads_the_page(tmp_path: Path) -> None:
    """The figure of jun2016-table1 is drawn from the table of its page; it parses."""
    import importlib.util

    path = ROOT / "benchmarks" / "jun2016_table1_figure.py"
    spec = importlib.util.spec_from_file_location("jun2016_table1_figure", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = module.read_page()
    assert sorted(data) == ["Linear", "Sparse"]
    for inst, rows in data.items():
        # the 13 (b, r) pairs of Table 1, r <= b, the reference (1, 1) first
        assert len(rows) == 13 and (rows[0]["b"], rows[0]["r"]) == (1, 1), inst
        assert all(row["r"] <= row["b"] for row in rows), inst
        assert all(row["theory"] == row["paper"] == row["ours"] == 1 for row in rows[:1])
        assert all(0 < row[key] <= row["b"] * 1.01 for row in rows for key in row), inst
    assert all("ours100" in row for row in data["Sparse"])
    out = tmp_path / "figure.png"
    module.draw(data, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _inject_check(page: bytes) -> bytes:
    """A script that, once the page has loaded, records what rendered on ``<body>``."""
    script = b"""<script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var missing = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
                    .map(function (i) { return i.getAttribute("src"); });
  var h1 = document.querySelector(".md-content h1");
  document.body.setAttribute("data-check", JSON.stringify({
    images: imgs.length, missing: missing, h1: h1 ? h1.textContent : null,
    header: !!document.querySelector(".md-header"),
    nav: document.querySelectorAll(".md-nav__link").length}));
});
</script></body>"""
    return page.replace(b"</body>", script, 1)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site; HTML pages get the check script."""

    def log_message(self, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[no-untyped-def]
        path = self.translate_path(self.path)
        if not path.endswith(".html") or not os.path.isfile(path):
            return super().send_head()
        data = _inject_check(Path(path).read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return io.BytesIO(data)


@pytest.fixture(scope="module")
def served(site: Path):
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _render(url: str, profile: Path) -> tuple[dict, list[str]]:
    """Load ``url`` in headless Chromium: the page's check record and its console errors."""
    proc = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    found = re.search(r'data-check="([^"]*)"', proc.stdout)
    assert found, f"{url}: the page did not finish loading\n{proc.stderr[-2000:]}"
    errors = [line for line in proc.stderr.splitlines() if "CONSOLE" in line and "Uncaught" in line]
    return json.loads(html.unescape(found.group(1))), errors


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed")
@pytest.mark.parametrize("page", MAIN_PAGES)
def test_main_pages_render_in_headless_chromium(
    site: Path, served: str, page: str, tmp_path: Path
) -> None:
    expected = _parse(site / page)
    check, errors = _render(f"{served}/{page}", tmp_path / "profile")
    assert check["h1"] and expected.h1 and check["h1"].strip() == expected.h1.strip(), check
    assert check["header"] and check["nav"] > 10, f"{page}: the theme did not render: {check}"
    assert check["images"] == len(expected.images), check
    assert not check["missing"], f"{page}: images not displayed: {check['missing']}"
    assert not errors, f"{page}: console errors:\n" + "\n".join(errors)
