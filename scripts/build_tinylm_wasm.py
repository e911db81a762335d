"""Build TinyLM's WebAssembly kernels: assets/wasm/tinylm_kernels.c -> assets/js/tinylm_wasm.js (base64 in a module).

    python scripts/build_tinylm_wasm.py            # rebuild (needs clang and wasm-ld: apt-get install clang lld)
    python scripts/build_tinylm_wasm.py --check    # exit 1 if the committed module is not this source's build

A page opened from file:// cannot fetch a .wasm file, so the bytes travel inside a JavaScript module, with the
SHA-256 of the source they were built from and the compiler that built them. tests/test_tinylm_js.py checks the
hash against the source always, and the bytes against a fresh build where the same clang is installed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "assets" / "wasm" / "tinylm_kernels.c"
MODULE = ROOT / "assets" / "js" / "tinylm_wasm.js"
FLAGS = ["--target=wasm32", "-O3", "-msimd128", "-nostdlib", "-ffreestanding", "-Wl,--no-entry",
         "-Wl,--import-memory", "-Wl,-z,stack-size=16384", "-Wl,--export=__heap_base", "-Wl,--strip-all"]


class BuildError(Exception):
    pass


def source_hash(path: Path = SOURCE) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compiler() -> str:
    """The clang that builds here, as its first --version line; BuildError without clang or wasm-ld."""
    clang = shutil.which("clang")
    if clang is None or shutil.which("wasm-ld") is None:
        raise BuildError("clang and wasm-ld are needed: apt-get install clang lld")
    return subprocess.run([clang, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def build(source: Path = SOURCE) -> bytes:
    """The .wasm bytes of `source` (the source is copied first so no path of this machine enters the build)."""
    compiler()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "kernels.c", Path(tmp) / "kernels.wasm"
        shutil.copyfile(source, src)
        done = subprocess.run(["clang", *FLAGS, "-o", str(out), str(src)], capture_output=True, text=True, cwd=tmp)
        if done.returncode != 0:
            raise BuildError(f"clang failed:\n{done.stderr[-3000:]}")
        return out.read_bytes()


def module_text(wasm: bytes, sha: str, built_by: str) -> str:
    b64 = base64.b64encode(wasm).decode()
    return ("// TinyLM's WebAssembly kernels (assets/wasm/tinylm_kernels.c), as base64: a page opened from file://\n"
            "// cannot fetch a .wasm file. Written by `python scripts/build_tinylm_wasm.py`; do not edit.\n"
            f"export const WASM_SOURCE_SHA256 = \"{sha}\";\n"
            f"export const WASM_BUILT_BY = \"{built_by}\";\n"
            f"export const WASM_BASE64 = \"{b64}\";\n")


def committed() -> dict:
    """{sha, built_by, wasm} of the committed module."""
    text = MODULE.read_text(encoding="utf-8")
    get = {k: re.search(rf'export const {k} = "([^"]*)";', text).group(1)
           for k in ("WASM_SOURCE_SHA256", "WASM_BUILT_BY", "WASM_BASE64")}
    return {"sha": get["WASM_SOURCE_SHA256"], "built_by": get["WASM_BUILT_BY"],
            "wasm": base64.b64decode(get["WASM_BASE64"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if the committed module is not this source's build")
    a = p.parse_args(argv)
    try:
        built_by = compiler()
        wasm = build()
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = module_text(wasm, source_hash(), built_by)
    if a.check:
        if not MODULE.exists() or MODULE.read_text(encoding="utf-8") != text:
            print(f"error: {MODULE.relative_to(ROOT)} is not the build of {SOURCE.relative_to(ROOT)} "
                  f"({built_by}): run python scripts/build_tinylm_wasm.py", file=sys.stderr)
            return 1
        return 0
    MODULE.write_text(text, encoding="utf-8")
    print(f"wrote {MODULE.relative_to(ROOT)}: {len(wasm):,} bytes of wasm ({built_by})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
