"""kiln is a typed package (issue 45): mypy (Debian's) is clean on it, it
ships py.typed and a stub of its extension that names all the extension has,
the type checkers' view of kiln.errors is the classes kiln makes, and the
public names of the gym-facing modules are annotated and documented."""

import ast
import importlib
import inspect
import os
import pathlib
import subprocess
import sys

import pytest

import kiln
from kiln import _kiln
from kiln.error_codes import CODES

PACKAGE = pathlib.Path(kiln.__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
# The modules behind gymnasium's and Stable-Baselines3's view of kiln.
TYPED_MODULES = ["kiln.env", "kiln.vector", "kiln.spaces", "kiln.registry", "kiln._gymnasium",
                 "kiln.sb3", "kiln.bench_sb3"]


def test_mypy_is_clean_on_the_package(tmp_path):
    pytest.importorskip("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(SOURCE / "python" / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(PACKAGE)],
        capture_output=True, text=True, timeout=300, check=False, cwd=str(tmp_path))
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 and not errors, done.stdout + done.stderr


def test_the_package_says_it_is_typed():
    assert (PACKAGE / "py.typed").exists() and (PACKAGE / "_kiln.pyi").exists()


def _stub_names():
    tree = ast.parse((PACKAGE / "_kiln.pyi").read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = None
    return names


def test_the_extension_stub_names_everything_the_extension_has():
    stub = _stub_names()
    public = {n for n in dir(_kiln) if not n.startswith("_") or n == "__version__"}
    assert public == set(stub), "stub and module differ: " + str(public ^ set(stub))
    for name, members in stub.items():
        if members is None:
            continue
        cls = getattr(_kiln, name)
        have = {m for m in vars(cls) if not m.startswith("_")}
        assert have == {m for m in members if not m.startswith("_")}, (name, have ^ members)


def test_type_checkers_see_the_error_classes_kiln_makes():
    tree = ast.parse((PACKAGE / "errors.py").read_text())
    declared = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for cls in node.body:
                declared[cls.name] = [b.id for b in cls.bases]
    made = {name: ["KilnError"] + ([builtin] if builtin else []) for name, builtin, *_ in CODES
            if name}
    assert declared == made
    for name, bases in made.items():
        assert [b.__name__ for b in getattr(kiln.errors, name).__bases__] == bases


def _public(module):
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            yield name, value
        elif inspect.isclass(value):
            yield name, value
            for member_name, member in vars(value).items():
                if member_name.startswith("_"):
                    continue
                function = member.fget if isinstance(member, property) else member
                if inspect.isfunction(function):
                    yield f"{name}.{member_name}", function


@pytest.mark.parametrize("module_name", TYPED_MODULES)
def test_public_names_are_documented_and_annotated(module_name):
    if module_name == "kiln.sb3":
        pytest.importorskip("stable_baselines3")
    module = importlib.import_module(module_name)
    undocumented, unannotated = [], []
    for name, value in _public(module):
        if not (value.__doc__ or "").strip():
            undocumented.append(name)
        if inspect.isfunction(value) and "return" not in value.__annotations__:
            unannotated.append(name)
    assert not undocumented, f"{module_name}: no docstring: {undocumented}"
    assert not unannotated, f"{module_name}: no return annotation: {unannotated}"
