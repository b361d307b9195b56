"""The package is built in the layers `docs/layout.md` lists: every import points down.

The layer table is read from the document itself, so the document and the code cannot drift
apart: a module that imports from a layer above its own, an import circle, or a module that no
layer names fails here, with the import that breaks the rule.
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
LAYOUT = ROOT / "docs" / "layout.md"

# Imports allowed to point up, each with its reason. Keep this short: an entry here is a
# debt, and a new upward import belongs in a lower layer or behind an explicit hand-over.
ALLOWED_UPWARD = {}


def layer_patterns() -> list:
    """[(layer number, module pattern)] from the `## Layers` table of docs/layout.md."""
    text = LAYOUT.read_text()
    table = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    patterns = []
    for row in re.findall(r"^\| (\d+) \| [^|]+ \| (.+) \|$", table, re.MULTILINE):
        number, modules = row
        for pattern in re.findall(r"`([^`]+)`", modules):
            full = pattern if pattern.startswith("tracejit") else "tracejit._src." + pattern
            patterns.append((int(number), full))
    return patterns


def layer_of(module: str, patterns) -> int | None:
    """The layer of the most specific pattern matching `module`."""
    best = None
    for number, pattern in patterns:
        if pattern.endswith(".*"):
            base = pattern[:-2]
            matches = module == base or module.startswith(base + ".")
            specificity = len(base) + 0.5
        else:
            matches = module == pattern
            specificity = len(pattern) + 1
        if matches and (best is None or specificity > best[0]):
            best = (specificity, number)
    return None if best is None else best[1]


# Modules compiled from C (setup.py), importable only where they were built.
COMPILED_MODULES = {"tracejit._src._accel"}


def package_modules() -> dict:
    """{dotted module name: path} for every module of src/tracejit."""
    modules = {}
    for path in sorted((SRC / "tracejit").rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


def imports_of(module: str, path: pathlib.Path, modules) -> list:
    """[(imported tracejit module, line, inside a function, source line, module object)] for
    every import statement of `module`, except those under `if TYPE_CHECKING:`. "module
    object" is true for `import a.b` and `from a import b` with `b` a module: the importer
    then reads `b`'s names when it runs, not while it is imported."""
    source = path.read_text()
    lines = source.splitlines()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def resolve(name):
        while name and name not in modules and name not in COMPILED_MODULES:
            name = name.rpartition(".")[0]
        return name

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                else:
                    base = child.module or ""
                    if child.level:
                        parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                        base = ".".join(parts + ([base] if base else []))
                    targets = [f"{base}.{alias.name}" for alias in child.names]
                for target in targets:
                    resolved = resolve(target)
                    if resolved and resolved != module and resolved.startswith("tracejit"):
                        text = lines[child.lineno - 1].strip()
                        whole = resolved == target
                        found.append((resolved, child.lineno, in_function, text, whole))
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            visit(child, in_function or function)

    visit(ast.parse(source), False)
    return found


def is_reexport(module: str, imported: str, path: pathlib.Path) -> bool:
    """A package's `__init__` importing its own submodules is not a dependency."""
    return path.name == "__init__.py" and imported.startswith(module + ".")


def test_every_module_has_a_layer():
    patterns = layer_patterns()
    assert len(patterns) > 10, "docs/layout.md lost its layer table"
    missing = [m for m in package_modules() if layer_of(m, patterns) is None]
    assert not missing, f"modules that no layer of docs/layout.md names: {missing}"


def test_no_module_imports_from_a_layer_above_its_own():
    patterns, modules = layer_patterns(), package_modules()
    upward = []
    for module, path in modules.items():
        own = layer_of(module, patterns)
        for imported, line, _, text, _ in imports_of(module, path, modules):
            if is_reexport(module, imported, path) or ALLOWED_UPWARD.get((module, imported)):
                continue
            if layer_of(imported, patterns) > own:
                rel = path.relative_to(ROOT)
                upward.append(
                    f"{rel}:{line}: `{text}` (layer {own} imports layer "
                    f"{layer_of(imported, patterns)}: {imported})"
                )
    assert not upward, "imports pointing up:\n" + "\n".join(upward)


def lax_family(module: str) -> bool:
    return module.startswith("tracejit._src.lax.") and ".control_flow" not in module


def test_no_import_circles():
    """Module-level imports form no circle, so any module can be imported first. One kind is
    intended: primitive families whose rules use each other's wrappers (arithmetic, unary math
    and reductions in their derivatives; gather and scatter, each the other's transpose)
    import each other as module objects, whose names they read only when a rule runs
    (`tests/lax/test_import_order.py` checks that this holds)."""
    modules = package_modules()
    edges = {
        m: {
            imported
            for imported, _, in_function, _, whole in imports_of(m, p, modules)
            if not in_function
            and not is_reexport(m, imported, p)
            and not (whole and lax_family(m) and lax_family(imported))
        }
        for m, p in modules.items()
    }
    edges.update({m: set() for m in COMPILED_MODULES})  # they import no tracejit module
    circles, index, low, stack, on_stack = [], {}, {}, [], set()

    def strongly_connect(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strongly_connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in edges:
        if v not in index:
            strongly_connect(v)
    assert not circles, f"import circles: {circles}"


def test_function_local_imports_say_which_circle_they_break():
    """A tracejit import inside a function hides a dependency; it is allowed only where a
    `# circle:` comment (on its line or in the comment right above) says which circle it
    breaks and why that circle is intended."""
    modules = package_modules()
    unexplained = []
    for module, path in modules.items():
        lines = path.read_text().splitlines()
        for _, line, in_function, text, _ in imports_of(module, path, modules):
            if not in_function:
                continue
            above = line - 2  # the comment lines right above the import count too
            while above >= 0 and lines[above].strip().startswith("#"):
                above -= 1
            if "# circle:" not in "".join(lines[above + 1 : line]):
                unexplained.append(f"{path.relative_to(ROOT)}:{line}: `{text}`")
    assert not unexplained, "function-local imports without a reason:\n" + "\n".join(unexplained)


def test_layer_lookup_prefers_the_most_specific_pattern():
    patterns = [(6, "tracejit._src.lax.*"), (7, "tracejit._src.lax.control_flow.*")]
    assert layer_of("tracejit._src.lax.shapes", patterns) == 6
    assert layer_of("tracejit._src.lax.control_flow.scan", patterns) == 7
    assert layer_of("tracejit._src.lax.control_flow", patterns) == 7
    assert layer_of("tracejit._src.laxer", patterns) is None
