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


def index_page(views: list[dict], summary: str, exercises: list[dict] = ()) -> str:
    """The contents page: the chapter's exercises and lab tasks, each with the page that works it and, where the page
    asks it first, its question-mode link (?predict=1); then each view with what it shows and how this lesson has it
    (computed in your browser, recorded, or in the app only: no link, and why)."""
    def item(v: dict) -> str:
        name = (f'<a class="ls-carry" href="{escape(v["file"])}">{escape(v["title"])}</a>' if v["file"] else
                f'<span class="ls-app-only">{escape(v["title"])}</span>')
        return (f'<li>{name}<span class="ls-tag">{escape(v["tag"])}</span>'
                f'<p class="ls-caption">{escape(v["what"])}</p></li>')

    def row(e: dict) -> str:
        where = (f'<a class="ls-carry" href="{escape(e["file"])}">{escape(e["title"])}</a>' if e["file"] else
                 f'{escape(e["title"])} <span class="ls-tag">(in the app only)</span>')
        asked = e["file"] and e["question"]
        ask = f'<a class="ls-carry" href="{escape(e["file"])}?predict=1">as a question</a>' if asked else ""
        return (f'<tr><td><strong>{escape(e["item"])}</strong>: {escape(e["task"])}</td><td>{where}</td>'
                f"<td>{ask}</td></tr>")

    items = "\n".join(item(v) for v in views)
    rows = "\n".join(row(e) for e in exercises)
    workbook = "" if not exercises else f"""<h2>The chapter's exercises and lab tasks</h2>
<p class="ls-caption">Each item of the chapter, the page that works it, and the same page as a question first (the
answer and its chart appear once you have guessed).</p>
<table class="ls-exercises">
<thead><tr><th>exercise</th><th>page</th><th>question first</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
"""
    return head("Contents") + f"""<body>
<main>
<h1>GRPO Playground: a lesson</h1>
<p class="ls-intro">GRPO (Group Relative Policy Optimization) trains a model on problems with checkable answers:
sample G answers per prompt, score each with a verifier, turn the rewards into advantages relative to the group
(A = (r − mean) / std), and take a policy-gradient step. A group whose answers all get the same reward teaches
nothing. These views accompany Chapter 15, “RL with verifiable rewards: reasoning models and GRPO”.</p>
<p class="ls-caption">A static edition of the GRPO Playground app: the same views, controls, charts and words, drawn
by the same code; each view computes in your browser (the same numbers as the app's for the same setting), TinyLM's
runs were recorded; this folder holds everything it needs and works offline. {escape(summary)}</p>
{workbook}<h2>The views</h2>
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
