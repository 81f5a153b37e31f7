"""The ``handler`` prop against the code directory: its module is there and defines its function.

A handler Lambda cannot import fails the function's first invocation, after a deploy; found at synth,
it is one more problem of the call (:class:`~constructs_fifo.construct.errors.InvalidPropsError`,
naming the prop, the value, what was looked for and the fix). The module is found as Python's import
system finds it on the asset's root (``pkg.mod`` is ``pkg/mod.py`` or ``pkg/mod/__init__.py``) and read
with :mod:`ast`, never imported: importing user code at synth would run it on the developer's machine,
with the developer's credentials. A name counts as defined when a top-level statement binds it (a
``def``, a ``class``, an assignment, an ``import``; inside top-level ``if``/``try``/``with`` blocks too).

What synth cannot know is a warning (:data:`WARNING_HANDLER_NOT_CHECKED`), not an error: a handler
that is a token, a module that is not in the directory but may be importable at run time (the
standard library, boto3, a layer's, Docker bundling's), a compiled module, source this Python cannot
parse, and a module that can bind names dynamically (``from x import *``, a module ``__getattr__``,
``globals()``, ``exec``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from aws_cdk import Annotations
from aws_cdk import aws_lambda as lambda_
from constructs import IConstruct

from constructs_fifo.construct.code.bundling import CodeBundling
from constructs_fifo.construct.code.packaging import excluded
from constructs_fifo.construct.settings import tokens

__all__ = ["RUNTIME_PROVIDED_MODULES", "WARNING_HANDLER_NOT_CHECKED", "check_handler_found"]

#: Warning id, for ``Validations.of(scope).acknowledge(id=...)``.
WARNING_HANDLER_NOT_CHECKED: Final = "constructs-fifo:handlerNotCheckedAtSynth"
#: Top-level modules Lambda's Python runtime provides besides the standard library.
RUNTIME_PROVIDED_MODULES: Final = frozenset({"boto3", "botocore", "awslambdaric"})
#: The most module names an error lists as the code directory's.
_MODULES_LISTED: Final = 8
#: Calls through which a module can bind names synth cannot see.
_DYNAMIC_CALLS: Final = frozenset({"globals", "exec", "setattr", "vars"})


def _warn(scope: IConstruct, handler: str | None, why: str) -> None:
    named = "handler" if handler is None else f"handler={handler!r}"
    Annotations.of(scope).add_warning_v2(
        WARNING_HANDLER_NOT_CHECKED,
        f"{named} is not checked at synth: {why}; make sure the function's first "
        "invocation can import it (`constructs-fifo drain` against the emulator shows an import error "
        "at once), or acknowledge this warning.",
    )


def _top_level_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements that run at import, blocks of ``if``/``try``/``with``/loops included."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _top_level_statements(getattr(statement, field, []))
        for handler in getattr(statement, "handlers", []):
            yield from _top_level_statements(handler.body)
        for case in getattr(statement, "cases", []):
            yield from _top_level_statements(case.body)


def _bound_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _definitions(tree: ast.Module) -> tuple[set[str], str | None]:
    """The names the module binds at top level, and why it may bind others (``None``: it cannot)."""
    names: set[str] = set()
    dynamic: str | None = None
    for statement in _top_level_statements(tree.body):
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                names.update(_bound_names(target))
        elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
            names.update(_bound_names(statement.target))
        elif isinstance(statement, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith):
            targets = (
                [statement.target]
                if isinstance(statement, ast.For | ast.AsyncFor)
                else [item.optional_vars for item in statement.items if item.optional_vars is not None]
            )
            for target in targets:
                names.update(_bound_names(target))
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                if alias.name == "*" and isinstance(statement, ast.ImportFrom):
                    dynamic = f"it imports * from {statement.module or '.'}"
                else:
                    names.add(alias.asname or alias.name.split(".", maxsplit=1)[0])
    if "__getattr__" in names:
        dynamic = dynamic or "it defines a module __getattr__"
    statements = [
        node
        for node in _top_level_statements(tree.body)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    for node in (inner for statement in statements for inner in ast.walk(statement)):
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _DYNAMIC_CALLS
            and dynamic is None
        ):
            dynamic = f"it calls {node.func.id}()"
    return names, dynamic


def _module_files(code_dir: Path, module: str) -> tuple[Path, Path]:
    """Where Python's import system finds ``module`` on the asset's root: ``m.py``, then ``m/__init__.py``."""
    base = code_dir.joinpath(*module.split("."))
    return base.with_name(f"{base.name}.py"), base / "__init__.py"


def _compiled(code_dir: Path, module: str) -> Path | None:
    """A compiled extension module ``m.*.so`` or ``m.so`` (its names cannot be read)."""
    base = code_dir.joinpath(*module.split("."))
    if not base.parent.is_dir():
        return None
    return next(iter(sorted(base.parent.glob(f"{base.name}*.so"))), None)


def _listed_modules(code_dir: Path) -> str:
    packages = [f"{path.parent.name}/" for path in code_dir.glob("*/__init__.py")]
    found = sorted([path.name for path in code_dir.glob("*.py")] + packages)
    if not found:
        return "the directory holds no Python module"
    more = f" and {len(found) - _MODULES_LISTED} more" if len(found) > _MODULES_LISTED else ""
    return f"it holds {', '.join(found[:_MODULES_LISTED])}{more}"


def _elsewhere(module: str, layers: Sequence[lambda_.ILayerVersion] | None, bundling: object) -> str | None:
    """Why ``module``, absent from the code directory, may still be importable at run time."""
    top = module.split(".", maxsplit=1)[0]
    if top in sys.stdlib_module_names:
        return f"{top!r} is a module of Python's standard library"
    if top in RUNTIME_PROVIDED_MODULES:
        return f"{top!r} is provided by Lambda's Python runtime"
    if layers:
        return f"module {module!r} is not in the code directory; it may be in one of its {len(layers)} layers"
    if isinstance(bundling, CodeBundling) and bundling.docker is not None:
        return f"module {module!r} is not in the code directory; Docker bundling may add it"
    return None


def check_handler_found(
    scope: IConstruct,
    *,
    handler: str,
    code_path: str | None,
    layers: Sequence[lambda_.ILayerVersion] | None = None,
    bundling: object = None,
) -> list[str]:
    """Check that ``handler``'s module is in the code directory and defines its function at top level.

    Parameters
    ----------
    scope
        The construct a warning is attached to.
    handler
        The ``handler`` prop.
    code_path
        The code asset's directory; ``None`` (not a directory asset) is ``check_code``'s problem.
    layers, bundling
        The function's layers and bundling: where a module absent from the directory may come from.

    Returns
    -------
    list of str
        The problems (at most one); a warning instead where synth cannot know (module docstring).
    """
    if tokens.is_unresolved(handler):
        _warn(scope, None, "it is a token, known only at deploy time")
        return []
    if not isinstance(handler, str):
        return []  # the wrong type is the type check's problem
    module, _, function = handler.rpartition(".")
    names = [*module.split("."), function]
    if not module or not all(name.isidentifier() for name in names) or code_path is None:
        return []  # not 'module.function', or no code directory: their own checks say so
    code_dir = Path(code_path)
    if not code_dir.is_dir():
        return []
    source_file, package_file = _module_files(code_dir, module)
    fix_prefix = f"pass handler='<module>.<function>' naming a module of {code_path}"
    source = next((path for path in (source_file, package_file) if path.is_file()), None)
    if source is None:
        if (compiled := _compiled(code_dir, module)) is not None:
            _warn(scope, handler, f"{compiled.name} is compiled, so its names cannot be read")
            return []
        if (why := _elsewhere(module, layers, bundling)) is not None:
            _warn(scope, handler, why)
            return []
        looked = f"{source_file.relative_to(code_dir)} or {package_file.relative_to(code_dir)}"
        return [
            f"handler={handler!r} names module {module!r}, which is not in the code directory: looked for "
            f"{looked} under {code_path} ({_listed_modules(code_dir)}), so the function's first invocation "
            f'would fail with "No module named {module!r}"; {fix_prefix}, or add '
            f"{source_file.relative_to(code_dir)} there."
        ]
    relative = source.relative_to(code_dir).as_posix()
    exclude = bundling.exclude if isinstance(bundling, CodeBundling) else ()
    if exclude and not isinstance(exclude, str) and excluded(relative, exclude):
        return [
            f"handler={handler!r} names {relative}, which bundling.exclude leaves out of the asset, so the "
            f'function\'s first invocation would fail with "No module named {module!r}"; take it back in '
            f"(an exclude pattern '!{relative}') or {fix_prefix}."
        ]
    try:
        tree = ast.parse(source.read_bytes(), filename=str(source))
    except (SyntaxError, ValueError, OSError) as error:
        _warn(scope, handler, f"{relative} cannot be read by this Python ({type(error).__name__}: {error})")
        return []
    defined, dynamic = _definitions(tree)
    if function in defined:
        return []
    if dynamic is not None:
        _warn(scope, handler, f"{relative} does not define {function!r} at top level, but {dynamic}")
        return []
    functions = sorted(
        node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    )
    has = f"it defines {', '.join(functions)}" if functions else "it defines no function"
    return [
        f"handler={handler!r} names function {function!r}, which {relative} (under {code_path}) does not "
        f"define at top level: looked for a def, class, assignment or import of {function!r} ({has}), so "
        f"the function's first invocation would fail with \"module {module!r} has no attribute "
        f"{function!r}\"; pass handler='{module}.<function>' naming one of its functions, or define "
        f"def {function}(job, context) in {relative}."
    ]
