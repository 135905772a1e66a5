"""Arrows point one way (docs/design.md): every import of a project module goes to the same layer or a lower one.

    app/game  <-  app/env  <-  app/server, policies  <-  callbacks  <-  the application (app/*.py, scripts)
"""
from __future__ import annotations

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("app", "policies", "callbacks", "scripts")
APPLICATION = 4


def layer(module: str) -> int:
    """The layer of a project module (a dotted name), lowest first."""
    if module.startswith("app.game"):
        return 0
    if module.startswith("app.env"):
        return 1
    if module.startswith(("app.server", "policies")):
        return 2
    if module.startswith("callbacks"):
        return 3
    return APPLICATION  # app/*.py (the CLIs and their modules) and scripts/


def project_imports(path: str) -> list[tuple[int, str]]:
    """(line, module) of every import of a project module in a file, wherever it sits (top level or in a function)."""
    tree = ast.parse(open(path).read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from app import train_config" imports the module app.train_config
            names = [f"{node.module}.{a.name}" if node.module in PACKAGES else node.module for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] in PACKAGES]
    return sorted(set(found))


def module_name(path: str) -> str:
    return os.path.splitext(os.path.relpath(path, ROOT))[0].replace(os.sep, ".").removesuffix(".__init__")


def test_no_module_imports_a_higher_layer():
    files = [f for p in PACKAGES for f in glob.glob(os.path.join(ROOT, p, "**", "*.py"), recursive=True)
             if "moba_pb2" not in f]
    assert len(files) > 40
    upward = []
    for path in files:
        me = module_name(path)
        for line, imported in project_imports(path):
            if layer(imported) > layer(me):
                upward.append(f"{os.path.relpath(path, ROOT)}:{line} ({me}, layer {layer(me)}) imports {imported} "
                              f"(layer {layer(imported)})")
    assert not upward, "imports that point up:\n" + "\n".join(upward)


def test_the_layer_check_sees_an_upward_import(tmp_path):
    """The check itself can fail: a game module importing the env is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from app.env.moba_env import MobaEnv\n\ndef f():\n    from callbacks import metrics\n")
    assert [m for _, m in project_imports(str(bad))] == ["app.env.moba_env", "callbacks.metrics"]
    assert layer("app.env.moba_env") > layer("app.game.engine") and layer("callbacks.metrics") > layer("policies.x")
