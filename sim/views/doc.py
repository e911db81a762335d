"""A view, declared once: its controls, presets and tools for both hosts; and the document model, the blocks every
renderer draws.

    VIEW = View("wasted", "Wasted groups", intro=Text("If a prompt is solved ..."),
                controls=(Num.of(Prompt, "p"), Num.of(ToyConfig, "group_size", hi=64)))

A view the browser computes (One group, Training dynamics, Wasted groups, Std scaling, pass@k, KL and clipping)
has its document written once, in JavaScript (assets/js/views.js), and drawn by one renderer (assets/js/doc.js) in
the app's component (ui/view.py) and in a lesson's page alike. A document sim computes (TinyLM's recorded runs, a
visitor's log or pool, the lab's tasks) is built here from these blocks and drawn by the same renderer, as plain
data (`to_json`). Every text is plain text: a renderer shows it as text, never as markup; our own nicer rendition
of a text (**bold**, `code`, $math$) or a formula (LaTeX, typeset by KaTeX) is declared beside it (`md`, `latex`).

Blocks (`to_json` is what a renderer receives):
  Heading(text, level)               a section's heading (level 2), or a part's (3)
  Text(text, md=None)                a paragraph; `md`: our own short Markdown for it (**bold**, `code`, $math$)
  Text.of(md)                        the same, written once: the plain text is the Markdown without its marks
  Formula(latex, text)               an equation: KaTeX of the LaTeX, the plain text where that cannot be drawn
  Caption(text, given)               small print under a chart or a table (`given`: its numbers that no chart
                                     above it draws, for a caption right under a row of charts)
  Metrics([(label, value, delta?)])  a row of numbers, already formatted
  Charts(key, charts, columns, T)    charts of the one chart spec (sim/player/spec.py), drawn whole (or played
                                     over T iterations by the player)
  Table(key, columns, rows, title)   a small table; cells are numbers or text
  Note(text, tone)                   a boxed remark: "info", "success", "warning" or "error"
  Code(text, label)                  text to copy (a command, a signature), with a Copy button
  Columns([blocks, blocks])          side by side (stacked on a narrow screen)
  Live(key, request)                 a part the browser computes with the toy engine (assets/js/live.js)
  Link(page, label, what, ...)       a link to another page (a lesson names one it lacks as in the app only)
  Links([Link, ...])                 links as a list
  Verdict(comparison, what, task)    a student's lab function against the reference (the app only, lab mode)
  Finding(status, title, rule, ...)  a rule checked on a visitor's log: its status, the rule, the steps where it
                                     holds, the chapter's reading and what to do (Your run)
  Fold(key, summary, blocks)         blocks folded under a line that opens them (a `details`)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sim.player import build_payload
from sim.player.spec import Chart
from sim.views.controls import Spec, defaults
from sim.views.controls import to_json as control_json


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2  # 2: a section; 3: a part of one


@dataclass(frozen=True)
class Text:
    text: str
    md: str | None = None  # the app's rendition (Markdown, $math$); None: the text itself

    @classmethod
    def of(cls, md: str) -> Text:
        """A paragraph written once, in our Markdown: its plain text is the same words without the marks (a $math$
        that is more than letters and signs, such as \\sigma, needs its plain text written: Text(text, md=...))."""
        return cls(re.sub(r"\$([^$]*)\$", r"\1", md.replace("**", "").replace("`", "")), md)


@dataclass(frozen=True)
class Formula:
    latex: str
    text: str


@dataclass(frozen=True)
class Caption:
    text: str
    given: Sequence[str] = ()  # numbers it gives that no chart above it draws (a setting, a count of the file)


@dataclass(frozen=True)
class Metrics:
    items: Sequence[tuple]  # (label, value) or (label, value, delta): text, formatted by the view


@dataclass(frozen=True)
class Charts:
    key: str
    charts: Sequence[Chart]
    columns: int = 1
    T: int = 1  # > 1: charts over a run's iterations, with the player's Play bar (a recorded run replayed)


@dataclass(frozen=True)
class Table:
    key: str
    columns: Sequence[str]
    rows: Sequence[Sequence]  # cells: numbers (already rounded) or text
    title: str | None = None


@dataclass(frozen=True)
class Note:
    text: str
    tone: str = "info"  # "info", "success", "warning", "error"


@dataclass(frozen=True)
class Code:
    text: str
    label: str = "Copy"


@dataclass(frozen=True)
class Columns:
    columns: Sequence[Sequence]


@dataclass(frozen=True)
class Live:
    key: str
    request: Mapping  # {"view": what assets/js/view_runs.js computes, "config": the config's fields, ...}


@dataclass(frozen=True)
class Link:
    """A link to another page of the playground, in either host: the app's /NAME, a lesson's NAME.html (a page the
    lesson does not have is named as text, with "in the app only"). The page's flags (presenter mode) are kept."""

    page: str  # the view's name (sim/views/catalog.py), e.g. "your_prompts"
    label: str
    what: str = ""  # words after the link
    before: str = ""  # words before it
    query: Mapping[str, str] | None = None  # the link's own flags, e.g. {"predict": "1"}
    also: Sequence[tuple[str, Mapping[str, str]]] = ()  # more links to the same page on the line: (label, query)


@dataclass(frozen=True)
class Links:
    """Links as a list (the pages, the chapter's exercises)."""

    links: Sequence[Link]


@dataclass(frozen=True)
class Verdict:
    comparison: object  # sim.lab.runner.Comparison
    what: str
    lab: object = None  # the Lab: its check names the mistake
    task: str | None = None


@dataclass(frozen=True)
class Finding:
    """A rule checked on a visitor's log (sim/yourdata/rules: Finding), as the page shows it. Every text is plain:
    a finding quotes what the file holds (a reward function's name)."""

    status: str  # "warn" (holds; act), "info" (holds; a fact), "ok" (does not hold), "unknown" (not judged)
    title: str
    rule: str
    steps: str = ""  # where it holds, as step ranges ("" where it does not)
    reading: str = ""
    remedy: str = ""


@dataclass(frozen=True)
class Fold:
    """Blocks folded under one line that opens them (the findings that do not hold, a long list of prompts)."""

    key: str  # the fold keeps its state (open or not) across settings under this key
    summary: str
    blocks: Sequence
    open: bool = False


Block = (Heading | Text | Formula | Caption | Metrics | Charts | Table | Note | Code | Columns | Live | Link | Links
         | Verdict | Finding | Fold)
APP_ONLY = (Verdict, Finding, Fold)  # blocks a lesson leaves out: they need the app's server (a visitor's file)


@dataclass(frozen=True)
class View:
    """One view of the playground: what both hosts read to draw it.

    name        the app's page (pages/NAME.py, /NAME) and the lesson's file (NAME.html)
    title       the page's heading, in both hosts
    intro       the text under the title (`fold_intro`: under "What this page shows", so the charts come first)
    controls    the settings' controls, in order (sim/views/controls.py), each a declared setting
    presets     name -> the settings it changes, by URL key (the rest go back to their defaults)
    tools       the page's buttons beside its document: "pin" and "new_seed" (both hosts), "exports" (the app)
    what        one line for the contents (the app's home, the lesson's index)
    lesson      how a lesson has it: "page" (computed in the page, assets/js/views.js), "recorded" (the document
                `show()` computes when the lesson is built) or "app" (the app only: it needs a visitor's file or the
                server; `why_app_only` says which)
    show        for a recorded view: values (by URL key) -> its document, computed by sim
    data        for a view computed in the page: what sim reads for its document (TinyLM's records), as plain JSON
                (both hosts give it to the page: ctx.data)
    trainer     its document has a trainer (TinyLM's run in the page): the host loads the trainer's script
    server      in the app, its document is the server's, computed for the setting the page reports (a visitor's file,
                the lab's checks: ui/view.py show_view `document`)
    """

    name: str
    title: str
    intro: Text | None = None
    controls: Sequence[Spec] = ()
    show: Callable | None = None
    presets: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    what: str = ""
    lesson: str = "page"
    fold_intro: bool = False
    why_app_only: str = ""  # for lesson "app": why (the lesson's contents page says so)
    tools: Sequence[str] = ()
    data: Callable | None = None
    trainer: bool = False
    server: bool = False

    def __post_init__(self):
        keys = [c.key for c in self.controls]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.name}: two controls share a URL key: {keys}")
        if self.lesson not in ("page", "recorded", "app"):
            raise ValueError(f"{self.name}: lesson must be page, recorded or app, got {self.lesson!r}")
        if (self.lesson == "recorded") != (self.show is not None):
            raise ValueError(f"{self.name}: a recorded view, and only one, has a show() that computes its document")
        unknown_tools = set(self.tools) - {"pin", "new_seed", "exports"}
        if unknown_tools:
            raise ValueError(f"{self.name}: unknown tools {sorted(unknown_tools)}")
        for name, changes in self.presets.items():
            unknown = set(changes) - set(keys)
            if unknown:
                raise ValueError(f"{self.name}: preset {name!r} sets {sorted(unknown)}, which are not its controls")

    def defaults(self) -> dict[str, object]:
        return defaults(self.controls)

    def document(self, values: Mapping[str, object] | None = None, **host) -> list:
        """A recorded view's show() at these values (the others at their defaults)."""
        return self.show({**self.defaults(), **(values or {})}, **host)

    def manifest(self) -> dict:
        """What a page in the browser holds of the view: its title, intro, controls, presets and tools (no data)."""
        intro = self.intro
        return {"view": self.name, "title": self.title, "intro": None if intro is None else intro.text,
                "intro_md": None if intro is None else intro.md, "fold_intro": self.fold_intro,
                "controls": [control_json(c) for c in self.controls], "tools": list(self.tools),
                "trainer": self.trainer, "server": self.server,
                "presets": [{"name": n, "values": dict(v)} for n, v in self.presets.items()]}


# ---- the document as data (what a renderer receives) ----

def to_json(blocks: Sequence, *, host: str = "lesson", charts: Callable | None = None) -> list[dict]:
    """The blocks as plain data, for a renderer: `host` "lesson" leaves out what only the app has (Verdict),
    "app" keeps them (a Verdict as its coloured line and messages). `charts(block)` turns a Charts block into its
    payload (default: sim/player's build_payload, arrays base64 float32)."""
    out = []
    for b in blocks:
        if isinstance(b, APP_ONLY) and host != "app":
            continue
        if isinstance(b, Charts):
            payload = (charts or chart_payload)(b)
            out.append({"kind": "charts", "key": b.key, "payload": payload})
        elif isinstance(b, Columns):
            out.append({"kind": "columns", "columns": [to_json(c, host=host, charts=charts) for c in b.columns]})
        elif isinstance(b, Fold):
            out.append({"kind": "fold", "key": b.key, "summary": b.summary, "open": b.open,
                        "blocks": to_json(b.blocks, host=host, charts=charts)})
        elif isinstance(b, Caption):
            out.append({"kind": "caption", "text": b.text, **({"given": [str(g) for g in b.given]} if b.given else {})})
        elif isinstance(b, Metrics):
            out.append({"kind": "metrics", "items": [[str(x) for x in item] for item in b.items]})
        elif isinstance(b, Table):
            out.append({"kind": "table", "key": b.key, "title": b.title, "columns": [str(c) for c in b.columns],
                        "rows": [[_cell(c) for c in row] for row in b.rows]})
        elif isinstance(b, Live):
            out.append({"kind": "live", "key": b.key, "request": dict(b.request)})
        elif isinstance(b, Text):
            out.append({"kind": "text", "text": b.text, "md": b.md})
        elif isinstance(b, Formula):
            out.append({"kind": "formula", "latex": b.latex, "text": b.text})
        elif isinstance(b, Link):
            out.append(link_json(b))
        elif isinstance(b, Links):
            out.append({"kind": "links", "items": [link_json(x) for x in b.links]})
        elif isinstance(b, Verdict):
            out.append(verdict_json(b))
        else:
            out.append({"kind": type(b).__name__.lower(), **{k: v for k, v in vars(b).items()}})
    return out


def link_json(b: Link) -> dict:
    return {"kind": "link", "page": b.page, "label": b.label, "what": b.what, "before": b.before,
            "query": dict(b.query or {}), "also": [[label, dict(q)] for label, q in b.also]}


def verdict_json(v: Verdict) -> dict:
    """A student's value against the reference, as the renderer shows it: matches (green), could not be compared
    (red), differs (amber; with what the lab's check for the task says, which names the common mistakes). Every
    message is plain text from the student's run."""
    c = v.comparison
    if c.ok:
        return {"kind": "verdict", "tone": "success", "title": f"Your {v.what} matches the reference.", "message": ""}
    if c.error is not None:
        return {"kind": "verdict", "tone": "error", "title": f"Your {v.what} could not be compared ({c.error.kind}):",
                "message": c.message}
    check = ""
    if v.lab is not None and v.task is not None:
        result = v.lab.check(v.task)
        if not result.passed:
            check = "What the lab's check for this task says:\n" + result.message
    return {"kind": "verdict", "tone": "warning", "title": f"Your {v.what} differs from the reference:",
            "message": c.message, "check": check}


def chart_payload(b: Charts) -> dict:
    return build_payload(b.key, T=b.T, charts=b.charts, columns=b.columns, bar=b.T > 1)


def _cell(c):
    if isinstance(c, bool) or c is None:
        return str(c)
    if isinstance(c, (int, float)):
        return c
    return str(c)


