"""The tables in docs/ are the code's (scripts/docs_tables.py): a change to the observation, action or reward tables
must come with `python scripts/docs_tables.py`."""
from __future__ import annotations

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
