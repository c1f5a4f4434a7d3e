"""Programs shipped into the sandbox as source: a package's modules become one ``python -c`` text.

The sandbox has no rewardsmith package, so a program that runs there (the code verifier's judge and
candidate, the sandboxed scorers of third-party verifiers) is a folder of modules that import each
other only relatively, on lines marked ``# sandbox: inlined``; :func:`program_source` removes those
lines and puts the sibling's text in front, and :func:`bootstrap` wraps the result so that it loads
as bytecode where the sandbox's Python matches ours. The host imports the same modules normally.
"""

from __future__ import annotations

from pathlib import Path

INLINED = "# sandbox: inlined"


def program_source(folder: Path, *modules: str) -> str:
    """The text of ``modules`` (file names in ``folder``) as one program, their imports of each other
    removed (each must be relative and marked :data:`INLINED`)."""
    import ast

    parts = []
    for name in modules:
        text = (folder / name).read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.parse(text).body:
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("rewardsmith.")):
                if not node.level or INLINED not in lines[node.lineno - 1]:
                    raise ValueError(f"{name} line {node.lineno}: an import of rewardsmith, or of a sibling "
                                     f"not relative and marked {INLINED!r}")
                for k in range(node.lineno - 1, node.end_lineno or node.lineno):
                    lines[k] = ""
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def bootstrap(source: str, name: str) -> str:
    """A ``python -c`` program that runs ``source`` without compiling it when it can.

    Compiling a program of a few hundred lines costs about 10 ms per job; its bytecode (marshal,
    compressed) loads in a fraction of a millisecond. Bytecode is only valid for the interpreter
    that made it, so the program checks the sandbox's cache tag and compiles the (compressed)
    source otherwise: an image with another Python still works.
    """
    import base64
    import marshal
    import sys
    import zlib

    code = base64.b64encode(zlib.compress(marshal.dumps(compile(source, name, "exec")), 9)).decode()
    text = base64.b64encode(zlib.compress(source.encode("utf-8"), 9)).decode()
    return (
        "import sys, zlib, marshal, binascii\n"
        f"if sys.implementation.cache_tag == {sys.implementation.cache_tag!r}:\n"
        f"    _c = marshal.loads(zlib.decompress(binascii.a2b_base64({code!r})))\n"
        "else:\n"
        f"    _c = compile(zlib.decompress(binascii.a2b_base64({text!r})), {name!r}, 'exec')\n"
        "exec(_c)\n"
    )
