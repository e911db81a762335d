"""The docs a newcomer reads: README.md is a front page, and every relative link (and its anchor) in README.md and
docs/*.md resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)|<img [^>]*src=\"([^\"]+)\"")


def prose(path: Path) -> str:
    """A Markdown file without its fenced code blocks (a `# comment` there is no heading, a `[x](y)` no link)."""
    return re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in prose(path).splitlines():
        if m := re.match(r"#{1,6} (.+)", line):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    return out


def links(path: Path) -> list[str]:
    return [next(g for g in m.groups() if g) for m in LINK.finditer(prose(path))]


def test_the_checker_sees_links_images_and_anchors(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# A title, here\n\n[x](b.md#part-two) ![p](pic.png) <img src=\"y.png\">\n```bash\n# no heading\n"
                   "[no](link.md)\n```\n")
    assert links(doc) == ["b.md#part-two", "pic.png", "y.png"] and anchors(doc) == {"a-title-here"}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(doc):
    broken = []
    for target in links(doc):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not ours to check (the tests never touch the network)
            continue
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(target)
    assert broken == [], f"{doc.name}: links that do not resolve: {broken}"


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "nothing dated in the README: figures live in docs/"
    assert "bash scripts/test.sh" in text and "assets/img/screenshot-training.png" in text
