"""Arrows point one way (docs/design.md): every import of a project module goes to the same layer or a lower one.

    moba.game < moba.env < moba.server < policies.model < policies.agents < policies.league < policies.learning
      < policies.pretrain, policies.surgery, policies.draft < training < callbacks < web < app, scripts
"""
from __future__ import annotations

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("moba", "policies", "training", "callbacks", "web", "app", "scripts")
# lowest first; a module belongs to the first prefix it starts with (same index: one layer)
LAYERS = (
    ("moba.game",),  # the engine
    ("moba.env",),  # the MultiAgentEnv over it
    ("moba.server",),  # the game server and the env that plays on one
    ("policies.model",),  # the network
    ("policies.agents",),  # what plays a team: scripted bots, the ladder, a module
    ("policies.league",),  # past versions, the curriculum, ratings and reference agents
    ("policies.learning",),  # the PPO learner and its loss terms
    ("policies.pretrain", "policies.surgery", "policies.draft"),  # behaviour cloning; model surgery; drafting (Five
    # app. D.2)
    ("training",),  # a run: settings, env runner, opponents, storage, progress, the algorithm wiring
    ("callbacks",),  # the RLlib callbacks of a run
    ("web",),  # the local web server: live play against agents in the browser, the draft page
    ("app", "scripts"),  # the CLIs and the scripts
)


def layer(module: str) -> int:
    """The layer of a project module (a dotted name), lowest first."""
    for i, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    if module in ("policies", "moba"):  # a package's own __init__
        return 0
    raise ValueError(f"{module} is in no layer; add it to LAYERS")


def project_imports(path: str) -> list[tuple[int, str]]:
    """(line, module) of every import of a project module in a file, wherever it sits (top level or in a function)."""
    tree = ast.parse(open(path).read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from training import run_config" imports the module training.run_config
            names = [f"{node.module}.{a.name}" if node.module in PACKAGES else node.module for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] in PACKAGES]
    return sorted(set(found))


def module_name(path: str) -> str:
    return os.path.splitext(os.path.relpath(path, ROOT))[0].replace(os.sep, ".").removesuffix(".__init__")


def project_files() -> list[str]:
    return [f for p in PACKAGES for f in glob.glob(os.path.join(ROOT, p, "**", "*.py"), recursive=True)
            if "moba_pb2" not in f]


def test_every_module_has_a_layer():
    files = project_files()
    assert len(files) > 100
    for path in files:
        layer(module_name(path))


def test_no_module_imports_a_higher_layer():
    upward = []
    for path in project_files():
        me = module_name(path)
        for line, imported in project_imports(path):
            if layer(imported) > layer(me):
                upward.append(f"{os.path.relpath(path, ROOT)}:{line} ({me}, layer {layer(me)}) imports {imported} "
                              f"(layer {layer(imported)})")
    assert not upward, "imports that point up:\n" + "\n".join(upward)


def test_app_holds_the_commands_only():
    """Every module at the top of app/ is a command: it has a main()."""
    for path in glob.glob(os.path.join(ROOT, "app", "*.py")):
        if path.endswith("__init__.py"):
            continue
        tree = ast.parse(open(path).read(), path)
        assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body), path


def test_callbacks_holds_rllib_callbacks():
    """Every module of callbacks/ defines an RLlib callback class (RLlibCallback or one of the run's bases)."""
    for path in glob.glob(os.path.join(ROOT, "callbacks", "*.py")):
        if path.endswith("__init__.py"):
            continue
        src = open(path).read()
        assert any(f"({base})" in src for base in ("RLlibCallback", "RunCallback", "TrialFilesCallback")), path


def test_the_layer_check_sees_an_upward_import(tmp_path):
    """The check itself can fail: a game module importing the env is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from moba.env.moba_env import MobaEnv\n\ndef f():\n    from callbacks import metrics\n")
    assert [m for _, m in project_imports(str(bad))] == ["moba.env.moba_env", "callbacks.metrics"]
    assert layer("moba.env.moba_env") > layer("moba.game.engine") and layer("callbacks.metrics") > layer("training.x")
    assert layer("training.algorithm") > layer("policies.learning.five_learner") > layer("policies.model.five_module")
