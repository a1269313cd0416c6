"""The one way a YAML config is read: bounded in size and in what aliases add, errors at file
and line.

A config needs few aliases (``<<: *base`` per model), but a handful of nested ones (a "billion
laughs" file: ten anchors of ten aliases) expand into a tree of 10**10 nodes that validating or
dumping it walks for minutes and gigabytes. Every config reader goes through ``load_yaml``: the
file is composed (shared nodes, cheap), the tree its aliases would expand to is counted, and a
file over ``MAX_YAML_BYTES`` or whose aliases add more than ``MAX_ALIAS_NODES`` nodes is
refused before any Python object is built, in one line naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from medrealmm.io.errors import DataError

#: Largest config file read (bytes): the bundled ones are a few kilobytes.
MAX_YAML_BYTES = 1024 * 1024
#: Most nodes the aliases of one file may add once expanded (a merge key per model adds tens).
MAX_ALIAS_NODES = 10_000


def parse_yaml(text: str, source: Path | str) -> object:
    """``text`` as Python data (what ``yaml.safe_load`` gives), within the size and alias
    budgets; ``source`` names it in errors."""
    size = len(text.encode("utf-8"))
    if size > MAX_YAML_BYTES:
        raise _too_large(source, size)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise DataError(source, line, "<yaml>", f"not valid YAML: {problem}") from None
    except RecursionError:
        raise DataError(source, 1, "<yaml>", "nested too deeply for a config") from None
    finally:
        loader.dispose()


def load_yaml(path: Path | str) -> object:
    """The YAML file at ``path`` as Python data; see ``parse_yaml``."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise _too_large(path, size)
    return parse_yaml(path.read_text(encoding="utf-8"), path)


def compose_yaml(path: Path | str) -> yaml.Node | None:
    """The node tree of a file ``load_yaml`` accepted (for line numbers of its entries)."""
    loader = yaml.SafeLoader(Path(path).read_text(encoding="utf-8"))
    try:
        return loader.get_single_node()  # type: ignore[no-any-return]
    finally:
        loader.dispose()


def _check_expansion(root: yaml.Node, source: Path | str) -> None:
    """Refuse a tree whose aliases, expanded, add more than ``MAX_ALIAS_NODES`` nodes.

    An alias is the anchored node object itself, met again: each distinct node's expanded size
    is counted once (memoised), so a bomb costs its text's length to measure."""
    expanded: dict[int, int] = {}
    visiting: set[int] = set()
    distinct = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in expanded:
            continue
        if not children_done and id(node) in visiting:
            line = node.start_mark.line + 1
            raise DataError(source, line, "<yaml>", "an alias refers to a node holding it")
        children = _children(node)
        if children_done or not children:
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in children)
            distinct += 1
            if expanded[id(node)] - distinct > MAX_ALIAS_NODES:
                raise DataError(
                    source,
                    node.start_mark.line + 1,
                    "<yaml>",
                    f"its aliases (*name) expand to more than {MAX_ALIAS_NODES} nodes: "
                    "refused (nested aliases grow without bound; a config never needs this)",
                )
            continue
        visiting.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in expanded)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _too_large(source: Path | str, size: int) -> DataError:
    return DataError(
        source, 1, "<yaml>", f"{size} bytes: a config is at most {MAX_YAML_BYTES} bytes"
    )
