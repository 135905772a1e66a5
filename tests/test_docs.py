"""The tables in docs/ are the code's (scripts/docs_tables.py): a change to the observation, action or reward tables
must come with `python scripts/docs_tables.py`. The README, docs/ and the model cards link only to files and headings
that exist, each config's header links to its section of docs/results.md, and the README names only tools that
exist."""
from __future__ import annotations

import glob
import os
import re

from scripts import docs_tables


def test_the_docs_tables_match_the_code(capsys):
    assert docs_tables.main(["--check"]) == 0, capsys.readouterr().err


def test_a_stale_table_is_found(tmp_path, monkeypatch):
    doc = tmp_path / "observations.md"
    doc.write_text("prose\n<!-- generated: global-features -->\n| old |\n<!-- end generated -->\nmore prose\n")
    monkeypatch.setattr(docs_tables, "DOCS", str(tmp_path))
    assert docs_tables.main(["--check"]) == 1
    assert docs_tables.main([]) == 0
    text = doc.read_text()
    assert "| old |" not in text and "`GLOBAL_IS_DIRE`" in text and text.endswith("more prose\n")
    assert docs_tables.main(["--check"]) == 0


# ---- links, anchors and commands of the README, docs/, the model cards and the configs' headers ----------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADER_LINK = re.compile(r"docs/results\.md#([\w-]+)")


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as hyphens, and a
    repeated heading numbered -1, -2, ..."""
    seen, found, in_code = {}, set(), False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def broken_links(path: str) -> list[str]:
    """The relative links of a markdown file whose file, or whose anchor in a markdown file, does not exist."""
    text = open(path).read()
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(full):
            broken.append(f"{target} (no file {os.path.relpath(full, ROOT)})")
        elif anchor and full.endswith(".md") and anchor not in anchors(open(full).read()):
            broken.append(f"{target} (no heading #{anchor})")
    return broken


def documents() -> list[str]:
    return ([os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
            + sorted(glob.glob(os.path.join(ROOT, "models", "*", "README.md"))))


def test_every_relative_link_of_the_docs_resolves():
    broken = {os.path.relpath(p, ROOT): b for p in documents() if (b := broken_links(p))}
    assert not broken, broken


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Title\n\n## 2026-11-23: The curriculum's levels\n")
    doc = tmp_path / "doc.md"
    doc.write_text("[ok](other.md#2026-11-23-the-curriculums-levels) [top](other.md#title) [web](https://x.org/a)\n"
                   "[gone](missing.md) [bad anchor](other.md#nowhere)\n")
    broken = broken_links(str(doc))
    assert len(broken) == 2
    assert broken[0].startswith("missing.md (no file ") and broken[1] == "other.md#nowhere (no heading #nowhere)"


def test_every_config_header_links_to_its_section_of_the_results():
    sections = anchors(open(os.path.join(ROOT, "docs", "results.md")).read())
    for path in glob.glob(os.path.join(ROOT, "tune_configs", "*.yaml")):
        header = []
        for line in open(path):
            if not line.startswith("#"):
                break
            header.append(line)
        links = HEADER_LINK.findall("".join(header))
        assert links, f"{os.path.basename(path)}: its header links to no section of docs/results.md"
        assert all(a in sections for a in links), f"{os.path.basename(path)}: {links} not all in docs/results.md"


def test_the_readme_names_only_tools_that_exist():
    readme = open(os.path.join(ROOT, "README.md")).read()
    modules = set(re.findall(r"python -m (app\.\w+)", readme))
    scripts = set(re.findall(r"python (scripts/\w+\.py)", readme))
    assert {"app.train", "app.evaluate", "app.rate", "app.replay", "app.surgery", "app.server"} <= modules
    missing = [m for m in modules if not os.path.exists(os.path.join(ROOT, *m.split(".")) + ".py")]
    missing += [s for s in scripts if not os.path.exists(os.path.join(ROOT, s))]
    assert not missing, missing
