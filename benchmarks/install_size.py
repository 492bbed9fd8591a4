"""The size of the environment each install command of the README creates: before (the
quick start installed ``[all]``) and after (it installs ``[suite]``, what the main job uses).

By default the sizes come from this environment: for each extra, the closure of
distributions it pulls in (following ``Requires-Dist`` with their extras and markers, as
pip resolves them) and, for each distribution, the bytes of the files its RECORD lists.
That is what a fresh virtual environment holds after the same install, minus pip itself,
with the versions installed here. ``--fresh`` instead creates one new virtual environment
per extra, runs ``pip install`` in it (through the package index pip is configured with:
slow, and needs the network) and measures its ``site-packages``.

    .venv/bin/python benchmarks/install_size.py [--fresh] [--top 8]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
# (label, extras): the README's commands before and after issue 16
INSTALLS = [
    ("before: quick start '.[all]'", ("all",)),
    ("after: quick start '.[suite]'", ("suite",)),
    ("after: API only '.'", ()),
    ("after: tests '.[all,dev]'", ("all", "dev")),
]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def closure(root: str, extras: tuple[str, ...]) -> dict[str, metadata.Distribution]:
    """Every installed distribution ``root[extras]`` requires, transitively (a requirement
    counts when its marker holds for one of the extras asked of its distribution)."""
    found: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    todo = [(root, e) for e in ("", *extras)]
    env = default_environment()
    while todo:
        name, extra = todo.pop()
        if (_norm(name), extra) in done or (dist := _dist(name)) is None:
            continue
        done.add((_norm(name), extra))
        found[_norm(dist.metadata["Name"])] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({**env, "extra": extra}):
                todo.extend((req.name, e) for e in ("", *req.extras))
    return found


def dist_bytes(dist: metadata.Distribution) -> int:
    total = 0
    for f in dist.files or []:
        try:
            total += dist.locate_file(f).stat().st_size
        except OSError:
            pass
    return total


def from_this_environment(top: int) -> None:
    print(f"{'install':<32} {'packages':>8} {'size':>9}   largest")
    for label, extras in INSTALLS:
        dists = closure("privet", extras)
        sizes = sorted(((dist_bytes(d), d.metadata["Name"]) for k, d in dists.items()
                        if k != "privet"), reverse=True)
        total = sum(s for s, _ in sizes)
        largest = ", ".join(f"{n} {s / 2**20:.0f}" for s, n in sizes[:top])
        print(f"{label:<32} {len(sizes):>8} {total / 2**20:>6.0f} MB   {largest} (MB)")


def fresh(top: int) -> None:
    print(f"{'install':<32} {'site-packages':>13}")
    for label, extras in INSTALLS:
        with tempfile.TemporaryDirectory(prefix="privet-size-") as tmp:
            venv = Path(tmp) / "venv"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            spec = f"{ROOT}[{','.join(extras)}]" if extras else str(ROOT)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", spec], check=True)
            site = next(venv.glob("lib/python*/site-packages"))
            size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
            print(f"{label:<32} {size / 2**20:>10.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fresh", action="store_true",
                    help="measure real fresh environments (pip install; slow, network)")
    ap.add_argument("--top", type=int, default=6, help="largest packages to name (default 6)")
    opts = ap.parse_args()
    (fresh if opts.fresh else from_this_environment)(opts.top)


if __name__ == "__main__":
    main()
