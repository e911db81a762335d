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


def view_page(manifest: dict, data: list | None = None) -> str:
    """A view: its title, then the page the lesson's script draws into #ls-page with the app's own renderer
    (assets/js/page.js: the intro, the settings beside the view, the document computed in the page for the setting
    the controls hold, assets/js/views.js), or a recorded view's document from `data` (the document sim computed
    when the lesson was built, parsed, never run)."""
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


def index_page(views: list[dict], summary: str) -> str:
    """The contents page: each view with what it shows and how this lesson has it (computed in your browser,
    recorded, or in the app only: no link, and why)."""
    def item(v: dict) -> str:
        name = (f'<a href="{escape(v["file"])}">{escape(v["title"])}</a>' if v["file"] else
                f'<span class="ls-app-only">{escape(v["title"])}</span>')
        return (f'<li>{name}<span class="ls-tag">{escape(v["tag"])}</span>'
                f'<p class="ls-caption">{escape(v["what"])}</p></li>')

    items = "\n".join(item(v) for v in views)
    return head("Contents") + f"""<body>
<main>
<h1>GRPO Playground: a lesson</h1>
<p class="ls-intro">GRPO (Group Relative Policy Optimization) trains a model on problems with checkable answers:
sample G answers per prompt, score each with a verifier, turn the rewards into advantages relative to the group
(A = (r − mean) / std), and take a policy-gradient step. A group whose answers all get the same reward teaches
nothing. These views accompany Chapter 15, “RL with verifiable rewards: reasoning models and GRPO”.</p>
<p class="ls-caption">A static edition of the GRPO Playground app: the same views, controls, charts and words; each
view computes in your browser (the same numbers as the app's for the same setting), TinyLM's runs were recorded; this
folder holds everything it needs and works offline. {escape(summary)}</p>
<ul class="ls-views">
{items}
</ul>
<p class="ls-caption">Links keep the settings (copy the address bar). Add ?classroom=1 for presenter sizes,
?hide=G,beta to hide controls, ?predict=1 to ask before the answer is shown.</p>
</main>
<script src="lesson.js"></script>
</body>
</html>
"""
