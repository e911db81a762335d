"""The lesson's HTML: a contents page and one page per view. Every text is escaped; the manifest and a recorded
view's document travel as inline JSON that no browser parses as markup (`<` is written as \\u003c)."""

from __future__ import annotations

import json
from html import escape

HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{title} · GRPO Playground lesson</title>
<link rel="stylesheet" href="player.css">
<link rel="stylesheet" href="doc.css">
<link rel="stylesheet" href="lesson.css">
<link rel="stylesheet" href="{katex_css}">
</head>
"""


def inline_json(obj) -> str:
    """JSON for a <script type="application/json">: no '<' can end the script or open a tag."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")


def head(title: str) -> str:
    from sim.player.katex import KATEX_CSS_NAME

    return HEAD.format(title=escape(title), katex_css=KATEX_CSS_NAME)


def view_page(manifest: dict, data: list | dict | None = None) -> str:
    """A view: its title, then the page the lesson's script draws into #ls-page with the app's own renderer
    (assets/js/page.js: the intro, the settings beside the view, the document computed in the page for the setting
    the controls hold, assets/js/views.js), or a recorded view's document from `data` (the document sim computed
    when the lesson was built, parsed, never run); for a view computed in the page, `data` is what sim read for its
    document (TinyLM's records), parsed as JSON, never run."""
    from sim.player.katex import KATEX_JS_NAME

    block = "" if data is None else f'<script type="application/json" id="ls-data">{inline_json(data)}</script>\n'
    return head(manifest["title"]) + f"""<body>
<main>
<nav class="ls-nav"><a href="index.html">← All views of this lesson</a></nav>
<h1>{escape(manifest["title"])}</h1>
<div id="ls-error" class="ls-error" role="alert" hidden></div>
<div id="ls-page"></div>
<noscript><p class="ls-error">This lesson draws its views with JavaScript: turn it on to see them.</p></noscript>
</main>
<script type="application/json" id="lesson-manifest">{inline_json(manifest)}</script>
{block}<script src="{KATEX_JS_NAME}"></script>
<script src="lesson.js"></script>
</body>
</html>
"""


def contents_page(data: list, pages: list[str]) -> str:
    """The contents page: the front page's document (sim/views/home.py, as the app's home shows it), drawn by the
    lesson's script with the renderer every page uses; `pages`: the views this lesson has a page for (a link to
    another is named as text, "in the app only")."""
    from sim.player.katex import KATEX_JS_NAME

    title = "GRPO Playground: a lesson"
    manifest = {"kind": "contents", "title": title, "pages": list(pages)}
    return head("Contents") + f"""<body>
<main>
<h1>{escape(title)}</h1>
<div id="ls-error" class="ls-error" role="alert" hidden></div>
<div id="ls-page"></div>
<noscript><p class="ls-error">This lesson draws its pages with JavaScript: turn it on to see them.</p></noscript>
</main>
<script type="application/json" id="lesson-manifest">{inline_json(manifest)}</script>
<script type="application/json" id="ls-data">{inline_json(data)}</script>
<script src="{KATEX_JS_NAME}"></script>
<script src="lesson.js"></script>
</body>
</html>
"""
