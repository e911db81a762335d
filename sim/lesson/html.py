"""The lesson's HTML: a contents page and one page per view. Every text is escaped; the manifest travels as
inline JSON that no browser parses as markup (`<` is written as \\u003c)."""

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
<link rel="stylesheet" href="lesson.css">
</head>
"""


def inline_json(obj) -> str:
    """JSON for a <script type="application/json">: no '<' can end the script or open a tag."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")


def view_page(title: str, intro: str, manifest: dict, blocks: dict[str, str]) -> str:
    """A view: controls, presets, the player; lesson.js fills them from the manifest and from `blocks`, each
    setting's data as inline JSON (by setting id; the text already inline_json's), which the page parses and
    never runs."""
    data = "\n".join(f'<script type="application/json" id="ls-data-{escape(sid)}">{text}</script>'
                     for sid, text in blocks.items())
    return HEAD.format(title=escape(title)) + f"""<body>
<main>
<nav class="ls-nav"><a href="index.html">← All views of this lesson</a></nav>
<h1>{escape(title)}</h1>
<p class="ls-intro">{escape(intro)}</p>
<div id="ls-note" class="ls-note" role="status" hidden></div>
<form id="ls-controls" class="ls-controls" onsubmit="return false"></form>
<div id="ls-presets" hidden></div>
<p id="ls-above" class="ls-text"></p>
<div id="ls-predict" hidden></div>
<div id="ls-error" class="ls-error" role="alert" hidden></div>
<div id="ls-player"></div>
<div id="ls-figures"></div>
<p id="ls-below" class="ls-caption"></p>
<div id="ls-tables"></div>
<noscript><p class="ls-error">This lesson needs JavaScript to play its charts.</p></noscript>
</main>
<script type="application/json" id="lesson-manifest">{inline_json(manifest)}</script>
{data}
<script src="player.js"></script>
<script src="lesson.js"></script>
</body>
</html>
"""


def live_page(title: str, intro: str, manifest: dict, fold_intro: bool = False) -> str:
    """A live view: its controls and presets in a column beside the view, which live.js computes in the page for
    the setting they take (the manifest: sim/lesson/views.live_view). fold_intro: the intro in a <details>, so the
    charts come first (as the app's page folds it)."""
    about = (f'<details class="ls-about"><summary>What this page shows</summary><p class="ls-intro">{escape(intro)}'
             f"</p></details>" if fold_intro else f'<p class="ls-intro">{escape(intro)}</p>')
    return HEAD.format(title=escape(title)) + f"""<body>
<main>
<nav class="ls-nav"><a href="index.html">← All views of this lesson</a></nav>
<h1>{escape(title)}</h1>
{about}
<div id="ls-note" class="ls-note" role="status" hidden></div>
<div class="ls-layout">
<aside class="ls-side" aria-label="Settings">
<h2 class="ls-side-title">Settings</h2>
<form id="ls-controls" class="ls-controls" onsubmit="return false"></form>
<div id="ls-presets" hidden></div>
</aside>
<div class="ls-view">
<div id="ls-error" class="ls-error" role="alert" hidden></div>
<div id="ls-live"></div>
<div id="ls-tables"></div>
</div>
</div>
<noscript><p class="ls-error">This lesson computes its charts with JavaScript: turn it on to see them.</p></noscript>
</main>
<script type="application/json" id="lesson-manifest">{inline_json(manifest)}</script>
<script src="live.js"></script>
</body>
</html>
"""


def index_page(views: list[dict], summary: str) -> str:
    """The contents page: each view with what it shows and whether it is live or recorded."""
    items = "\n".join(
        f'<li><a href="{escape(v["file"])}">{escape(v["title"])}</a><span class="ls-tag">{escape(v["tag"])}</span>'
        f'<p class="ls-caption">{escape(v["what"])}</p></li>'
        for v in views
    )
    return HEAD.format(title="Contents") + f"""<body>
<main>
<h1>GRPO Playground: a lesson</h1>
<p class="ls-intro">GRPO (Group Relative Policy Optimization) trains a model on problems with checkable answers:
sample G answers per prompt, score each with a verifier, turn the rewards into advantages relative to the group
(A = (r − mean) / std), and take a policy-gradient step. A group whose answers all get the same reward teaches
nothing. These views accompany Chapter 15, “RL with verifiable rewards: reasoning models and GRPO”.</p>
<p class="ls-caption">A static edition of the GRPO Playground app: the simulator's toy engines run in your browser
(the same runs as the app's for the same setting), the other views were computed ahead of time; this folder holds
everything it needs and works offline. {escape(summary)}</p>
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
